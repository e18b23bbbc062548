-- Never a commit beyond a checkpointed offset. A sink commits, upon notification of N, only transactions
-- pre-committed by the snapshot that N's entry holds for that split: the transaction's checkpoint is no later
-- than the origin of the split's sink handle in N (N itself for a fresh entry, L or older for a referenced
-- one), N completed, and N's sink entries hold the split. A restore commits only transactions of the restored
-- snapshot (transaction checkpoint <= the restored handle's checkpoint).
SELECT c.run_id, c.notified_checkpoint_id AS checkpoint_id, s.region, c.subtask, 'sink' AS operator, c.split,
       concat(c.cause, ' commit of [', c.start, ', ', c.end, ') from the transaction of checkpoint ', c.txn_checkpoint_id,
              CASE WHEN c.cause = 'restore' THEN concat(' after restoring the snapshot of checkpoint ', c.notified_checkpoint_id)
                   WHEN n.checkpoint_id IS NULL OR NOT n.completed THEN concat(' upon checkpoint ', c.notified_checkpoint_id,
                        ', which did not complete')
                   WHEN s.split IS NULL THEN concat(' upon checkpoint ', c.notified_checkpoint_id, ', whose sink entries do not hold the split')
                   ELSE concat(' upon checkpoint ', c.notified_checkpoint_id, ', whose entry holds the split''s state of checkpoint ',
                               s.origin_checkpoint_id) END) AS detail
FROM rc_commits c
JOIN {batch} r ON r.run_id = c.run_id
LEFT JOIN rc_checkpoints n ON n.run_id = c.run_id AND n.checkpoint_id = c.notified_checkpoint_id
LEFT JOIN rc_entry_splits s ON s.run_id = c.run_id AND s.checkpoint_id = c.notified_checkpoint_id
                           AND s.operator = 'sink' AND s.split = c.split
WHERE (c.cause = 'restore' AND c.txn_checkpoint_id > c.notified_checkpoint_id)
   OR (c.cause <> 'restore' AND (n.checkpoint_id IS NULL OR NOT n.completed OR s.split IS NULL
                                 OR c.txn_checkpoint_id > s.origin_checkpoint_id))
