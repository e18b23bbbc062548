-- F15's loss (a part of its mechanisms): lost, (N, S) for a REGIONAL checkpoint N under the PR whose applied region
-- fallback came after a split S's assignment, made after N's trigger, to a healthy reader (delivered, or held by
-- its closed gateway, F16: the enumerator counts a held split as assigned either way), with S in no source entry
-- of N (assigned_before_fallback.sql says why).
fallback AS (
  SELECT ev.run_id, ev.checkpoint_id, min(ev.seq) AS seq FROM rc_events ev
  WHERE ev.kind = 'fallback_completed' AND get_json_object(ev.detail, '$.applied') = 'true'
  GROUP BY ev.run_id, ev.checkpoint_id
),
n AS (
  SELECT n.run_id, n.checkpoint_id, n.trigger_seq, n.failed_regions, f.seq AS fallback_seq
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fallback f ON f.run_id = n.run_id AND f.checkpoint_id = n.checkpoint_id
  WHERE n.status = 'REGIONAL' AND n.completed
),
healthy AS (  -- each source subtask's region in N (the task record)
  SELECT t.run_id, t.checkpoint_id, t.subtask, t.region FROM rc_task_responses t WHERE t.vertex = 'source'
),
lost AS (  -- (N, S): S in no part of N
  SELECT DISTINCT n.run_id, n.checkpoint_id, a.split
  FROM n
  JOIN rc_events a ON a.run_id = n.run_id AND a.kind IN ('split_assigned', 'split_held') AND a.seq > n.trigger_seq
                  AND a.seq < n.fallback_seq
  JOIN healthy h ON h.run_id = n.run_id AND h.checkpoint_id = n.checkpoint_id AND h.subtask = a.subtask
                AND NOT array_contains(n.failed_regions, h.region)
  LEFT ANTI JOIN rc_entry_splits s ON s.run_id = n.run_id AND s.checkpoint_id = n.checkpoint_id AND s.operator = 'source'
                                  AND s.split = a.split
)
