-- refCheckpointId is empty for fresh state; otherwise it is < N and names a checkpoint that COMPLETED
-- (a checkpoint_completed event in the history). An aborted or voided checkpoint has no state to refer to.
SELECT e.run_id, e.checkpoint_id, e.region, e.subtask, e.operator, NULL AS split,
       concat('refCheckpointId ', e.ref_checkpoint_id,
              CASE WHEN ref.checkpoint_id IS NULL THEN ' names no checkpoint of this run'
                   WHEN e.ref_checkpoint_id >= e.checkpoint_id THEN ' is not older than the checkpoint'
                   ELSE concat(' names checkpoint ', ref.checkpoint_id, ', which is ', coalesce(ref.status, 'undecided'),
                               ' (never completed)') END) AS detail
FROM rc_entries e
JOIN {batch} r ON r.run_id = e.run_id
LEFT JOIN rc_checkpoints ref ON ref.run_id = e.run_id AND ref.checkpoint_id = e.ref_checkpoint_id
WHERE e.ref_checkpoint_id IS NOT NULL
  AND (ref.checkpoint_id IS NULL OR NOT ref.completed OR e.ref_checkpoint_id >= e.checkpoint_id)
