-- explains: decisions_follow_rules.global_has_no_refs
-- F13 (PR: a late ack during the region fallback completes N GLOBAL with grafted entries left): a GLOBAL checkpoint N
-- under the PR's semantics (scenario.json) for which the history shows a region fallback requested before N's decision
-- (`fallback_requested`: a REGIONAL decision had grafted the failed regions' entries from the fallback checkpoint L and
-- asked the coordinators, CheckpointCoordinator step 11 then 12), and a task of such a failed region whose ack arrived
-- after the checkpoint timeout (the task record: the CheckpointCanceller marked it declined, yet its ack succeeded).
-- N's entries in that region that reference L (rc_entries of N) are the graft the ack did not overwrite: their
-- rows (a GLOBAL entry referencing a checkpoint; the region every task of which acknowledged, yet falls back) are
-- F13's (keyed by entry). A referenced entry of a region no such request failed, or referencing another checkpoint,
-- is not.
WITH
-- include: _late_ack.sql
grafted AS (
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.region, e.subtask, e.operator
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id = fb.fallback_id
                   AND array_contains(fb.failed_regions, e.region)
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
)
SELECT run_id, checkpoint_id, region, subtask, operator, NULL AS split FROM grafted
