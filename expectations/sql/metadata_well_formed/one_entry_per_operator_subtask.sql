-- Every completed checkpoint N has exactly one OperatorSubtaskState per operator x subtask at the job's
-- parallelism of the time (replayed from the history's restores, not read from the metadata), and the
-- metadata's declared parallelism is that parallelism.
WITH cp AS (
  SELECT c.run_id, c.checkpoint_id, c.job_parallelism
  FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
  WHERE c.completed
),
ops AS (SELECT explode(array('source', 'counter', 'epoch', 'rules', 'sink')) AS operator),
expected AS (
  SELECT cp.run_id, cp.checkpoint_id, ops.operator, explode(sequence(0, cp.job_parallelism - 1)) AS subtask
  FROM cp CROSS JOIN ops
),
actual AS (
  SELECT run_id, checkpoint_id, operator, subtask, count(*) AS n, max(parallelism) AS declared, max(region) AS region
  FROM rc_entries GROUP BY run_id, checkpoint_id, operator, subtask
)
SELECT coalesce(e.run_id, a.run_id) AS run_id, coalesce(e.checkpoint_id, a.checkpoint_id) AS checkpoint_id,
       a.region, coalesce(e.subtask, a.subtask) AS subtask, coalesce(e.operator, a.operator) AS operator,
       NULL AS split,
       CASE WHEN a.n IS NULL THEN 'no entry for this operator x subtask'
            WHEN e.subtask IS NULL THEN 'entry for a subtask beyond the parallelism of the time'
            WHEN a.n > 1 THEN concat(a.n, ' entries for one operator x subtask')
            ELSE concat('metadata declares parallelism ', a.declared, ', the job ran at ', cp.job_parallelism) END AS detail
FROM expected e
FULL OUTER JOIN actual a
  ON a.run_id = e.run_id AND a.checkpoint_id = e.checkpoint_id AND a.operator = e.operator AND a.subtask = e.subtask
LEFT JOIN cp ON cp.run_id = coalesce(e.run_id, a.run_id) AND cp.checkpoint_id = coalesce(e.checkpoint_id, a.checkpoint_id)
WHERE a.n IS NULL OR e.subtask IS NULL OR a.n > 1 OR a.declared <> cp.job_parallelism
