-- For every completed checkpoint (whether or not its state is still on storage): the channel state of split K
-- taken by snapshot o starts where the counter stopped at o. The sink pre-committed [.., consumed) at o
-- (sink/txn), so a transaction of o for K ends exactly where K's channel state begins. This covers the
-- checkpoints taken during recovery that were subsumed long before the end of the run.
SELECT ch.run_id, ch.checkpoint_id, NULL AS region, ch.subtask, ch.operator, ch.split,
       concat('channel state [', ch.start, ', ', ch.end, ') of snapshot ', ch.origin_checkpoint_id,
              ' but the counter had consumed up to ', x.end, ' (records [', least(x.end, ch.start), ', ',
              greatest(x.end, ch.start), ') ', CASE WHEN ch.start > x.end THEN 'dropped' ELSE 'duplicated' END, ')') AS detail
FROM rc_channel_state ch
JOIN {batch} r ON r.run_id = ch.run_id
JOIN rc_transactions x ON x.run_id = ch.run_id AND x.txn_checkpoint_id = ch.origin_checkpoint_id AND x.split = ch.split
WHERE ch.start <> x.end OR ch.end < ch.start
