-- Storage safety needs the complete history (deletions, retention), and every named object's presence decided
-- (a real-Flink run, regionchaos.flink.tables: a race leaves a named file undecided, inventory kind 'unresolved').
SELECT r.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       'history incomplete: no run_started or no run_finished event' AS detail
FROM {batch} r
WHERE NOT r.started OR NOT r.run_finished
UNION ALL
SELECT c.run_id, c.checkpoint_id, NULL, NULL, NULL, NULL,
       'cleaner deleted objects but the history does not name them (deleted_keys missing)' AS detail
FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
JOIN rc_events e ON e.run_id = c.run_id AND e.seq = c.decided_seq
WHERE c.deleted_count > 0 AND get_json_object(e.detail, '$.deleted_keys') IS NULL
UNION ALL
SELECT i.run_id, i.checkpoint_id, NULL, NULL, NULL, NULL,
       concat('whether ', i.key, ' was on storage is undecided (a race between the listing and subsumption)') AS detail
FROM rc_inventory i JOIN {batch} r ON r.run_id = i.run_id
WHERE i.kind = 'unresolved'
