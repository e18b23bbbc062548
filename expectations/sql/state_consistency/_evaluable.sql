-- State consistency needs counter state to read: at least one completed checkpoint whose counter entries
-- could be decoded from state objects still on storage. Without any, the check cannot be evaluated.
SELECT r.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       'no readable counter state in any completed checkpoint' AS detail
FROM {batch} r
LEFT JOIN (SELECT run_id, count(*) AS n FROM rc_state_values WHERE operator = 'counter' AND found GROUP BY run_id) s
  ON s.run_id = r.run_id
WHERE s.n IS NULL AND r.started
UNION ALL
SELECT r.run_id, NULL, NULL, NULL, NULL, NULL, 'history incomplete: no run_started or no run_finished event'
FROM {batch} r WHERE NOT r.started OR NOT r.run_finished
