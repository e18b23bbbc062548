-- explains: exactly_once_output.bounded_output_complete
-- F10 carried on (carried.sql, _carried_spans.sql) on a bounded run that finished: a split S with a span in which it
-- has a second reader (`twice`), committed upon a checkpoint triggered in it (carried_commits.sql), is committed more
-- than once by the end. Only the excess is F10's (_covered_twice.sql): a split with records never committed or
-- committed past its end is not its doing.
WITH RECURSIVE
-- include: _hand_back.sql
-- include: _refreshed.sql
-- include: _carried_spans.sql
,
-- include: _covered_twice.sql
SELECT DISTINCT s.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, s.split
FROM twice s
JOIN rc_commits c ON c.run_id = s.run_id AND c.split = s.split
JOIN rc_checkpoints m ON m.run_id = c.run_id AND m.checkpoint_id = c.notified_checkpoint_id
                     AND m.trigger_seq > s.start_seq AND m.trigger_seq < s.end_seq
JOIN covered v ON v.run_id = s.run_id AND v.split = s.split
