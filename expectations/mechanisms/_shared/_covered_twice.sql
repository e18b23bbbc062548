-- Shared by the bounded-output mechanisms of findings that commit a split twice (F10, F12, F14): covered, the splits
-- whose committed ranges cover [0, records_per_split) with no gap, end at its length and sum to more: only the
-- excess is the finding's; a split with records never committed or committed past its end is not its doing.
-- include: _commit_ranges.sql
covered AS (  -- every record of the split committed, some more than once
  SELECT c.run_id, c.split
  FROM c JOIN {batch} r ON r.run_id = c.run_id
  GROUP BY c.run_id, c.split, r.records_per_split
  HAVING min(c.start) = 0 AND max(c.end) = max(r.records_per_split) AND sum(c.end - c.start) > max(r.records_per_split)
     AND count(CASE WHEN c.prev_end IS NOT NULL AND c.start > c.prev_end THEN 1 END) = 0
)
