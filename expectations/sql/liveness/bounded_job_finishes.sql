-- A bounded job finishes (every source exhausted, the final checkpoint completed), and it finishes on a
-- GLOBAL checkpoint: its last completed checkpoint is GLOBAL.
WITH last AS (
  SELECT run_id, max_by(status, checkpoint_id) AS last_status, max(checkpoint_id) AS last_completed
  FROM rc_checkpoints WHERE completed GROUP BY run_id
)
SELECT r.run_id, l.last_completed AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN NOT r.job_finished THEN 'bounded job did not finish'
            ELSE concat('bounded job ended on a ', coalesce(l.last_status, 'missing'), ' checkpoint') END AS detail
FROM {batch} r LEFT JOIN last l ON l.run_id = r.run_id
WHERE r.bounded AND r.started AND r.run_finished
  AND (NOT r.job_finished OR coalesce(l.last_status, '') <> 'GLOBAL')
