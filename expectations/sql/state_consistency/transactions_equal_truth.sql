-- Every transaction the sink pre-committed holds exactly the records of its range: count = end - start and
-- the sum recomputed from the seed.
SELECT x.run_id, x.checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, x.split,
       concat('transaction [', x.start, ', ', x.end, ') of checkpoint ', x.txn_checkpoint_id, ' holds count ', x.count,
              ' sum ', x.sum, ', the seed gives count ', coalesce(CAST(t.count AS STRING), '?'), ' sum ',
              coalesce(CAST(t.sum AS STRING), '?')) AS detail
FROM rc_transactions x
JOIN {batch} r ON r.run_id = x.run_id
LEFT JOIN rc_truth t ON t.run_id = x.run_id AND t.split = x.split AND t.start = x.start AND t.end = x.end
WHERE t.count IS NULL OR x.count IS NULL OR x.count <> t.count OR x.sum <> t.sum
