-- explains: flip_bounds.ref_chain_depth_within_bound
-- F14 through the chain bound: a REGIONAL checkpoint C whose entries reference L while a checkpoint M, L < M < C,
-- completed GLOBAL before C's decision (C asked for its fallback while L was the latest; M's completion reset the
-- consecutive counter meanwhile) links C -> L across that reset: the counter counts C's streak from M, the chain
-- goes on through L's. A ref chain past the bound from N is F14's when N's chain, followed only up to such a link
-- (the link counted, nothing past it), stays within the bound and reaches one: the depth past the bound is the
-- streak before the reset. A chain too deep before any such link is no finding's.
WITH RECURSIVE links AS (
  SELECT DISTINCT run_id, checkpoint_id, ref_checkpoint_id AS ref_id FROM rc_entries
  WHERE ref_checkpoint_id IS NOT NULL AND ref_checkpoint_id < checkpoint_id
),
flagged AS (  -- each link, 1 where it crosses a GLOBAL completion before its checkpoint's decision
  SELECT l.run_id, l.checkpoint_id, l.ref_id, max(CASE WHEN m.checkpoint_id IS NULL THEN 0 ELSE 1 END) AS crosses
  FROM links l
  JOIN rc_checkpoints c ON c.run_id = l.run_id AND c.checkpoint_id = l.checkpoint_id
  LEFT JOIN rc_checkpoints m ON m.run_id = l.run_id AND m.checkpoint_id > l.ref_id AND m.checkpoint_id < l.checkpoint_id
                            AND m.completed AND m.status = 'GLOBAL' AND m.completed_seq < c.decided_seq
  GROUP BY l.run_id, l.checkpoint_id, l.ref_id
),
chain (run_id, head, cur, depth, crossed) AS (
  SELECT run_id, checkpoint_id, ref_id, 1, crosses FROM flagged
  UNION ALL
  SELECT c.run_id, c.head, f.ref_id, c.depth + 1, f.crosses
  FROM chain c
  JOIN flagged f ON f.run_id = c.run_id AND f.checkpoint_id = c.cur
  JOIN {batch} b ON b.run_id = c.run_id
  WHERE c.crossed = 0 AND c.depth <= b.max_consecutive_failures
)
SELECT c.run_id, c.head AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM chain c JOIN {batch} r ON r.run_id = c.run_id
GROUP BY c.run_id, c.head, r.max_consecutive_failures
HAVING max(c.depth) <= r.max_consecutive_failures AND max(c.crossed) = 1
