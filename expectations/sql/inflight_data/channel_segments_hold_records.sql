-- The channel state stored in a readable state object is the range the metadata names, holding exactly those
-- records (count = end - start, sum recomputed from the seed).
SELECT ch.run_id, ch.checkpoint_id, NULL AS region, ch.subtask, ch.operator, ch.split,
       CASE WHEN NOT ch.found THEN concat('segment ', ch.segment, ' missing from ', ch.object_key)
            ELSE concat('metadata names [', ch.start, ', ', ch.end, '), the segment holds [', ch.seg_start, ', ',
                        ch.seg_end, ') with count ', ch.seg_count, ' sum ', ch.seg_sum, '; the seed gives count ',
                        coalesce(CAST(t.count AS STRING), '?'), ' sum ', coalesce(CAST(t.sum AS STRING), '?')) END AS detail
FROM rc_channel_state ch
JOIN {batch} r ON r.run_id = ch.run_id
LEFT JOIN rc_truth t ON t.run_id = ch.run_id AND t.split = ch.split AND t.start = ch.seg_start AND t.end = ch.seg_end
WHERE ch.readable AND (NOT ch.found OR ch.seg_start <> ch.start OR ch.seg_end <> ch.end OR t.count IS NULL
                       OR ch.seg_count <> t.count OR ch.seg_sum <> t.sum)
