-- explains: flip_bounds.ref_chain_depth_within_bound
-- F7 (PR): a ref chain past the bound from REGIONAL checkpoint N is F7's when a JobManager failover came after
-- the last GLOBAL checkpoint before N (the new JobManager's counter starts at 0, so nothing forced the chain's
-- end), N is within the bound counted from the latest failover (as for the streak), and the chain is that deep
-- through links to checkpoints no older than that GLOBAL one.
WITH RECURSIVE d AS (
  SELECT c.run_id, c.checkpoint_id, c.status, c.decided_seq,
         max(CASE WHEN c.status = 'GLOBAL' THEN c.decided_seq END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS global_seq,
         max(CASE WHEN c.status = 'GLOBAL' THEN c.checkpoint_id END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS last_global
  FROM rc_checkpoints c WHERE c.completed AND c.decided_seq IS NOT NULL
),
fo AS (
  SELECT d.run_id, d.checkpoint_id, d.decided_seq, d.last_global, max(ev.seq) AS failover_seq
  FROM d JOIN rc_events ev ON ev.run_id = d.run_id AND ev.kind = 'jobmanager_failover'
   AND ev.seq < d.decided_seq AND ev.seq > coalesce(d.global_seq, -1)
  WHERE d.status = 'REGIONAL'
  GROUP BY d.run_id, d.checkpoint_id, d.decided_seq, d.last_global
),
heads AS (
  SELECT fo.run_id, fo.checkpoint_id AS head, coalesce(fo.last_global, -1) AS floor
  FROM fo JOIN d ON d.run_id = fo.run_id AND d.status = 'REGIONAL'
   AND d.decided_seq > fo.failover_seq AND d.decided_seq <= fo.decided_seq
  JOIN {batch} r ON r.run_id = fo.run_id
  GROUP BY fo.run_id, fo.checkpoint_id, fo.last_global, r.max_consecutive_failures
  HAVING count(*) <= r.max_consecutive_failures
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
