-- explains: flip_bounds.ref_chain_depth_within_bound
-- F1 (tier 2's reset): a ref chain past the bound from checkpoint N is F1's when N is within the bound counted
-- from a tier-2 reset after the last GLOBAL checkpoint before N (as for the streak: a decision ABORTED, forced,
-- counter k > 0 -> 0), and the chain is that deep through links to checkpoints no older than that GLOBAL one:
-- the chain a reset lets grow. A link further back, or a deep chain with no such reset, is no finding's.
-- Decisions are taken in the history's order (decided_seq): with checkpoints pending at once a newer one
-- can be decided, and reset the counter, before an older one completes.
WITH RECURSIVE d AS (
  SELECT c.run_id, c.checkpoint_id, c.status, c.completed, c.decided_seq,
         max(CASE WHEN c.completed AND c.status = 'GLOBAL' THEN c.checkpoint_id END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS last_global,
         max(CASE WHEN c.completed AND c.status = 'GLOBAL' THEN c.decided_seq END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS global_seq,
         max(CASE WHEN c.status = 'ABORTED' AND c.forced_global AND c.counter_before > 0 AND c.counter_after = 0
                  THEN c.decided_seq END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS reset_seq
  FROM rc_checkpoints c WHERE c.decided_seq IS NOT NULL
),
s AS (
  SELECT d.*, sum(CASE WHEN d.completed AND d.status = 'REGIONAL' THEN 1 ELSE 0 END)
           OVER (PARTITION BY d.run_id, greatest(coalesce(d.global_seq, -1), coalesce(d.reset_seq, -1))
                 ORDER BY d.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS since_reset
  FROM d
),
heads AS (
  SELECT s.run_id, s.checkpoint_id AS head, coalesce(s.last_global, -1) AS floor
  FROM s JOIN {batch} r ON r.run_id = s.run_id
  WHERE s.completed AND s.status = 'REGIONAL' AND s.reset_seq > coalesce(s.global_seq, -1)
    AND s.since_reset <= r.max_consecutive_failures
),
links AS (
  SELECT DISTINCT run_id, checkpoint_id, ref_checkpoint_id AS ref_id FROM rc_entries
  WHERE ref_checkpoint_id IS NOT NULL AND ref_checkpoint_id < checkpoint_id
),
chain (run_id, head, floor, cur, depth) AS (
  SELECT h.run_id, h.head, h.floor, l.ref_id, 1
  FROM heads h JOIN links l ON l.run_id = h.run_id AND l.checkpoint_id = h.head AND l.ref_id >= h.floor
  UNION ALL
  SELECT c.run_id, c.head, c.floor, l.ref_id, c.depth + 1
  FROM chain c
  JOIN links l ON l.run_id = c.run_id AND l.checkpoint_id = c.cur AND l.ref_id >= c.floor
  JOIN {batch} b ON b.run_id = c.run_id
  WHERE c.depth <= b.max_consecutive_failures
)
SELECT c.run_id, c.head AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM chain c JOIN {batch} r ON r.run_id = c.run_id
GROUP BY c.run_id, c.head, r.max_consecutive_failures
HAVING max(c.depth) > r.max_consecutive_failures
