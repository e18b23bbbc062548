-- explains: decisions_follow_rules.forced_exactly_at_bound
-- F19 (PR: checkAllSourcesFinishedAndForceGlobal sets the one forceGlobalNextCheckpoint flag when a bounded job's
-- final checkpoint is triggered, and tryCompleteRegionalCheckpoint reads it for whichever checkpoint is decided next):
-- under the PR's semantics (scenario.json) a checkpoint N decided forced global though it is not a final one, when a
-- newer final checkpoint F was triggered before N's decision (the history's `checkpoint_triggered` of F, `final`)
-- and nothing reset the flag in between (a GLOBAL completion, resetOnGlobalSuccess, or a tier-2 abort,
-- `forced-global-failed`). N's row is F19's; a forced N with no such trigger before its decision is not.
WITH finals AS (
  SELECT run_id, checkpoint_id, seq FROM rc_events
  WHERE kind = 'checkpoint_triggered' AND get_json_object(detail, '$.final') = 'true'
),
resets AS (
  SELECT run_id, seq FROM rc_events
  WHERE (kind = 'checkpoint_completed' AND get_json_object(detail, '$.type') = 'GLOBAL')
     OR (kind = 'checkpoint_decided' AND get_json_object(detail, '$.reason') = 'forced-global-failed')
),
flagged AS (  -- (N, F): F's trigger set the flag before N's decision
  SELECT n.run_id, n.checkpoint_id, f.seq AS set_seq, n.decided_seq
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN finals f ON f.run_id = n.run_id AND f.checkpoint_id > n.checkpoint_id AND f.seq < n.decided_seq
  WHERE n.forced_global AND NOT coalesce(n.final, false) AND n.decided_seq IS NOT NULL
)
SELECT DISTINCT x.run_id, x.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM flagged x
LEFT ANTI JOIN resets z ON z.run_id = x.run_id AND z.seq > x.set_seq AND z.seq < x.decided_seq
