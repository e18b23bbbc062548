-- explains: reachable_global_state.split_assignment_consistent
-- F16, the checkpoints while a split is held: a split S assigned to source subtask s while its gateway was closed for
-- a REGIONAL checkpoint N that s declined before its snapshot (as held_forever.sql: `split_held` naming N, s's decline
-- in N's task record, not a failed upload, its region failed, the PR's semantics). The enumerator counts S as s's,
-- while s never got it: every checkpoint C triggered after the hold and before s restarts (a region failover of its
-- region, a global restore or restart, a JobManager failover) or S is assigned again holds S in no source entry and
-- not as unassigned. C's row about S is F16's; one about another split, or after the hold ended, is not.
-- The loss outlives the hold when the job restores from such a C: a global restore (after a job failure or a
-- JobManager failover: the history's `global_restore` and its `restore_from`) from a checkpoint C whose row about S is
-- F16's, and whose metadata counts S as assigned (its coordinator state: discovered, not unassigned) while no source
-- entry of C holds it, rebuilds the enumerator from C (`SourceCoordinator.resetToCheckpoint`: S assigned) and every
-- reader from C's entries (none has S): S is lost until it is assigned again, a restart from scratch, or another
-- global restore. Every checkpoint triggered meanwhile is F16's for S, and so on through each global restore from one
-- of them (recursively). A region failover does not end it then (the reset subtask never had S: `subtaskReset` gives
-- back only what it was assigned since the restored checkpoint). A restore from a checkpoint that holds S, counts it
-- unassigned, or was not triggered in such a span, does not carry it.
WITH RECURSIVE n AS (
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
),
-- include: _lost_split_carried.sql
spans (run_id, split, start_seq, end_seq) AS (  -- the hold, then each global restore that carries its loss on
  SELECT h.run_id, h.split, h.seq, coalesce(x.end_seq, 9223372036854775807)
  FROM held h LEFT JOIN ended x ON x.run_id = h.run_id AND x.seq = h.seq
  UNION ALL
  SELECT c.run_id, c.split, c.seq, coalesce(x.end_seq, 9223372036854775807)
  FROM spans s
  JOIN rc_checkpoints m ON m.run_id = s.run_id AND m.trigger_seq > s.start_seq AND m.trigger_seq < s.end_seq
  JOIN carried c ON c.run_id = s.run_id AND c.split = s.split AND c.restore_from = m.checkpoint_id
                AND c.seq > s.start_seq
  LEFT JOIN carried_end x ON x.run_id = c.run_id AND x.seq = c.seq AND x.split = c.split
)
SELECT DISTINCT s.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, s.split
FROM (SELECT DISTINCT * FROM spans) s
JOIN rc_checkpoints c ON c.run_id = s.run_id AND c.trigger_seq > s.start_seq AND c.trigger_seq < s.end_seq
