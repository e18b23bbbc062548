-- Every completed checkpoint N has exactly one OperatorSubtaskState per operator x subtask at the job's
-- parallelism of the time P (replayed from the history's restores, not read from the metadata): per operator,
-- P entries with P distinct subtasks 0..P-1; and each entry's declared parallelism is P.
WITH cp AS (
  SELECT c.run_id, c.checkpoint_id, c.job_parallelism
  FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
  WHERE c.completed
),
ops AS (SELECT explode(array('source', 'offsets', 'counter', 'epoch', 'rules', 'sink')) AS operator),
per_op AS (
  SELECT run_id, checkpoint_id, operator, count(*) AS n, count(DISTINCT subtask) AS distinct_subtasks,
         min(subtask) AS lo, max(subtask) AS hi, min(parallelism) AS declared_lo, max(parallelism) AS declared_hi
  FROM rc_entries GROUP BY run_id, checkpoint_id, operator
)
SELECT cp.run_id, cp.checkpoint_id, NULL AS region, NULL AS subtask, ops.operator, NULL AS split,
       CASE WHEN p.n IS NULL THEN concat('no entry for this operator; the job ran at parallelism ', cp.job_parallelism)
            WHEN p.declared_lo <> cp.job_parallelism OR p.declared_hi <> cp.job_parallelism
              THEN concat('metadata declares parallelism ', p.declared_lo,
                          CASE WHEN p.declared_hi <> p.declared_lo THEN concat('..', p.declared_hi) ELSE '' END,
                          ', the job ran at ', cp.job_parallelism)
            ELSE concat(p.n, ' entries for ', p.distinct_subtasks, ' distinct subtasks ', p.lo, '..', p.hi,
                        '; expected one for each of 0..', cp.job_parallelism - 1) END AS detail
FROM cp CROSS JOIN ops
LEFT JOIN per_op p ON p.run_id = cp.run_id AND p.checkpoint_id = cp.checkpoint_id AND p.operator = ops.operator
WHERE p.n IS NULL OR p.n <> cp.job_parallelism OR p.distinct_subtasks <> cp.job_parallelism OR p.lo <> 0
   OR p.hi <> cp.job_parallelism - 1 OR p.declared_lo <> cp.job_parallelism OR p.declared_hi <> cp.job_parallelism
UNION ALL
SELECT e.run_id, e.checkpoint_id, NULL, NULL, e.operator, NULL, concat('entries for unknown operator ', e.operator)
FROM rc_entries e JOIN {batch} r ON r.run_id = e.run_id
WHERE e.operator NOT IN ('source', 'offsets', 'counter', 'epoch', 'rules', 'sink')
