-- explains: liveness.bounded_job_finishes
-- F17 on a bounded job: the refused REGIONAL checkpoint holds the one concurrent-checkpoint slot (leaked_slot.sql:
-- a `store_failed` of type REGIONAL under the PR's semantics, no `checkpoint_triggered` after the last one), so no
-- checkpoint, the final one included, is triggered again and the job never finishes. The rule's row of such a run
-- that did not finish is F17's; one that finished on a REGIONAL checkpoint, or that triggered a checkpoint after the
-- refusal, is not.
WITH leaks AS (
  SELECT f.run_id, max(f.seq) AS seq
  FROM rc_events f
  JOIN {batch} r ON r.run_id = f.run_id AND r.semantics = 'pr' AND r.bounded AND NOT r.job_finished
  WHERE f.kind = 'store_failed' AND get_json_object(f.detail, '$.type') = 'REGIONAL'
  GROUP BY f.run_id
)
SELECT DISTINCT l.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM leaks l
LEFT ANTI JOIN rc_events t ON t.run_id = l.run_id AND t.kind = 'checkpoint_triggered' AND t.seq > l.seq
