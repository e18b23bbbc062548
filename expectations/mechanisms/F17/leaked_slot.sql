-- explains: liveness.global_after_faults
-- F17 (PR: completeRegionalCheckpoint removes the pending checkpoint inside its try, not in a finally): under the
-- PR's semantics (scenario.json) the completed checkpoint store refused a REGIONAL checkpoint (the history's
-- `store_failed` of type REGIONAL), which then stays in the pending table and holds a concurrent-checkpoint slot.
-- When no checkpoint is triggered after the last such failure (every slot held, no new JobManager), no GLOBAL
-- checkpoint can follow the faults: the run's liveness row is F17's. A run that triggered a checkpoint after the
-- failure, or a refused GLOBAL checkpoint (removed in completePendingCheckpoint's finally), is not.
WITH leaks AS (
  SELECT f.run_id, max(f.seq) AS seq
  FROM rc_events f
  JOIN {batch} r ON r.run_id = f.run_id AND r.semantics = 'pr'
  WHERE f.kind = 'store_failed' AND get_json_object(f.detail, '$.type') = 'REGIONAL'
  GROUP BY f.run_id
)
SELECT DISTINCT l.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM leaks l
LEFT ANTI JOIN rc_events t ON t.run_id = l.run_id AND t.kind = 'checkpoint_triggered' AND t.seq > l.seq
