-- explains: exactly_once_output.no_duplicate_commit
-- F10 (PR: a split handed back at a REGIONAL completion while its reader still runs): a REGIONAL checkpoint N
-- under the PR's semantics (scenario.json), L the last checkpoint completed before N's decision (the fallback the
-- PR hands back after: store.latest()); a source subtask s of a region N failed (its task record, rc_task_responses
-- of N, with the decision's failed regions) was assigned split S after L's trigger (the history's split_assigned:
-- the tracker records it after L) and still held it at N's decision (no later assignment of S, and no restore of
-- s since: a region failover of s's region, a global restore, a restart, a JobManager failover). The enumerator
-- assigns S again after N's decision with no restore of s in between: two readers of S, the failed one never
-- reset. A duplicate commit of such a split S is F10's; one of a split no such hand-back touched is not.
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
handed_back AS (  -- assigned again after N's decision, before any restore of s
  SELECT DISTINCT h.run_id, h.split, h.checkpoint_id
  FROM held h
  JOIN assigned a ON a.run_id = h.run_id AND a.split = h.split AND a.seq > h.decided_seq
  LEFT ANTI JOIN restores x ON x.run_id = h.run_id AND x.seq > h.decided_seq AND x.seq < a.seq
                           AND (x.kind <> 'region_failover' OR x.region = h.region)
)
SELECT run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, split
FROM (SELECT DISTINCT run_id, split FROM handed_back)
