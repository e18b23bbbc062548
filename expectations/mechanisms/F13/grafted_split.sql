-- explains: reachable_global_state.split_assignment_consistent
-- F13, the split assignment of the mixed GLOBAL checkpoint: N completed GLOBAL under the PR after a late ack while the
-- region fallback it had requested was pending (as grafted_entries.sql: `fallback_requested` before N's decision, a
-- task of the failed region r whose ack arrived after the timeout), and N's source entry of subtask s in r still
-- references the fallback checkpoint L (the graft of the REGIONAL decision, which no ack of s overwrote). A GLOBAL
-- completion keeps N's coordinator state as the coordinator snapshotted it at N's trigger (`completePendingCheckpoint`;
-- the region-fallback bytes replace it only on the REGIONAL path). A split S the enumerator assigned to s after L's
-- trigger and before N's (`split_assigned`: delivered, not held by a closed gateway, F16; no later assignment of S
-- before N's trigger) is then assigned in N's coordinator state and in no source entry of N (L's entry of s predates
-- it): N's row about S is F13's. So is the row of every checkpoint triggered after a global restore from N (or,
-- recursively, from a checkpoint triggered after such a restore in which S is still counted assigned and held by no
-- source entry) before S is assigned again, the job restarts from scratch or restores again: the enumerator restored
-- S as assigned and no reader has it. A split assigned before L's trigger (L's entry holds it), to another subtask,
-- or after N's trigger, is not.
WITH RECURSIVE
-- include: _late_ack.sql
grafted AS (  -- (N, s, L): N GLOBAL, the source entry of s in a late-acked failed region still references L
  SELECT DISTINCT n.run_id, n.checkpoint_id, n.trigger_seq, e.subtask, fb.fallback_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.operator = 'source'
                   AND e.ref_checkpoint_id = fb.fallback_id AND array_contains(fb.failed_regions, e.region)
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
),
assigned AS (SELECT run_id, seq, kind, split, subtask FROM rc_events WHERE kind IN ('split_assigned', 'split_held')),
-- include: _lost_split_carried.sql
lost AS (  -- (N, S): S assigned to s after L's trigger and still s's at N's trigger, lost in N
  SELECT DISTINCT g.run_id, g.checkpoint_id, a.split
  FROM grafted g
  JOIN rc_checkpoints l ON l.run_id = g.run_id AND l.checkpoint_id = g.fallback_id
  JOIN assigned a ON a.run_id = g.run_id AND a.kind = 'split_assigned' AND a.subtask = g.subtask
                 AND a.seq > l.trigger_seq AND a.seq < g.trigger_seq
  JOIN lost_in li ON li.run_id = g.run_id AND li.checkpoint_id = g.checkpoint_id AND li.split = a.split
  LEFT ANTI JOIN assigned b ON b.run_id = a.run_id AND b.split = a.split AND b.seq > a.seq AND b.seq < g.trigger_seq
),
spans (run_id, split, start_seq, end_seq) AS (  -- each global restore that carries the loss on, from N on
  SELECT c.run_id, c.split, c.seq, coalesce(x.end_seq, 9223372036854775807)
  FROM lost n
  JOIN carried c ON c.run_id = n.run_id AND c.split = n.split AND c.restore_from = n.checkpoint_id
  LEFT JOIN carried_end x ON x.run_id = c.run_id AND x.seq = c.seq AND x.split = c.split
  UNION ALL
  SELECT c.run_id, c.split, c.seq, coalesce(x.end_seq, 9223372036854775807)
  FROM spans s
  JOIN rc_checkpoints m ON m.run_id = s.run_id AND m.trigger_seq > s.start_seq AND m.trigger_seq < s.end_seq
  JOIN carried c ON c.run_id = s.run_id AND c.split = s.split AND c.restore_from = m.checkpoint_id
                AND c.seq > s.start_seq
  LEFT JOIN carried_end x ON x.run_id = c.run_id AND x.seq = c.seq AND x.split = c.split
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, split FROM lost
UNION
SELECT DISTINCT s.run_id, c.checkpoint_id, NULL, NULL, 'source', s.split
FROM (SELECT DISTINCT * FROM spans) s
JOIN rc_checkpoints c ON c.run_id = s.run_id AND c.trigger_seq > s.start_seq AND c.trigger_seq < s.end_seq
