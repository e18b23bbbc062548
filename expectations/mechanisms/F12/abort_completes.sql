-- explains: notifications.failed_region_did_not_commit, exactly_once_output.commit_within_checkpoint
-- F12 (PR: an abort notification completes the latest checkpoint on a failed region's task): a REGIONAL checkpoint
-- N under the PR's semantics (scenario.json) whose sink entry of subtask s references an earlier checkpoint (the
-- fallback grafted for a region N failed, rc_entries of N). A commit by s upon N (rc_commits, cause notify) that sits
-- in the commit file of a delivery of an ABORT notification to s carrying N as the latest completed checkpoint (the
-- history's `notified` event with `aborted`: StreamTask.notifyCheckpointAbortAsync runs notifyCheckpointComplete(N)
-- first, and the fallback notification never told s of N) is F12's. So is one by any process subtask s of a region N
-- failed (its task record of N names s's region) whose sink entry in N is fresh or missing: after an upscale the PR
-- keeps an acknowledging task's fresh entry and grafts none for an index the fallback lacks (F11), and tells s only
-- the fallback. A commit upon N by s in a delivery of N's own notification, by a subtask of a region N did not fail,
-- or upon a GLOBAL checkpoint, is not.
WITH aborts AS (  -- each sink subtask an abort notification reached, the completed checkpoint it carried, its commit file
  SELECT ev.run_id, ev.checkpoint_id, get_json_object(ev.detail, '$.commit_file') AS commit_file,
         explode(from_json(get_json_object(ev.detail, '$.subtasks'), 'array<int>')) AS subtask
  FROM rc_events ev
  WHERE ev.kind = 'notified' AND get_json_object(ev.detail, '$.aborted') IS NOT NULL
),
grafted AS (  -- sink subtasks of a region a REGIONAL checkpoint under the PR failed
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.subtask
  FROM rc_entries e
  JOIN {batch} r ON r.run_id = e.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints n ON n.run_id = e.run_id AND n.checkpoint_id = e.checkpoint_id
  WHERE n.status = 'REGIONAL' AND n.completed AND e.operator = 'sink' AND e.ref_checkpoint_id IS NOT NULL
    AND array_contains(n.failed_regions, e.region)
  UNION
  SELECT t.run_id, t.checkpoint_id, t.subtask  -- a failed region's process subtask, its sink entry fresh or none (F11)
  FROM rc_task_responses t
  JOIN {batch} r ON r.run_id = t.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints n ON n.run_id = t.run_id AND n.checkpoint_id = t.checkpoint_id
  WHERE n.status = 'REGIONAL' AND n.completed AND t.vertex = 'process' AND array_contains(n.failed_regions, t.region)
)
SELECT DISTINCT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, c.subtask, 'sink' AS operator,
       c.split
FROM rc_commits c
JOIN grafted g ON g.run_id = c.run_id AND g.checkpoint_id = c.notified_checkpoint_id AND g.subtask = c.subtask
JOIN aborts a ON a.run_id = c.run_id AND a.checkpoint_id = c.notified_checkpoint_id AND a.subtask = c.subtask
             AND a.commit_file = c.commit_file
WHERE c.cause = 'notify'
