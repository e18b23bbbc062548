-- explains: decisions_follow_rules.counter_follows_decisions
-- F6 (PR): a forced checkpoint aborted by the failure ratio keeps the counter (and the force flag): the decision
-- is ABORTED for failure-ratio-exceeded, forced, with the counter unchanged where tier 2 resets it.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM rc_checkpoints c
WHERE c.status = 'ABORTED' AND c.forced_global AND c.reason = 'failure-ratio-exceeded'
  AND c.counter_after = c.counter_before
