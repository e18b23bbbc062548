-- Tier 1: with regional checkpoints on, N is forced global exactly when the consecutive-regional counter
-- before N has reached max-consecutive-failures (the scenario's setting). The one other checkpoint that may
-- be forced is a bounded job's final one: once all sources are exhausted the next checkpoint is mandatory
-- global (PROTOCOL.md section 6; the PR forces it, checkAllSourcesFinishedAndForceGlobal, where the FLIP's
-- coordinator aborts a REGIONAL final one instead).
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat(CASE WHEN c.forced_global THEN 'forced global' ELSE 'not forced' END,
              ' with counter ', c.counter_before, ' and max-consecutive-failures ', r.max_consecutive_failures) AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
WHERE c.decided_seq IS NOT NULL
  AND c.forced_global <> (r.region_enabled AND (c.counter_before >= r.max_consecutive_failures
                                               OR (c.forced_global AND c.final)))
