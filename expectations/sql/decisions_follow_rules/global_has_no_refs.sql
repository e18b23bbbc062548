-- A GLOBAL checkpoint has no failed region and every entry is fresh (no refCheckpointId).
SELECT c.run_id, c.checkpoint_id, e.region, e.subtask, e.operator, NULL AS split,
       CASE WHEN c.failed_region_count > 0 THEN concat('GLOBAL with failed regions ', array_join(c.failed_regions, ','))
            WHEN c.metadata_type <> 'GLOBAL' THEN concat('decided GLOBAL, metadata says ', c.metadata_type)
            ELSE concat('GLOBAL entry references checkpoint ', e.ref_checkpoint_id) END AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
LEFT JOIN rc_entries e ON e.run_id = c.run_id AND e.checkpoint_id = c.checkpoint_id AND e.ref_checkpoint_id IS NOT NULL
WHERE c.status = 'GLOBAL'
  AND (c.failed_region_count > 0 OR c.metadata_type <> 'GLOBAL' OR e.checkpoint_id IS NOT NULL)
