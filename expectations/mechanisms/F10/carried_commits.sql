-- explains: exactly_once_output.commit_within_checkpoint
-- F10 carried on (carried.sql, _carried_spans.sql), in the output: while split S has two readers (a span of S in
-- which it was assigned again, or one a global restore carried on: `twice`), both sinks commit S's records upon the
-- checkpoints they are told of, and a checkpoint's sink entries hold S's state for one of them only. A commit of S
-- delivered in such a span (the `notified` event of its commit file), or upon a checkpoint triggered in one, is
-- F10's: it may run past what the checkpoint's entries hold for S. (The model keeps one progress per split, `Dataflow.assign`: the second reader's
-- sink commits the transactions the first one pre-committed too, FINDINGS.md F10.) A commit of another split, or
-- delivered and upon a checkpoint triggered outside such spans of S, is not.
WITH RECURSIVE
-- include: _hand_back.sql
-- include: _refreshed.sql
-- include: _carried_spans.sql
,
delivered AS (  -- each commit file's delivery
  SELECT run_id, get_json_object(detail, '$.commit_file') AS commit_file, seq FROM rc_events WHERE kind = 'notified'
)
SELECT DISTINCT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, NULL AS subtask,
       'sink' AS operator, c.split
FROM twice s
JOIN rc_commits c ON c.run_id = s.run_id AND c.split = s.split
JOIN rc_checkpoints m ON m.run_id = c.run_id AND m.checkpoint_id = c.notified_checkpoint_id
LEFT JOIN delivered d ON d.run_id = c.run_id AND d.commit_file = c.commit_file
WHERE (m.trigger_seq > s.start_seq AND m.trigger_seq < s.end_seq) OR (d.seq > s.start_seq AND d.seq < s.end_seq)
