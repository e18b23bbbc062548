-- Each counter subtask's state in each completed checkpoint equals the function of its input up to its
-- recorded offset: count and sum of records [0, consumed) of the split, recomputed from the seed (rc_truth).
SELECT s.run_id, s.checkpoint_id, e.region, s.subtask, s.operator, s.split,
       concat('consumed ', s.consumed, ': count ', s.count, ' sum ', s.sum, ', the seed gives count ',
              coalesce(CAST(t.count AS STRING), '?'), ' sum ', coalesce(CAST(t.sum AS STRING), '?'),
              CASE WHEN s.n_lost > 0 THEN concat(' (lost ranges ', s.lost, ')') ELSE '' END) AS detail
FROM rc_state_values s
JOIN {batch} r ON r.run_id = s.run_id
LEFT JOIN rc_truth t ON t.run_id = s.run_id AND t.split = s.split AND t.start = 0 AND t.end = s.consumed
LEFT JOIN rc_entries e ON e.run_id = s.run_id AND e.checkpoint_id = s.checkpoint_id AND e.operator = s.operator
                      AND e.subtask = s.subtask
WHERE s.operator = 'counter' AND s.found
  AND (t.count IS NULL OR s.count <> t.count OR s.sum <> t.sum OR s.count IS NULL OR s.sum IS NULL)
