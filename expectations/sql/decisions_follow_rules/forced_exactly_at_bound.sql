-- Tier 1: with regional checkpoints on, N is forced global exactly when the consecutive-regional counter
-- before N has reached max-consecutive-failures (the scenario's setting). The one other checkpoint that may
-- be forced is a bounded job's final one: once all sources are exhausted the next checkpoint is mandatory
-- global (PROTOCOL.md section 6; the PR forces it, checkAllSourcesFinishedAndForceGlobal, where the FLIP's
-- coordinator aborts a REGIONAL final one instead). The flag is read when N is decided, not when it was
-- triggered: the counter it is judged against is the one the decision read (counter_at_decision); a checkpoint
-- aborted before any decision (a failover's, a subsumption's or the shutdown's abort) was never judged forced or not.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat(CASE WHEN c.forced_global THEN 'forced global' ELSE 'not forced' END,
              ' with counter ', c.decision_counter, ' and max-consecutive-failures ', r.max_consecutive_failures) AS detail
FROM (
  SELECT c.*, coalesce(CAST(get_json_object(ev.detail, '$.counter_at_decision') AS INT),
                       CASE WHEN c.reason IN ('job-failover-region', 'checkpoint-subsumed', 'checkpoint-coordinator-shutdown') THEN NULL
                            ELSE c.counter_before END) AS decision_counter
  FROM rc_checkpoints c
  LEFT JOIN rc_events ev ON ev.run_id = c.run_id AND ev.seq = c.decided_seq
) c
JOIN {batch} r ON r.run_id = c.run_id
WHERE c.decided_seq IS NOT NULL AND c.decision_counter IS NOT NULL
  AND c.forced_global <> (r.region_enabled AND (c.decision_counter >= r.max_consecutive_failures
                                               OR (c.forced_global AND c.final)))
