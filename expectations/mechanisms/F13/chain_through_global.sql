-- explains: flip_bounds.ref_chain_depth_within_bound
-- F13, the ref chain: a GLOBAL checkpoint G completed by a late ack while a region fallback it had requested was
-- pending (as grafted_entries.sql: the history's `fallback_requested` before G's decision, a late ack in the failed
-- region) still holds entries referencing the fallback checkpoint. G resets the consecutive counter like any GLOBAL
-- completion, but its references do not break the chain: a REGIONAL checkpoint after it references G, and through
-- G's graft the checkpoints before it. A chain past the bound from a head H is F13's when H is such a G (a GLOBAL
-- checkpoint has no chain but for its graft) or reaches one within max-consecutive-failures links (the part a
-- GLOBAL checkpoint would have cut is within the bound); a chain that is too deep before any such G is not.
WITH RECURSIVE
-- include: _late_ack.sql
mixed AS (  -- G: GLOBAL, with entries grafted from the fallback checkpoint of a region a late ack failed
  SELECT DISTINCT n.run_id, n.checkpoint_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id = fb.fallback_id
                   AND array_contains(fb.failed_regions, e.region)
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
),
links AS (
  SELECT DISTINCT run_id, checkpoint_id, ref_checkpoint_id AS ref_id FROM rc_entries
  WHERE ref_checkpoint_id IS NOT NULL AND ref_checkpoint_id < checkpoint_id
),
chain (run_id, head, cur, depth) AS (
  SELECT l.run_id, l.checkpoint_id, l.ref_id, 1 FROM links l
  UNION ALL
  SELECT c.run_id, c.head, l.ref_id, c.depth + 1
  FROM chain c
  JOIN links l ON l.run_id = c.run_id AND l.checkpoint_id = c.cur
  JOIN {batch} b ON b.run_id = c.run_id
  WHERE c.depth <= b.max_consecutive_failures
)
SELECT DISTINCT c.run_id, c.head AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM chain c
JOIN mixed g ON g.run_id = c.run_id AND g.checkpoint_id = c.cur
JOIN {batch} b ON b.run_id = c.run_id
WHERE c.depth <= b.max_consecutive_failures
UNION
SELECT run_id, checkpoint_id, NULL, NULL, NULL, NULL FROM mixed
