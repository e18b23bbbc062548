-- explains: reachable_global_state.split_assignment_consistent
-- F10 (PR: a split handed back at a REGIONAL completion while its reader still runs), as a later checkpoint sees it:
-- a REGIONAL checkpoint N under the PR's semantics (scenario.json) hands split S back to the enumerator (S assigned to
-- a source subtask s of a region N failed after the trigger of L, the last checkpoint completed before N's decision,
-- and still s's at that decision: handed_back.sql's `held`). A checkpoint M completed after N's decision, triggered
-- before S was assigned again and before any restore of s, holds S in s's fresh entry while its enumerator state
-- counts S unassigned (or, assigned again meanwhile, twice): M's row about S is F10's. The same split with no such
-- hand-back, or after s was restored, is not.
WITH restores AS (
  SELECT run_id, seq, kind, region FROM rc_events
  WHERE kind IN ('region_failover', 'global_restore', 'global_restart_from_scratch', 'jobmanager_failover')
),
assigned AS (SELECT run_id, seq, split, subtask FROM rc_events WHERE kind = 'split_assigned'),
n AS (
  SELECT n.run_id, n.checkpoint_id, n.decided_seq, n.failed_regions, max(l.checkpoint_id) AS l_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.completed AND l.completed_seq < n.decided_seq
  WHERE n.status = 'REGIONAL' AND n.completed
  GROUP BY n.run_id, n.checkpoint_id, n.decided_seq, n.failed_regions
),
failed AS (
  SELECT n.run_id, n.checkpoint_id, n.decided_seq, l.trigger_seq AS l_trigger_seq, t.subtask, t.region
  FROM n
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.checkpoint_id = n.l_id
  JOIN rc_task_responses t ON t.run_id = n.run_id AND t.checkpoint_id = n.checkpoint_id AND t.vertex = 'source'
                          AND array_contains(n.failed_regions, t.region)
),
held AS (  -- S assigned to the failed subtask s after L's trigger, still its own at N's decision
  SELECT f.run_id, f.checkpoint_id, f.decided_seq, f.subtask, f.region, a.split, a.seq
  FROM failed f
  JOIN assigned a ON a.run_id = f.run_id AND a.subtask = f.subtask AND a.seq > f.l_trigger_seq
                 AND a.seq < f.decided_seq
  LEFT ANTI JOIN assigned b ON b.run_id = a.run_id AND b.split = a.split AND b.seq > a.seq AND b.seq < f.decided_seq
  LEFT ANTI JOIN restores x ON x.run_id = a.run_id AND x.seq > a.seq AND x.seq < f.decided_seq
                           AND (x.kind <> 'region_failover' OR x.region = f.region)
),
later AS (  -- M: completed after N's decision, triggered before S was assigned again and before a restore of s
  SELECT DISTINCT h.run_id, m.checkpoint_id, h.split
  FROM held h
  JOIN rc_checkpoints m ON m.run_id = h.run_id AND m.completed AND m.trigger_seq > h.decided_seq
  LEFT ANTI JOIN assigned a ON a.run_id = h.run_id AND a.split = h.split AND a.seq > h.decided_seq
                           AND a.seq < m.trigger_seq AND a.subtask <> h.subtask
  LEFT ANTI JOIN restores x ON x.run_id = h.run_id AND x.seq > h.decided_seq AND x.seq < m.trigger_seq
                           AND (x.kind <> 'region_failover' OR x.region = h.region)
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, split
FROM later
