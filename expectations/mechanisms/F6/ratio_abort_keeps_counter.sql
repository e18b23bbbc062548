-- explains: decisions_follow_rules.counter_follows_decisions
-- F6 (PR): a forced checkpoint aborted by a guard the handler checks before its tier-2 branch keeps the
-- counter (and the force flag): the decision is ABORTED for failure-ratio-exceeded (step 6) or, in a job of
-- one region (after a downscale to parallelism 1), for single-region (the guard before it), forced, with the
-- counter unchanged where tier 2 resets it.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM rc_checkpoints c
WHERE c.status = 'ABORTED' AND c.forced_global AND c.reason IN ('failure-ratio-exceeded', 'single-region')
  AND c.counter_after = c.counter_before
