-- Checkpoint metadata never names a missing object: when a new JobManager recovers the checkpoints whose
-- _metadata is on storage, every object they name is there (missing_objects of jobmanager_failover is the
-- listing it takes anyway for its orphan clean-up).
SELECT e.run_id, CAST(regexp_extract(m.key, 'chk-([0-9]+)/', 1) AS BIGINT) AS checkpoint_id, NULL AS region,
       NULL AS subtask, NULL AS operator, NULL AS split,
       concat('JobManager failover at seq ', e.seq, ' recovered metadata naming missing object ', m.key) AS detail
FROM (SELECT run_id, seq, explode(missing_objects) AS key FROM rc_events
      WHERE kind = 'jobmanager_failover' AND size(missing_objects) > 0) m
JOIN rc_events e ON e.run_id = m.run_id AND e.seq = m.seq
JOIN {batch} r ON r.run_id = e.run_id
