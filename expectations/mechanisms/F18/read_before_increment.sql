-- explains: flip_bounds.consecutive_regional_within_bound
-- F18 (both semantics; Flink's timing): tryCompleteRegionalCheckpoint reads the consecutive counter at a REGIONAL
-- checkpoint N's decision (the history's first `fallback_requested` of N), and completeRegionalCheckpoint
-- increments it at a completion, after the asynchronous region fallback. An older REGIONAL checkpoint M completed
-- after N's decision had not yet counted when N read the counter. N's row past the bound is F18's when such an M
-- exists; a streak past the bound whose every REGIONAL checkpoint was decided after the older ones completed is
-- not.
WITH decided AS (
  SELECT run_id, checkpoint_id, min(seq) AS seq FROM rc_events WHERE kind = 'fallback_requested'
  GROUP BY run_id, checkpoint_id
)
SELECT DISTINCT n.run_id, n.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM rc_checkpoints n
JOIN decided d ON d.run_id = n.run_id AND d.checkpoint_id = n.checkpoint_id
JOIN rc_checkpoints m ON m.run_id = n.run_id AND m.checkpoint_id < n.checkpoint_id AND m.status = 'REGIONAL'
                     AND m.completed AND m.completed_seq > d.seq
WHERE n.status = 'REGIONAL' AND n.completed
