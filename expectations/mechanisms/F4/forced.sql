-- explains: decisions_follow_rules.forced_exactly_at_bound
-- F4 (PR, max-consecutive-failures 0): a checkpoint not forced although its counter (0) has reached the bound 0:
-- the PR sets the force flag only after a REGIONAL checkpoint completed.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
WHERE c.decided_seq IS NOT NULL AND r.max_consecutive_failures = 0 AND NOT c.forced_global AND c.counter_before = 0
