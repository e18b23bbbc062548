-- Shared by F7/chain_streaks.sql and F14/chain_streaks.sql: under the PR's semantics, a ref chain past the bound that
-- the counter resets of both findings cut into streaks within it. links, each link C -> L of a completed
-- checkpoint's entries; resets, per link, f7 (a JobManager failover between L's decision and C's: the new
-- JobManager's counter starts at 0, F7) and f14 (a checkpoint M, L < M < C, completed GLOBAL before C's decision: it
-- reset the counter under a chain that goes on through L, F14); chain, the walk from each head N, one row per link
-- followed: streak, the REGIONAL checkpoints counted since the last reset (a checkpoint counts when a link leaves
-- it; N counts 1, the next one 1 again when the link between them crosses a reset), used7 / used14, whether a reset
-- of that kind started a streak; streaks, the heads whose chain is past the bound while every walk's streaks stay
-- within it.
links AS (  -- under the PR's semantics only: under the FLIP a new JobManager reads the counter back (no F7 reset)
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.ref_checkpoint_id AS ref_id
  FROM rc_entries e JOIN {batch} b ON b.run_id = e.run_id AND b.semantics = 'pr'
  WHERE e.ref_checkpoint_id IS NOT NULL AND e.ref_checkpoint_id < e.checkpoint_id
),
resets AS (
  SELECT l.run_id, l.checkpoint_id, l.ref_id,
         max(CASE WHEN j.seq IS NULL THEN 0 ELSE 1 END) AS f7, max(CASE WHEN m.checkpoint_id IS NULL THEN 0 ELSE 1 END) AS f14
  FROM links l
  JOIN rc_checkpoints c ON c.run_id = l.run_id AND c.checkpoint_id = l.checkpoint_id
  JOIN rc_checkpoints p ON p.run_id = l.run_id AND p.checkpoint_id = l.ref_id
  LEFT JOIN rc_events j ON j.run_id = l.run_id AND j.kind = 'jobmanager_failover'
                       AND j.seq > p.decided_seq AND j.seq < c.decided_seq
  LEFT JOIN rc_checkpoints m ON m.run_id = l.run_id AND m.checkpoint_id > l.ref_id AND m.checkpoint_id < l.checkpoint_id
                            AND m.completed AND m.status = 'GLOBAL' AND m.completed_seq < c.decided_seq
  GROUP BY l.run_id, l.checkpoint_id, l.ref_id
),
chain (run_id, head, cur, depth, streak, pend7, pend14, used7, used14) AS (
  SELECT run_id, checkpoint_id, ref_id, 1, 1, f7, f14, 0, 0 FROM resets
  UNION ALL
  SELECT c.run_id, c.head, r.ref_id, c.depth + 1,
         CASE WHEN c.pend7 = 1 OR c.pend14 = 1 THEN 1 ELSE c.streak + 1 END, r.f7, r.f14,
         greatest(c.used7, c.pend7), greatest(c.used14, c.pend14)
  FROM chain c
  JOIN resets r ON r.run_id = c.run_id AND r.checkpoint_id = c.cur
  JOIN {batch} b ON b.run_id = c.run_id
  WHERE c.streak <= b.max_consecutive_failures
),
streaks AS (
  SELECT c.run_id, c.head, max(c.used7) AS used7, max(c.used14) AS used14
  FROM chain c JOIN {batch} r ON r.run_id = c.run_id
  GROUP BY c.run_id, c.head, r.max_consecutive_failures
  HAVING max(c.depth) > r.max_consecutive_failures AND max(c.streak) <= r.max_consecutive_failures
)
