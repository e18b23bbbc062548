-- FLIP-600 claims at most max-consecutive-failures REGIONAL checkpoints complete in a row (aborted attempts
-- in between do not break the streak: only a GLOBAL checkpoint does). Checkpoints complete in id order (a
-- completion subsumes every older pending one), so the id order is the order they completed in.
WITH c AS (
  SELECT c.run_id, c.checkpoint_id, c.status,
         sum(CASE WHEN c.status = 'GLOBAL' THEN 1 ELSE 0 END)
           OVER (PARTITION BY c.run_id ORDER BY c.checkpoint_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS g
  FROM rc_checkpoints c WHERE c.completed
),
s AS (
  SELECT c.*, sum(CASE WHEN c.status = 'REGIONAL' THEN 1 ELSE 0 END)
           OVER (PARTITION BY c.run_id, c.g ORDER BY c.checkpoint_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS streak
  FROM c
)
SELECT s.run_id, s.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('REGIONAL checkpoint number ', s.streak, ' in a row; max-consecutive-failures is ',
              r.max_consecutive_failures) AS detail
FROM s JOIN {batch} r ON r.run_id = s.run_id
WHERE s.status = 'REGIONAL' AND s.streak > r.max_consecutive_failures
