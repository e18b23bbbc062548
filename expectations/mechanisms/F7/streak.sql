-- explains: flip_bounds.consecutive_regional_within_bound
-- F7 (PR): a REGIONAL checkpoint past the bound is F7's when a JobManager failover came after the last GLOBAL
-- checkpoint before it (the new JobManager's counter starts at 0), and counted from the latest failover it is
-- within max-consecutive-failures (in the order of the decisions in the history).
WITH d AS (
  SELECT c.run_id, c.checkpoint_id, c.status, c.decided_seq,
         max(CASE WHEN c.status = 'GLOBAL' THEN c.decided_seq END)
           OVER (PARTITION BY c.run_id ORDER BY c.decided_seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS global_seq
  FROM rc_checkpoints c WHERE c.completed AND c.decided_seq IS NOT NULL
),
f AS (SELECT * FROM d WHERE d.status = 'REGIONAL'),
fo AS (
  SELECT f.run_id, f.checkpoint_id, f.decided_seq, f.global_seq, max(ev.seq) AS failover_seq
  FROM f JOIN rc_events ev ON ev.run_id = f.run_id AND ev.kind = 'jobmanager_failover'
   AND ev.seq < f.decided_seq AND ev.seq > coalesce(f.global_seq, -1)
  GROUP BY f.run_id, f.checkpoint_id, f.decided_seq, f.global_seq
),
n AS (
  SELECT fo.run_id, fo.checkpoint_id, count(*) AS since_failover
  FROM fo JOIN d ON d.run_id = fo.run_id AND d.status = 'REGIONAL'
   AND d.decided_seq > fo.failover_seq AND d.decided_seq <= fo.decided_seq
  GROUP BY fo.run_id, fo.checkpoint_id
)
SELECT n.run_id, n.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM n JOIN {batch} r ON r.run_id = n.run_id
WHERE n.since_failover <= r.max_consecutive_failures
