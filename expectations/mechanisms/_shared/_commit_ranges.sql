-- Shared by the bounded-output mechanisms (_covered_twice.sql, _excess_commits.sql): c, each committed range of a
-- split (rc_commits) with the furthest end committed before it in (start, end) order.
c AS (
  SELECT c.run_id, c.split, c.start, c.end,
         max(c.end) OVER (PARTITION BY c.run_id, c.split ORDER BY c.start, c.end
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM rc_commits c
),
