-- explains: exactly_once_output.bounded_output_complete
-- F12 on a bounded run that finished: a split one of whose commits is F12's (a failed region's sink committed REGIONAL
-- N's transaction upon an abort notification carrying N, as abort_completes.sql finds) is committed more than once
-- by the end when its region later restores from the fallback. Only the excess is F12's: the split's committed
-- ranges (rc_commits) cover [0, records_per_split) with no gap and end at its length, and sum to more; a split with
-- records never committed (a gap, a missing head or tail) or committed past its end is not F12's doing.
WITH aborts AS (
  SELECT ev.run_id, ev.checkpoint_id, get_json_object(ev.detail, '$.commit_file') AS commit_file,
         explode(from_json(get_json_object(ev.detail, '$.subtasks'), 'array<int>')) AS subtask
  FROM rc_events ev
  WHERE ev.kind = 'notified' AND get_json_object(ev.detail, '$.aborted') IS NOT NULL
),
grafted AS (
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.subtask
  FROM rc_entries e
  JOIN {batch} r ON r.run_id = e.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints n ON n.run_id = e.run_id AND n.checkpoint_id = e.checkpoint_id
  WHERE n.status = 'REGIONAL' AND n.completed AND e.operator = 'sink' AND e.ref_checkpoint_id IS NOT NULL
    AND array_contains(n.failed_regions, e.region)
),
early AS (  -- F12's commits
  SELECT c.* FROM rc_commits c
  JOIN grafted g ON g.run_id = c.run_id AND g.checkpoint_id = c.notified_checkpoint_id AND g.subtask = c.subtask
  JOIN aborts a ON a.run_id = c.run_id AND a.checkpoint_id = c.notified_checkpoint_id AND a.subtask = c.subtask
               AND a.commit_file = c.commit_file
  WHERE c.cause = 'notify'
),
-- include: _covered_twice.sql
SELECT DISTINCT e.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, e.split
FROM early e JOIN covered v ON v.run_id = e.run_id AND v.split = e.split
