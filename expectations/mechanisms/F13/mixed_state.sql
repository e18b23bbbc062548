-- explains: state_consistency.source_ahead_of_counter
-- F13, the mixed GLOBAL checkpoint itself: N completed GLOBAL under the PR after a late ack while the region fallback
-- it had requested was pending (the history's `fallback_requested` before N's decision, a task of the failed region r
-- whose ack arrived after the timeout), with entries of r referencing the fallback checkpoint L next to r's fresh ones
-- (rc_entries of N). When r's source entry is L's and its counter entry N's (the process task acknowledged late, the
-- source task's graft stayed), the counter in N has consumed records the source in N has not emitted yet: N's row
-- about a split r held in N (rc_entry_splits) is F13's; a row of another checkpoint or split is not.
WITH
-- include: _late_ack.sql
mixed AS (
  SELECT DISTINCT n.run_id, n.checkpoint_id, e.region
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id = fb.fallback_id
                   AND array_contains(fb.failed_regions, e.region) AND e.operator = 'source'
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
)
SELECT DISTINCT m.run_id, m.checkpoint_id, NULL AS region, NULL AS subtask, 'counter' AS operator, s.split
FROM mixed m
JOIN rc_entry_splits s ON s.run_id = m.run_id AND s.checkpoint_id = m.checkpoint_id AND s.region = m.region
WHERE s.split IS NOT NULL
