-- explains: reachable_global_state.split_assignment_consistent
-- F15 (PR: the region fallback's coordinator state is the live enumerator's, taken when the fallback is served): a
-- REGIONAL checkpoint N under the PR's semantics (scenario.json) whose region fallback was served after its trigger (the
-- history's `fallback_completed`, applied). A split S the enumerator assigned in between (`split_assigned`, or
-- `split_held` when the reader's gateway is closed (F16), after N's `checkpoint_triggered`, before that
-- `fallback_completed`) to a source subtask of a region N did not fail is assigned in
-- the fallback bytes that overwrite N's coordinator state, and it is in no source entry of N (rc_entry_splits: the
-- healthy reader's entry is its ack of N, taken before S reached it): N's row about S (discovered, neither unassigned
-- nor held: lost) is F15's. So is the same row of a checkpoint triggered after a global restore from N and before S is
-- assigned again: the enumerator restored S as assigned and no reader has it. A split assigned before N's trigger or
-- after its fallback, to a failed region's subtask, or one some source entry of N holds, is not.
WITH
-- include: _lost_at_fallback.sql
,
after_restore AS (  -- a checkpoint M triggered after a global restore from N, before S is assigned again
  SELECT DISTINCT l.run_id, m.checkpoint_id, l.split
  FROM lost l
  JOIN rc_events g ON g.run_id = l.run_id AND g.kind = 'global_restore' AND g.restore_from = l.checkpoint_id
  JOIN rc_checkpoints m ON m.run_id = l.run_id AND m.completed AND m.trigger_seq > g.seq
  LEFT ANTI JOIN rc_events a ON a.run_id = l.run_id AND a.kind IN ('split_assigned', 'split_held') AND a.split = l.split
                            AND a.seq > g.seq AND a.seq < m.trigger_seq
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, split FROM lost
UNION
SELECT run_id, checkpoint_id, NULL, NULL, 'source', split FROM after_restore
