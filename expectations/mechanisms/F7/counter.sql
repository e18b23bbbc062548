-- explains: decisions_follow_rules.counter_follows_decisions
-- F7 (PR): after a JobManager failover (a jobmanager_failover event between the previous decision and this one)
-- the new JobManager's counter starts at 0 instead of the recovered checkpoint's.
WITH d AS (
  SELECT c.run_id, c.checkpoint_id, c.counter_before, c.decided_seq,
         lag(c.decided_seq) OVER (PARTITION BY c.run_id ORDER BY c.decided_seq) AS prev_seq
  FROM rc_checkpoints c WHERE c.decided_seq IS NOT NULL
)
SELECT DISTINCT d.run_id, d.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM d JOIN rc_events ev ON ev.run_id = d.run_id AND ev.kind = 'jobmanager_failover'
 AND ev.seq < d.decided_seq AND ev.seq > coalesce(d.prev_seq, -1)
WHERE d.counter_before = 0
