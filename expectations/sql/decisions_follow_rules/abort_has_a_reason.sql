-- Every ABORTED checkpoint had a failure (a declined or timed-out subtask), and its recorded reason holds
-- for that checkpoint (an abort without a rule of PROTOCOL.md 3.4 behind it is a wrong decision). Flink's
-- checkpoint timeout ('checkpoint-expired') holds when a subtask timed out; whether it may end a checkpoint
-- with regional checkpoints on is silent_task_fails_its_region's question. Two aborts are no decision on the
-- checkpoint's responses and need no failed subtask: 'job-failover-region' (a failover aborts every pending
-- checkpoint, PROTOCOL.md section 5) holds when a restart follows at the same emulated instant with no trigger
-- in between; 'checkpoint-subsumed' when a newer checkpoint completed at that instant, before the abort.
-- 'finalize-checkpoint-failure' holds when the history records the completed checkpoint store refusing it;
-- 'checkpoint-coordinator-shutdown' when the job finished (its coordinator shut down, aborting what was pending).
-- 'no-completed-checkpoint' when no checkpoint had completed before the decision, in the history's order.
WITH timed AS (  -- only the kinds the questions below read: each decision, and what completed, restarted or
                 -- was triggered around it
  SELECT run_id, seq, kind, checkpoint_id, CAST(get_json_object(detail, '$.time_ms') AS BIGINT) AS time_ms
  FROM rc_events
  WHERE kind IN ('checkpoint_decided', 'checkpoint_completed', 'checkpoint_triggered', 'region_failover',
                 'global_restore', 'global_restart_from_scratch')
),
prior AS (  -- each decision: how many checkpoints had completed before it, in the history's order. Not by id:
            -- with concurrent checkpoints an older one may complete after a newer one was aborted for want of
            -- a completed checkpoint. No decision event: no row, so such an abort's reason does not hold.
  SELECT d.run_id, d.checkpoint_id, count(n.seq) AS n
  FROM timed d LEFT JOIN timed n ON n.run_id = d.run_id AND n.kind = 'checkpoint_completed' AND n.seq < d.seq
  WHERE d.kind = 'checkpoint_decided'
  GROUP BY d.run_id, d.checkpoint_id
),
restart AS (  -- each abort: does a restart follow at its instant before any trigger
  SELECT d.run_id, d.checkpoint_id,
         min(CASE WHEN e.kind IN ('region_failover', 'global_restore', 'global_restart_from_scratch') THEN e.seq END)
           AS restart_seq,
         min(CASE WHEN e.kind = 'checkpoint_triggered' THEN e.seq END) AS trigger_seq
  FROM timed d JOIN timed e ON e.run_id = d.run_id AND e.seq > d.seq AND e.time_ms = d.time_ms
                            AND e.kind <> 'checkpoint_decided' AND e.kind <> 'checkpoint_completed'
  WHERE d.kind = 'checkpoint_decided'
  GROUP BY d.run_id, d.checkpoint_id
),
refused AS (
  SELECT DISTINCT run_id, checkpoint_id FROM rc_events WHERE kind = 'store_failed'
),
newer AS (  -- each abort: did a newer checkpoint complete at its instant, before it
  SELECT d.run_id, d.checkpoint_id, count(n.checkpoint_id) AS completed
  FROM timed d JOIN timed n ON n.run_id = d.run_id AND n.kind = 'checkpoint_completed' AND n.seq < d.seq
                            AND n.time_ms = d.time_ms AND n.checkpoint_id > d.checkpoint_id
  WHERE d.kind = 'checkpoint_decided'
  GROUP BY d.run_id, d.checkpoint_id
)
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN c.failed_region_count = 0 AND c.declined_count = 0 AND c.timed_out_count = 0
            THEN 'ABORTED without any declined or timed-out subtask'
            ELSE concat('ABORTED for ', coalesce(c.reason, 'no reason'), ', which does not hold') END AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
LEFT JOIN prior ON prior.run_id = c.run_id AND prior.checkpoint_id = c.checkpoint_id
LEFT JOIN restart ON restart.run_id = c.run_id AND restart.checkpoint_id = c.checkpoint_id
LEFT JOIN newer ON newer.run_id = c.run_id AND newer.checkpoint_id = c.checkpoint_id
LEFT JOIN refused ON refused.run_id = c.run_id AND refused.checkpoint_id = c.checkpoint_id
WHERE c.status = 'ABORTED'
  AND ((c.failed_region_count = 0 AND c.declined_count = 0 AND c.timed_out_count = 0
        AND coalesce(c.reason, '') NOT IN ('job-failover-region', 'checkpoint-subsumed', 'finalize-checkpoint-failure',
                                        'checkpoint-coordinator-shutdown'))
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
            WHEN 'job-failover-region' THEN restart.restart_seq IS NOT NULL
                                            AND (restart.trigger_seq IS NULL OR restart.trigger_seq > restart.restart_seq)
            WHEN 'checkpoint-subsumed' THEN newer.completed > 0
            WHEN 'checkpoint-coordinator-shutdown' THEN r.job_finished
            WHEN 'finalize-checkpoint-failure' THEN refused.checkpoint_id IS NOT NULL
            ELSE false END, false))
