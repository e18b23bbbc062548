-- The final checkpoint of a bounded job never completes REGIONAL (a failed region would never hear
-- "complete" and never commit its last transaction): it is GLOBAL or aborted and retried.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('final checkpoint completed REGIONAL with failed regions ', array_join(c.failed_regions, ',')) AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
WHERE c.final AND c.status = 'REGIONAL'
