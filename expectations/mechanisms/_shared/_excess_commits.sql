-- Shared by the bounded-output mechanisms of findings that lose a split (F15 lost_at_end_bounded.sql, F16
-- held_bounded.sql): excess, the splits with a record committed twice (an overlap of two committed ranges,
-- rc_commits) or past the split's end; their rows are not a loss only.
-- include: _commit_ranges.sql
excess AS (  -- splits with a record committed twice, or past the split's end
  SELECT c.run_id, c.split
  FROM c JOIN {batch} r ON r.run_id = c.run_id
  GROUP BY c.run_id, c.split
  HAVING count(CASE WHEN c.prev_end IS NOT NULL AND c.start < c.prev_end THEN 1 END) > 0
      OR max(c.end) > max(r.records_per_split)
)
