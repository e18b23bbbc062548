-- A fresh entry holds handles written no later than N; a referenced entry holds handles written no later
-- than its refCheckpointId (the same physical handles, pre-merged, never newer state).
SELECT e.run_id, e.checkpoint_id, e.region, e.subtask, e.operator, NULL AS split,
       concat(CASE WHEN e.ref_checkpoint_id IS NULL THEN 'fresh entry' ELSE concat('entry referencing ', e.ref_checkpoint_id) END,
              ' holds handles written by checkpoints ', e.min_origin, '..', e.max_origin) AS detail
FROM rc_entries e
JOIN {batch} r ON r.run_id = e.run_id
WHERE e.max_origin > coalesce(e.ref_checkpoint_id, e.checkpoint_id)
