-- explains: decisions_follow_rules.regional_mixes_fresh_and_referenced, decisions_follow_rules.failed_regions_follow_responses
-- F11 (PR: the fallback is grafted per operator and subtask index only where the last completed checkpoint has an
-- entry): a REGIONAL checkpoint N under the PR's semantics (scenario.json) whose fallback L (the last checkpoint
-- completed before N's decision) ran at a smaller parallelism of the time than N (an upscale restored from it).
-- A region N failed that holds fresh entries (ref_checkpoint_id NULL in N's metadata) only at operator x subtask
-- indices where L's metadata has no entry (rc_entries of L) kept the state its acknowledging tasks just wrote:
-- its rows (the failed region holding fresh state; the region that must fail keeping it) are F11's. A failed
-- region with a fresh entry at an index L has, or any other region, is not.
WITH n AS (
  SELECT n.run_id, n.checkpoint_id, n.job_parallelism, n.failed_regions, max(l.checkpoint_id) AS l_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.completed AND l.completed_seq < n.decided_seq
  WHERE n.status = 'REGIONAL' AND n.completed
  GROUP BY n.run_id, n.checkpoint_id, n.job_parallelism, n.failed_regions
),
upscaled AS (
  SELECT n.* FROM n JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.checkpoint_id = n.l_id
  WHERE l.job_parallelism < n.job_parallelism
),
fresh AS (  -- per failed region of N: its fresh entries, and how many of them sit where L has an entry
  SELECT e.run_id, e.checkpoint_id, e.region, count(*) AS fresh, count(le.subtask) AS at_an_index_of_l
  FROM upscaled u
  JOIN rc_entries e ON e.run_id = u.run_id AND e.checkpoint_id = u.checkpoint_id
                   AND array_contains(u.failed_regions, e.region) AND e.ref_checkpoint_id IS NULL
  LEFT JOIN rc_entries le ON le.run_id = e.run_id AND le.checkpoint_id = u.l_id AND le.operator = e.operator
                         AND le.subtask = e.subtask
  GROUP BY e.run_id, e.checkpoint_id, e.region
)
SELECT run_id, checkpoint_id, region, NULL AS subtask, NULL AS operator, NULL AS split
FROM fresh WHERE at_an_index_of_l = 0
