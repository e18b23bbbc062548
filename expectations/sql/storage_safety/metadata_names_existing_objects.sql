-- Checkpoint metadata never names state that is not there: every state and channel-state segment a _metadata
-- still on storage names resolves, i.e. its object is in the LIST of the prefix AND that object holds the
-- segment (read from the object itself, rc_object_segments). retained_objects_exist judges whole objects
-- (LIST only); this rule judges the segments inside them, so a present object that lacks a named segment (a
-- merged file written short, a segment of another checkpoint's file) fails here only; a missing object fails
-- both (it holds no segment).
SELECT n.run_id, n.checkpoint_id, NULL AS region, n.subtask, n.operator, NULL AS split,
       concat('_metadata names ', n.kind, ' segment ', n.segment, ' of ', n.object_key,
              CASE WHEN i.key IS NULL THEN ', an object not on storage' ELSE ', which that object does not hold' END) AS detail
FROM rc_named_segments n
JOIN {batch} r ON r.run_id = n.run_id
LEFT JOIN rc_inventory i ON i.run_id = n.run_id AND i.key = n.object_key
LEFT JOIN rc_object_segments s ON s.run_id = n.run_id AND s.object_key = n.object_key AND s.segment = n.segment
WHERE i.key IS NULL OR s.segment IS NULL
