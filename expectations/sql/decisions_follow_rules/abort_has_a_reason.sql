-- Every ABORTED checkpoint had a failure (a declined or timed-out subtask), and its recorded reason holds
-- for that checkpoint (an abort without a rule of PROTOCOL.md 3.4 behind it is a wrong decision). Flink's
-- checkpoint timeout ('checkpoint-expired') holds when a subtask timed out; whether it may end a checkpoint
-- with regional checkpoints on is silent_task_fails_its_region's question.
WITH prior AS (
  SELECT a.run_id, a.checkpoint_id, count(b.checkpoint_id) AS n
  FROM rc_checkpoints a LEFT JOIN rc_checkpoints b
    ON b.run_id = a.run_id AND b.completed AND b.checkpoint_id < a.checkpoint_id
  GROUP BY a.run_id, a.checkpoint_id
)
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN c.failed_region_count = 0 AND c.declined_count = 0 AND c.timed_out_count = 0
            THEN 'ABORTED without any declined or timed-out subtask'
            ELSE concat('ABORTED for ', coalesce(c.reason, 'no reason'), ', which does not hold') END AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
JOIN prior ON prior.run_id = c.run_id AND prior.checkpoint_id = c.checkpoint_id
WHERE c.status = 'ABORTED'
  AND ((c.failed_region_count = 0 AND c.declined_count = 0 AND c.timed_out_count = 0)
       OR NOT coalesce(CASE c.reason
            WHEN 'regional-checkpoints-disabled' THEN NOT r.region_enabled
            WHEN 'single-region' THEN c.num_regions = 1
            WHEN 'all-regions-failed' THEN c.failed_region_count = c.num_regions
            WHEN 'no-completed-checkpoint' THEN prior.n = 0
            WHEN 'failure-ratio-exceeded' THEN CAST(c.failed_region_count AS DOUBLE) / c.num_regions > r.max_failure_ratio
            WHEN 'forced-global-failed' THEN c.forced_global
            WHEN 'coordinator-no-region-fallback' THEN NOT r.coordinator_fallback
            WHEN 'final-checkpoint-must-be-global' THEN c.final
            WHEN 'checkpoint-expired' THEN c.timed_out_count > 0
            ELSE false END, false))
