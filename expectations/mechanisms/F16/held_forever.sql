-- explains: liveness.held_split_delivered
-- F16 (PR: notifyRegionalCheckpointFallback does not reopen the gateway): a REGIONAL checkpoint N under the PR's
-- semantics (scenario.json) that source subtask s declined before its snapshot (the task record: a decline whose reason
-- is not a failed state upload, which comes after the synchronous part and its AcknowledgeCheckpointEvent) in a region N
-- failed. A split assignment to s held by its gateway, closed for N (the history's `split_held`, `closed_for` naming N),
-- that never reaches s is F16's; one held for a checkpoint s did not so decline, or under the FLIP, is not.
WITH n AS (
  SELECT n.run_id, n.checkpoint_id, t.subtask
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_task_responses t ON t.run_id = n.run_id AND t.checkpoint_id = n.checkpoint_id AND t.vertex = 'source'
                          AND t.response = 'decline' AND t.reason <> 'CHECKPOINT_DECLINED_STATE_UPLOAD_FAILED'
                          AND array_contains(n.failed_regions, t.region)
  WHERE n.status = 'REGIONAL' AND n.completed
)
SELECT DISTINCT h.run_id, NULL AS checkpoint_id, NULL AS region, h.subtask, 'source' AS operator, h.split
FROM rc_events h
JOIN n ON n.run_id = h.run_id AND n.subtask = h.subtask
      AND array_contains(from_json(get_json_object(h.detail, '$.closed_for'), 'array<bigint>'), n.checkpoint_id)
WHERE h.kind = 'split_held'
