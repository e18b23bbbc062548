-- explains: exactly_once_output.bounded_output_complete
-- F15 on a bounded run that finished: a split S lost in a REGIONAL checkpoint N's fallback state
-- (_lost_at_fallback.sql) stays lost when the job last restored from a checkpoint C >= N in which S is lost too (C's
-- coordinator state counts S assigned and no source entry of C holds it: lost_in) and S was not assigned again from
-- that restore to the job's end: the enumerator counts S assigned, no reader has it, and the job finishes without its
-- unread records. The rule's row about S is F15's when it is a loss only (no record committed twice or past the
-- split's end, _excess_commits.sql); one about a split the last restore gave back, or assigned again, is not.
WITH
-- include: _lost_at_fallback.sql
,
-- include: _lost_split_carried.sql
finished AS (
  SELECT run_id, min(seq) AS seq FROM rc_events WHERE kind = 'job_finished' GROUP BY run_id
),
last_restore AS (  -- the last restart of the whole job before it finished
  SELECT g.run_id, max_by(g.restore_from, g.seq) AS restore_from, max(g.seq) AS seq
  FROM rc_events g JOIN finished f ON f.run_id = g.run_id AND g.seq < f.seq
  WHERE g.kind IN ('global_restore', 'global_restart_from_scratch')
  GROUP BY g.run_id
),
gone AS (
  SELECT DISTINCT l.run_id, l.split
  FROM lost l
  JOIN last_restore x ON x.run_id = l.run_id AND x.restore_from >= l.checkpoint_id
  JOIN lost_in li ON li.run_id = l.run_id AND li.checkpoint_id = x.restore_from AND li.split = l.split
  JOIN finished f ON f.run_id = l.run_id
  LEFT ANTI JOIN rc_events a ON a.run_id = l.run_id AND a.kind IN ('split_assigned', 'split_held')
                            AND a.split = l.split AND a.seq > x.seq AND a.seq < f.seq
),
-- include: _excess_commits.sql
SELECT DISTINCT g.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, g.split
FROM gone g
JOIN {batch} r ON r.run_id = g.run_id AND r.bounded AND r.job_finished
LEFT ANTI JOIN excess x ON x.run_id = g.run_id AND x.split = g.split
