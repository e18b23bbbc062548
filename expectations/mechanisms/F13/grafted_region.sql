-- explains: decisions_follow_rules.failed_regions_follow_responses
-- F13 (PR: a late ack during the region fallback completes N GLOBAL with grafted entries left): a GLOBAL checkpoint N
-- under the PR's semantics (scenario.json) for which the history shows a region fallback requested before N's decision
-- (`fallback_requested`: a REGIONAL decision had grafted the failed regions' entries from the fallback checkpoint L and
-- asked the coordinators, CheckpointCoordinator step 11 then 12), and a task of such a failed region whose ack arrived
-- after the checkpoint timeout (the task record: the CheckpointCanceller marked it declined, yet its ack succeeded).
-- N's entries in that region that reference L (rc_entries of N) are the graft the ack did not overwrite: the
-- region's row (every task of it acknowledged by N's completion, yet the metadata falls it back) is F13's. A
-- region no such request failed, or whose referenced entries name another checkpoint, is not.
WITH
-- include: _late_ack.sql
grafted AS (
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.region
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id = fb.fallback_id
                   AND array_contains(fb.failed_regions, e.region)
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
)
SELECT DISTINCT run_id, checkpoint_id, region, NULL AS subtask, NULL AS operator, NULL AS split FROM grafted
