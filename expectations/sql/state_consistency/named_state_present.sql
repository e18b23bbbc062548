-- Every element a completed checkpoint's metadata names inside a readable state object is in that object
-- (the segment exists and holds the element).
SELECT s.run_id, s.checkpoint_id, NULL AS region, s.subtask, s.operator, s.split,
       concat('segment ', s.segment, ' of ', s.object_key, ' lacks element ', s.element) AS detail
FROM rc_state_values s
JOIN {batch} r ON r.run_id = s.run_id
WHERE NOT s.found
