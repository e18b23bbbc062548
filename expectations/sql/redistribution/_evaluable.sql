-- Each global restore is compared with the metadata of the checkpoint it restored from.
SELECT r.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       'history incomplete: no run_started or no run_finished event' AS detail
FROM {batch} r WHERE NOT r.started OR NOT r.run_finished
UNION ALL
SELECT e.run_id, e.restore_from, NULL, NULL, NULL, NULL,
       concat('global restore at seq ', e.seq, ' restored from checkpoint ', e.restore_from,
              ', whose metadata is not in the history') AS detail
FROM rc_events e JOIN {batch} r ON r.run_id = e.run_id
LEFT JOIN rc_checkpoints c ON c.run_id = e.run_id AND c.checkpoint_id = e.restore_from AND c.completed
WHERE e.kind = 'global_restore' AND c.checkpoint_id IS NULL
