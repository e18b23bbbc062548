-- explains: exactly_once_output.commit_within_checkpoint
-- F13, the sink of a grafted entry: a GLOBAL checkpoint N completed by a late ack while a region fallback it had
-- requested was pending, whose sink entry of subtask s is the graft of the fallback checkpoint L (the entries
-- grafted_global.sql finds). N completed GLOBAL, so s is told notifyCheckpointComplete(N) and commits the transaction
-- it pre-committed for N, which N's entry for it (L's) does not hold: a commit upon N by s (rc_commits) is F13's;
-- one by a subtask whose sink entry in N is fresh, or upon another checkpoint, is not.
WITH
-- include: _late_ack.sql
grafted_sinks AS (
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.subtask
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id = fb.fallback_id
                   AND array_contains(fb.failed_regions, e.region) AND e.operator = 'sink'
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
)
SELECT DISTINCT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, c.subtask, 'sink' AS operator,
       c.split
FROM rc_commits c
JOIN grafted_sinks g ON g.run_id = c.run_id AND g.checkpoint_id = c.notified_checkpoint_id AND g.subtask = c.subtask
WHERE c.cause = 'notify'
