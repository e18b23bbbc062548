-- explains: reachable_global_state.split_assignment_consistent
-- F16, the checkpoints while a split is held: a split S assigned to source subtask s while its gateway was closed for
-- a REGIONAL checkpoint N that s declined before its snapshot (as held_forever.sql: `split_held` naming N, s's decline
-- in N's task record, not a failed upload, its region failed, the PR's semantics). The enumerator counts S as s's,
-- while s never got it: every checkpoint C triggered after the hold and before s restarts (a region failover of its
-- region, a global restore or restart, a JobManager failover) or S is assigned again holds S in no source entry and
-- not as unassigned. C's row about S is F16's; one about another split, or after the hold ended, is not.
WITH n AS (
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
),
ended AS (  -- the first event after the hold that ends it
  SELECT h.run_id, h.seq, min(e.seq) AS end_seq
  FROM held h
  JOIN rc_events e ON e.run_id = h.run_id AND e.seq > h.seq
   AND ((e.kind = 'region_failover' AND e.region = h.region)
        OR e.kind IN ('global_restore', 'global_restart_from_scratch', 'jobmanager_failover')
        OR (e.kind IN ('split_assigned', 'split_held') AND e.split = h.split))
  GROUP BY h.run_id, h.seq
)
SELECT DISTINCT h.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, h.split
FROM held h
LEFT JOIN ended x ON x.run_id = h.run_id AND x.seq = h.seq
JOIN rc_checkpoints c ON c.run_id = h.run_id AND c.trigger_seq > h.seq AND c.trigger_seq < coalesce(x.end_seq, 9223372036854775807)
