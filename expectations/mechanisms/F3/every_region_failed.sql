-- explains: decisions_follow_rules.regional_mixes_fresh_and_referenced
-- F3 (PR, max-failure-ratio 1.0): a REGIONAL checkpoint whose decision failed every region of the job (nothing
-- fresh): the PR has no all-regions-failed abort.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM rc_checkpoints c
WHERE c.status = 'REGIONAL' AND c.failed_region_count >= c.num_regions
