-- Nothing unreferenced outlives the cleaner: every state object under checkpoints/ at the end is named by a
-- retained checkpoint's _metadata (file merging: an object lives while any retained checkpoint names it).
SELECT i.run_id, i.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('object ', i.key, ' (', i.size_bytes, ' bytes) is referenced by no retained checkpoint; checkpoint ',
              i.checkpoint_id, ' is ', coalesce(c.status, 'unknown to the history'),
              CASE WHEN c.completed THEN ' and was subsumed' ELSE '' END) AS detail
FROM rc_inventory i
JOIN {batch} r ON r.run_id = i.run_id
LEFT JOIN (SELECT DISTINCT run_id, object_key FROM rc_handles WHERE source = 'storage') h
  ON h.run_id = i.run_id AND h.object_key = i.key
LEFT JOIN rc_checkpoints c ON c.run_id = i.run_id AND c.checkpoint_id = i.checkpoint_id
WHERE i.area = 'checkpoints' AND i.kind <> 'metadata' AND h.object_key IS NULL
