-- An event the source's coordinator sends a reader reaches it: a split assignment its gateway held back
-- (`split_held`: the gateway was closed for a checkpoint) is delivered to that subtask later (a `split_assigned`
-- of the split to it), or the subtask restarts (a region failover of its region, a global restore or a restart
-- from scratch, a JobManager failover), which gives the split back to the enumerator, before the run ends.
-- One held forever is a split nobody reads: the job's input stalls there (a bounded job never finishes).
WITH held AS (
  SELECT run_id, seq, split, subtask FROM rc_events WHERE kind = 'split_held'
),
released AS (
  SELECT h.run_id, h.seq,
         max(CASE WHEN e.kind = 'split_assigned' AND e.split = h.split AND e.subtask = h.subtask THEN 1
                  WHEN e.kind = 'region_failover' AND e.region = h.subtask THEN 1
                  WHEN e.kind IN ('global_restore', 'global_restart_from_scratch', 'jobmanager_failover') THEN 1
                  ELSE 0 END) AS released
  FROM held h LEFT JOIN rc_events e ON e.run_id = h.run_id AND e.seq > h.seq
  GROUP BY h.run_id, h.seq
)
SELECT h.run_id, NULL AS checkpoint_id, h.subtask AS region, h.subtask, 'source' AS operator, h.split,
       concat('split ', h.split, ' assigned to source subtask ', h.subtask, ' (history event ', h.seq,
              ') was held by its closed gateway and never delivered') AS detail
FROM held h
JOIN {batch} r ON r.run_id = h.run_id
JOIN released x ON x.run_id = h.run_id AND x.seq = h.seq
WHERE x.released = 0 AND r.run_finished
