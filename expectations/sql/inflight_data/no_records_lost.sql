-- No record is ever lost across recovery and rescale: on restore, the recovered channel state starts exactly
-- where the restored counter stopped, so no records_lost event is ever observed.
SELECT e.run_id, CAST(get_json_object(e.detail, '$.checkpoint_id') AS BIGINT) AS checkpoint_id, NULL AS region,
       NULL AS subtask, 'counter' AS operator, e.split,
       concat('records [', e.start, ', ', e.end, ') of split ', e.split, ' lost on restore at seq ', e.seq) AS detail
FROM rc_events e
JOIN {batch} r ON r.run_id = e.run_id
WHERE e.kind = 'records_lost'
