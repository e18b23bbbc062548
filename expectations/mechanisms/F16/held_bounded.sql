-- explains: exactly_once_output.bounded_output_complete
-- F16 on a bounded run that finished: a split S still lost to F16 when the job finishes (a span of
-- _held_spans.sql, the hold or a global restore that carried it on, open at the history's `job_finished`) is read by
-- no reader while the enumerator counts it assigned, so nothing asks for it again and the job ends without its
-- unread records. The rule's row about S is F16's when it is a loss only: S's committed ranges (rc_commits), if any,
-- neither overlap nor pass the split's end. A split committed twice, or one not lost at the end, is not F16's doing.
WITH RECURSIVE
-- include: _held_spans.sql
,
finished AS (
  SELECT run_id, min(seq) AS seq FROM rc_events WHERE kind = 'job_finished' GROUP BY run_id
),
lost_at_end AS (
  SELECT DISTINCT s.run_id, s.split
  FROM (SELECT DISTINCT * FROM spans) s
  JOIN finished f ON f.run_id = s.run_id AND s.start_seq < f.seq AND s.end_seq > f.seq
),
-- include: _excess_commits.sql
SELECT DISTINCT l.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, l.split
FROM lost_at_end l
JOIN {batch} r ON r.run_id = l.run_id AND r.bounded AND r.job_finished
LEFT ANTI JOIN excess x ON x.run_id = l.run_id AND x.split = l.split
