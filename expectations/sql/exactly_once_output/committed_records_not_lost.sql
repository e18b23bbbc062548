-- Commits contain no lost records: a committed transaction skipped none of its range, its pre-committed
-- content (sink/txn) exists, and that content equals the records of its range recomputed from the seed.
SELECT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, c.subtask, 'sink' AS operator, c.split,
       concat('committed [', c.start, ', ', c.end, ') of checkpoint ', c.txn_checkpoint_id, ': ',
              CASE WHEN c.n_lost > 0 THEN concat('skips lost records ', c.lost)
                   WHEN x.split IS NULL THEN 'no pre-committed transaction with this range'
                   ELSE concat('holds count ', x.count, ' sum ', x.sum, ', the seed gives count ',
                               coalesce(CAST(t.count AS STRING), '?'), ' sum ', coalesce(CAST(t.sum AS STRING), '?')) END) AS detail
FROM rc_commits c
JOIN {batch} r ON r.run_id = c.run_id
LEFT JOIN rc_transactions x ON x.run_id = c.run_id AND x.txn_checkpoint_id = c.txn_checkpoint_id AND x.split = c.split
                           AND x.start = c.start AND x.end = c.end
LEFT JOIN rc_truth t ON t.run_id = c.run_id AND t.split = c.split AND t.start = c.start AND t.end = c.end
WHERE c.n_lost > 0 OR x.split IS NULL OR t.count IS NULL OR x.count <> t.count OR x.sum <> t.sum
