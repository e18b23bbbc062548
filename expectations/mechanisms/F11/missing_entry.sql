-- explains: metadata_well_formed.one_entry_per_operator_subtask
-- F11, the declining task's side: a REGIONAL checkpoint N under the PR's semantics (scenario.json) whose fallback L
-- (the last checkpoint completed before N's decision) ran at a smaller parallelism than N. An operator whose
-- entries in N are one per subtask at N's parallelism (declared so, no index twice) except for missing indices
-- that all belong to regions N failed (the task record of the operator's vertex, rc_task_responses of N) and at
-- which L's metadata has no entry of the operator: nothing was there to graft, so the declining task has none.
-- Its row for N is F11's; a missing entry at an index L has, in a region that did not fail, or an operator with
-- any other defect in N, is not.
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
ops AS (
  SELECT operator, CASE WHEN operator IN ('source', 'offsets') THEN 'source' ELSE 'process' END AS vertex
  FROM (SELECT explode(array('source', 'offsets', 'counter', 'epoch', 'rules', 'sink')) AS operator)
),
slots AS (  -- every operator x subtask index of N's parallelism, with its task's region in N
  SELECT u.run_id, u.checkpoint_id, u.l_id, u.failed_regions, ops.operator, t.subtask, t.region
  FROM upscaled u CROSS JOIN ops
  JOIN rc_task_responses t ON t.run_id = u.run_id AND t.checkpoint_id = u.checkpoint_id AND t.vertex = ops.vertex
),
per_op AS (
  SELECT s.run_id, s.checkpoint_id, s.operator, u.job_parallelism,
         count(CASE WHEN e.subtask IS NULL AND NOT (array_contains(s.failed_regions, s.region) AND le.subtask IS NULL)
               THEN 1 END) AS missing_otherwise,
         count(CASE WHEN e.subtask IS NULL THEN 1 END) AS missing
  FROM slots s
  JOIN upscaled u ON u.run_id = s.run_id AND u.checkpoint_id = s.checkpoint_id
  LEFT JOIN (SELECT DISTINCT run_id, checkpoint_id, operator, subtask FROM rc_entries) e
    ON e.run_id = s.run_id AND e.checkpoint_id = s.checkpoint_id AND e.operator = s.operator AND e.subtask = s.subtask
  LEFT JOIN (SELECT DISTINCT run_id, checkpoint_id, operator, subtask FROM rc_entries) le
    ON le.run_id = s.run_id AND le.checkpoint_id = s.l_id AND le.operator = s.operator AND le.subtask = s.subtask
  GROUP BY s.run_id, s.checkpoint_id, s.operator, u.job_parallelism
),
entries AS (
  SELECT run_id, checkpoint_id, operator, count(*) AS n, count(DISTINCT subtask) AS distinct_subtasks,
         min(subtask) AS lo, max(subtask) AS hi, min(parallelism) AS declared_lo, max(parallelism) AS declared_hi
  FROM rc_entries GROUP BY run_id, checkpoint_id, operator
)
SELECT p.run_id, p.checkpoint_id, NULL AS region, NULL AS subtask, p.operator, NULL AS split
FROM per_op p
JOIN entries e ON e.run_id = p.run_id AND e.checkpoint_id = p.checkpoint_id AND e.operator = p.operator
WHERE p.missing > 0 AND p.missing_otherwise = 0 AND e.n = e.distinct_subtasks AND e.lo >= 0
  AND e.hi < p.job_parallelism AND e.declared_lo = p.job_parallelism AND e.declared_hi = p.job_parallelism
  AND e.n + p.missing = p.job_parallelism
