-- explains: reachable_global_state.split_assignment_consistent
-- F15 (PR: the region fallback's coordinator state is the live enumerator's, taken when the fallback is served): a
-- REGIONAL checkpoint N under the PR's semantics (scenario.json) whose region fallback was served after its trigger (the
-- history's `fallback_completed`, applied). A split S the enumerator assigned in between (`split_assigned` after N's
-- `checkpoint_triggered`, before that `fallback_completed`) to a source subtask of a region N did not fail is assigned in
-- the fallback bytes that overwrite N's coordinator state, and it is in no source entry of N (rc_entry_splits: the
-- healthy reader's entry is its ack of N, taken before S reached it): N's row about S (discovered, neither unassigned
-- nor held: lost) is F15's. So is the same row of a checkpoint triggered after a global restore from N and before S is
-- assigned again: the enumerator restored S as assigned and no reader has it. A split assigned before N's trigger or
-- after its fallback, to a failed region's subtask, or one some source entry of N holds, is not.
WITH fallback AS (
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
  JOIN rc_events a ON a.run_id = n.run_id AND a.kind = 'split_assigned' AND a.seq > n.trigger_seq
                  AND a.seq < n.fallback_seq
  JOIN healthy h ON h.run_id = n.run_id AND h.checkpoint_id = n.checkpoint_id AND h.subtask = a.subtask
                AND NOT array_contains(n.failed_regions, h.region)
  LEFT ANTI JOIN rc_entry_splits s ON s.run_id = n.run_id AND s.checkpoint_id = n.checkpoint_id AND s.operator = 'source'
                                  AND s.split = a.split
),
after_restore AS (  -- a checkpoint M triggered after a global restore from N, before S is assigned again
  SELECT DISTINCT l.run_id, m.checkpoint_id, l.split
  FROM lost l
  JOIN rc_events g ON g.run_id = l.run_id AND g.kind = 'global_restore' AND g.restore_from = l.checkpoint_id
  JOIN rc_checkpoints m ON m.run_id = l.run_id AND m.completed AND m.trigger_seq > g.seq
  LEFT ANTI JOIN rc_events a ON a.run_id = l.run_id AND a.kind = 'split_assigned' AND a.split = l.split
                            AND a.seq > g.seq AND a.seq < m.trigger_seq
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, split FROM lost
UNION
SELECT run_id, checkpoint_id, NULL, NULL, 'source', split FROM after_restore
