-- FLIP-147: a bounded job that finished ended on its final checkpoint (triggered after every source was
-- exhausted), and that checkpoint is GLOBAL.
SELECT e.run_id, e.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('job finished on checkpoint ', e.checkpoint_id, ' of type ',
              coalesce(get_json_object(e.detail, '$.type'), '?'), ', decided ', coalesce(c.status, 'never'),
              CASE WHEN NOT coalesce(c.final, false) THEN ', not a final checkpoint' ELSE '' END) AS detail
FROM rc_events e
JOIN {batch} r ON r.run_id = e.run_id
LEFT JOIN rc_checkpoints c ON c.run_id = e.run_id AND c.checkpoint_id = e.checkpoint_id
WHERE e.kind = 'job_finished'
  AND (c.status IS NULL OR c.status <> 'GLOBAL' OR NOT c.final OR get_json_object(e.detail, '$.type') <> 'GLOBAL'
       OR NOT r.bounded)
