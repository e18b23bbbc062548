-- A bounded job that finished committed every source record exactly once: per split (all discovered splits),
-- the committed ranges cover [0, records_per_split) with no gap.
WITH splits AS (
  SELECT r.run_id, r.records_per_split AS len, explode(sequence(0, r.splits_total - 1)) AS split
  FROM {batch} r WHERE r.bounded AND r.job_finished AND r.splits_total > 0
),
c AS (
  SELECT c.run_id, c.split, c.start, c.end,
         max(c.end) OVER (PARTITION BY c.run_id, c.split ORDER BY c.start, c.end
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM rc_commits c
),
agg AS (
  SELECT run_id, split, min(start) AS lo, max(end) AS hi, sum(end - start) AS total,
         min(CASE WHEN prev_end IS NOT NULL AND start > prev_end THEN prev_end END) AS gap_at
  FROM c GROUP BY run_id, split
)
SELECT s.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, s.split,
       CASE WHEN a.split IS NULL THEN concat('nothing committed of [0, ', s.len, ')')
            WHEN a.lo > 0 THEN concat('records [0, ', a.lo, ') never committed')
            WHEN a.gap_at IS NOT NULL THEN concat('records from ', a.gap_at, ' never committed (gap)')
            WHEN a.hi < s.len THEN concat('records [', a.hi, ', ', s.len, ') never committed')
            WHEN a.hi > s.len THEN concat('committed up to ', a.hi, ' beyond the split length ', s.len)
            ELSE concat(a.total, ' records committed for ', s.len, ' in the split') END AS detail
FROM splits s
LEFT JOIN agg a ON a.run_id = s.run_id AND a.split = s.split
WHERE a.split IS NULL OR a.lo <> 0 OR a.gap_at IS NOT NULL OR a.hi <> s.len OR a.total <> s.len
