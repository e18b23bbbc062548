-- explains: decisions_follow_rules.counter_follows_decisions
-- F6 (PR): a forced checkpoint that fails anywhere but the handler's tier-2 branch keeps the counter (and the force
-- flag): the decision is ABORTED for failure-ratio-exceeded (step 6) or, in a job of one region (after a downscale to
-- parallelism 1), for single-region (the guard before it), forced, with the counter unchanged where tier 2 resets it.
-- So is a forced checkpoint every task acknowledged and whose metadata the completed checkpoint store refused (the
-- history's `store_failed` of it; ABORTED for finalize-checkpoint-failure): it never reaches the tier-2 branch, and
-- `completePendingCheckpoint` resets the counter and the flag only after `addCompletedCheckpointToStoreAndSubsumeOldest`,
-- which threw (raoraoxiong/flink fada049). The same abort with no store failure in the history is not F6's.
WITH refused AS (SELECT DISTINCT run_id, checkpoint_id FROM rc_events WHERE kind = 'store_failed')
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM rc_checkpoints c
LEFT JOIN refused f ON f.run_id = c.run_id AND f.checkpoint_id = c.checkpoint_id
WHERE c.status = 'ABORTED' AND c.forced_global AND c.counter_after = c.counter_before
  AND (c.reason IN ('failure-ratio-exceeded', 'single-region')
       OR (c.reason = 'finalize-checkpoint-failure' AND f.checkpoint_id IS NOT NULL))
