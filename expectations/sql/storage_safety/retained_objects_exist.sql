-- Every object named by a retained checkpoint's _metadata (those still on storage at the end) exists: it is
-- in the LIST of the prefix (whole objects; metadata_names_existing_objects looks inside them for the segments).
SELECT h.run_id, h.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('retained checkpoint names missing object ', h.object_key) AS detail
FROM rc_handles h
JOIN {batch} r ON r.run_id = h.run_id
LEFT JOIN rc_inventory i ON i.run_id = h.run_id AND i.key = h.object_key
WHERE h.source = 'storage' AND i.key IS NULL
