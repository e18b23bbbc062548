-- An aborted checkpoint (or one voided by a JobManager crash before its metadata commit) leaves nothing
-- under its chk-N/ directory, not even _metadata.
SELECT i.run_id, i.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat(c.status, ' checkpoint left ', i.key) AS detail
FROM rc_inventory i
JOIN {batch} r ON r.run_id = i.run_id
JOIN rc_checkpoints c ON c.run_id = i.run_id AND c.checkpoint_id = i.checkpoint_id
WHERE i.area = 'checkpoints' AND c.status IN ('ABORTED', 'VOIDED')
