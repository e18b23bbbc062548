-- For every completed checkpoint (whether or not its state is still on storage): the channel state of split K
-- taken by snapshot o starts where the counter stopped at o. The sink pre-committed [.., consumed) at o
-- (sink/txn), so the range of K that o's transaction wrote last ends exactly where K's channel state begins (a
-- transaction holds two ranges of K when recovered channel records were followed by a source that rewound).
-- This covers the checkpoints taken during recovery that were subsumed long before the end of the run.
WITH x AS (
  SELECT t.*, row_number() OVER (PARTITION BY t.run_id, t.txn_checkpoint_id, t.split ORDER BY t.pos DESC) AS nth_last
  FROM rc_transactions t
)
SELECT ch.run_id, ch.checkpoint_id, NULL AS region, ch.subtask, ch.operator, ch.split,
       concat('channel state [', ch.start, ', ', ch.end, ') of snapshot ', ch.origin_checkpoint_id,
              ' but the counter had consumed up to ', x.end, ' (records [', least(x.end, ch.start), ', ',
              greatest(x.end, ch.start), ') ', CASE WHEN ch.start > x.end THEN 'dropped' ELSE 'duplicated' END, ')') AS detail
FROM rc_channel_state ch
JOIN {batch} r ON r.run_id = ch.run_id
JOIN x ON x.run_id = ch.run_id AND x.txn_checkpoint_id = ch.origin_checkpoint_id AND x.split = ch.split
      AND x.nth_last = 1
WHERE ch.start <> x.end OR ch.end < ch.start
