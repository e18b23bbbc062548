-- Within one checkpoint a split's counter never consumed records its source had not emitted yet
-- (consumed <= src).
SELECT c.run_id, c.checkpoint_id, NULL AS region, c.subtask, 'counter' AS operator, c.split,
       concat('counter consumed ', c.consumed, ' but the source emitted only ', s.src) AS detail
FROM rc_state_values c
JOIN {batch} r ON r.run_id = c.run_id
JOIN rc_state_values s ON s.run_id = c.run_id AND s.checkpoint_id = c.checkpoint_id AND s.operator = 'source'
                      AND s.split = c.split AND s.found
WHERE c.operator = 'counter' AND c.found AND c.consumed > s.src
