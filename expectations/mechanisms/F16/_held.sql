-- F16's holds (a part of its mechanisms): n, a REGIONAL checkpoint N under the PR that source subtask s declined before
-- its snapshot (not a failed upload) in a region N failed; held, a split assignment to s held by its gateway, closed
-- for such an N (the history's `split_held`, `closed_for` naming N).
n AS (
  SELECT n.run_id, n.checkpoint_id, t.subtask, t.region
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_task_responses t ON t.run_id = n.run_id AND t.checkpoint_id = n.checkpoint_id AND t.vertex = 'source'
                          AND t.response = 'decline' AND t.reason <> 'CHECKPOINT_DECLINED_STATE_UPLOAD_FAILED'
                          AND array_contains(n.failed_regions, t.region)
  WHERE n.status = 'REGIONAL' AND n.completed
),
held AS (
  SELECT DISTINCT h.run_id, h.seq, h.subtask, h.split, n.region
  FROM rc_events h
  JOIN n ON n.run_id = h.run_id AND n.subtask = h.subtask
        AND array_contains(from_json(get_json_object(h.detail, '$.closed_for'), 'array<bigint>'), n.checkpoint_id)
  WHERE h.kind = 'split_held'
)
