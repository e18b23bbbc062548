-- explains: exactly_once_output.bounded_output_complete
-- F10 on a bounded run that finished: a split handed back at a region fallback while its failed-region reader
-- still held it (the same evidence as handed_back.sql: assigned to a failed source subtask after the fallback
-- checkpoint's trigger, held when the coordinator's region-fallback call ran, assigned again after it with no
-- restore of that subtask between) is committed more than once by the end. Only the excess is F10's: the split's
-- committed ranges (rc_commits) cover [0, records_per_split) with no gap and end at its length, and sum to more; a
-- split with records never committed (a gap, a missing head or tail) or committed past its end is not F10's doing.
WITH
-- include: _hand_back.sql
c AS (
  SELECT c.run_id, c.split, c.start, c.end,
         max(c.end) OVER (PARTITION BY c.run_id, c.split ORDER BY c.start, c.end
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM rc_commits c
),
covered AS (  -- every record of the split committed, some more than once
  SELECT c.run_id, c.split
  FROM c JOIN {batch} r ON r.run_id = c.run_id
  GROUP BY c.run_id, c.split, r.records_per_split
  HAVING min(c.start) = 0 AND max(c.end) = max(r.records_per_split) AND sum(c.end - c.start) > max(r.records_per_split)
     AND count(CASE WHEN c.prev_end IS NOT NULL AND c.start > c.prev_end THEN 1 END) = 0
)
SELECT DISTINCT h.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, h.split
FROM handed_back h JOIN covered v ON v.run_id = h.run_id AND v.split = h.split
