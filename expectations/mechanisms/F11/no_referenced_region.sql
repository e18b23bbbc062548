-- explains: decisions_follow_rules.regional_mixes_fresh_and_referenced
-- F11, the checkpoint's own row ("REGIONAL with k fresh and 0 referenced regions"): a REGIONAL checkpoint N under
-- the PR whose fallback L ran at a smaller parallelism than N, in which no entry references an earlier checkpoint
-- because every failed region (the decision's) sits at indices where L has no entry: each failed region's
-- entries in N are all fresh, none at an operator x subtask index of L's metadata, and at least one failed region
-- has an entry. The key row has no region (the rule's row has none), so it matches every row of the rule in N:
-- it is returned only when each of those is F11's too (no referenced entry in N at all, so no region mixes or
-- falls back without failing; no fresh entry of a failed region at an index of L).
WITH n AS (
  SELECT n.run_id, n.checkpoint_id, n.job_parallelism, n.failed_regions, max(l.checkpoint_id) AS l_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.completed AND l.completed_seq < n.decided_seq
  WHERE n.status = 'REGIONAL' AND n.completed AND size(n.failed_regions) > 0
  GROUP BY n.run_id, n.checkpoint_id, n.job_parallelism, n.failed_regions
),
upscaled AS (
  SELECT n.* FROM n JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.checkpoint_id = n.l_id
  WHERE l.job_parallelism < n.job_parallelism
),
per_cp AS (
  SELECT u.run_id, u.checkpoint_id,
         count(CASE WHEN e.ref_checkpoint_id IS NOT NULL THEN 1 END) AS referenced,
         count(CASE WHEN array_contains(u.failed_regions, e.region) THEN 1 END) AS failed_entries,
         count(CASE WHEN array_contains(u.failed_regions, e.region) AND le.subtask IS NOT NULL THEN 1 END)
           AS failed_at_an_index_of_l
  FROM upscaled u
  JOIN rc_entries e ON e.run_id = u.run_id AND e.checkpoint_id = u.checkpoint_id
  LEFT JOIN rc_entries le ON le.run_id = e.run_id AND le.checkpoint_id = u.l_id AND le.operator = e.operator
                         AND le.subtask = e.subtask
  GROUP BY u.run_id, u.checkpoint_id
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM per_cp WHERE referenced = 0 AND failed_entries > 0 AND failed_at_an_index_of_l = 0
