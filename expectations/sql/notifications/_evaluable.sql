-- Notifications are judged on every sink commit of a complete history.
SELECT r.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       'history incomplete: no run_started or no run_finished event' AS detail
FROM {batch} r WHERE NOT r.started OR NOT r.run_finished
