-- notifyCheckpointComplete (and so a commit with cause notify) only follows a checkpoint that completed;
-- an aborted or voided checkpoint is followed by notifyCheckpointAborted and commits nothing.
SELECT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, c.subtask, 'sink' AS operator, c.split,
       concat('commit of [', c.start, ', ', c.end, ') upon checkpoint ', c.notified_checkpoint_id, ', which is ',
              coalesce(n.status, 'unknown to the history')) AS detail
FROM rc_commits c
JOIN {batch} r ON r.run_id = c.run_id
LEFT JOIN rc_checkpoints n ON n.run_id = c.run_id AND n.checkpoint_id = c.notified_checkpoint_id
WHERE c.cause = 'notify' AND (n.checkpoint_id IS NULL OR NOT n.completed)
