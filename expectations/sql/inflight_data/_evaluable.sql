-- In-flight data is judged on a complete history and, with unaligned checkpoints, on at least one completed
-- checkpoint whose counter state (consumed offsets) can be read back.
SELECT r.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       'history incomplete: no run_started or no run_finished event' AS detail
FROM {batch} r WHERE NOT r.started OR NOT r.run_finished
UNION ALL
SELECT r.run_id, NULL, NULL, NULL, NULL, NULL, 'unaligned checkpoints but no readable counter state'
FROM {batch} r
LEFT JOIN (SELECT run_id, count(*) AS n FROM rc_state_values WHERE operator = 'counter' AND found GROUP BY run_id) s
  ON s.run_id = r.run_id
WHERE r.unaligned AND r.started AND s.n IS NULL
