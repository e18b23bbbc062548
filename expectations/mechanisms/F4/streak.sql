-- explains: flip_bounds.consecutive_regional_within_bound
-- F4 (PR, max-consecutive-failures 0): the force flag is set only once a REGIONAL checkpoint completed, so with
-- the bound 0 the first REGIONAL checkpoint after a GLOBAL one (or after a tier-2 reset: a decision ABORTED,
-- forced, counter k > 0 -> 0) goes through. Such a first one is F4's; a second in a row is not.
-- Decisions are taken in the history's order (decided_seq): with checkpoints pending at once a newer one
-- can be decided, and reset the counter, before an older one completes.
WITH d AS (
  SELECT c.run_id, c.checkpoint_id, c.status, c.completed, c.decided_seq,
         max(CASE WHEN c.completed AND c.status = 'GLOBAL' THEN c.checkpoint_id END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS last_global,
         max(CASE WHEN c.completed AND c.status = 'GLOBAL' THEN c.decided_seq END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS global_seq,
         max(CASE WHEN c.status = 'ABORTED' AND c.forced_global AND c.counter_before > 0 AND c.counter_after = 0
                  THEN c.decided_seq END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS reset_seq
  FROM rc_checkpoints c WHERE c.decided_seq IS NOT NULL
),
s AS (
  SELECT d.*, sum(CASE WHEN d.completed AND d.status = 'REGIONAL' THEN 1 ELSE 0 END)
           OVER (PARTITION BY d.run_id, greatest(coalesce(d.global_seq, -1), coalesce(d.reset_seq, -1))
                 ORDER BY d.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS since_reset
  FROM d
)
SELECT s.run_id, s.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM s JOIN {batch} r ON r.run_id = s.run_id
WHERE s.completed AND s.status = 'REGIONAL' AND r.max_consecutive_failures = 0 AND s.since_reset <= 1
