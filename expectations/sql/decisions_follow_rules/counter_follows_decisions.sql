-- The consecutive-regional counter: reset to 0 by GLOBAL, +1 by REGIONAL, unchanged by an abort (except a
-- failed forced-global checkpoint, whatever the abort reason, under tier 2 'reset-counter', which resets it;
-- a forced checkpoint aborted by a failover or subsumed by a newer one did not fail, and moves nothing). Before each decision it
-- equals the counter after the previous decision, or, after a JobManager failover, the counter stored in the
-- latest checkpoint the new JobManager recovered (0 when none). The metadata stores the counter after N.
WITH d AS (
  SELECT c.*, lag(c.counter_after) OVER (PARTITION BY c.run_id ORDER BY c.decided_seq) AS prev_after,
         lag(c.decided_seq) OVER (PARTITION BY c.run_id ORDER BY c.decided_seq) AS prev_seq
  FROM rc_checkpoints c WHERE c.decided_seq IS NOT NULL
),
f AS (
  SELECT d.run_id, d.checkpoint_id, count(ev.seq) AS failovers, max_by(ev.recovered_latest, ev.seq) AS recovered_latest
  FROM d LEFT JOIN rc_events ev
    ON ev.run_id = d.run_id AND ev.kind = 'jobmanager_failover' AND ev.seq < d.decided_seq
   AND ev.seq > coalesce(d.prev_seq, -1)
  GROUP BY d.run_id, d.checkpoint_id
),
x AS (
  SELECT d.*, r.forced_global_policy,
         coalesce(d.reason IN ('job-failover-region', 'checkpoint-subsumed', 'checkpoint-coordinator-shutdown'), false)
           AS uncounted,
         CASE WHEN f.failovers > 0 THEN coalesce(rec.consecutive_regional, 0) ELSE coalesce(d.prev_after, 0) END AS expected_before
  FROM d JOIN {batch} r ON r.run_id = d.run_id
  JOIN f ON f.run_id = d.run_id AND f.checkpoint_id = d.checkpoint_id
  LEFT JOIN rc_checkpoints rec ON rec.run_id = d.run_id AND rec.checkpoint_id = f.recovered_latest
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat(status, coalesce(concat(' (', reason, ')'), ''), ': counter ', counter_before, ' -> ', counter_after,
              ', expected ', expected_before, ' -> ',
              CASE WHEN status = 'GLOBAL' THEN 0 WHEN status = 'REGIONAL' THEN expected_before + 1
                   WHEN forced_global AND forced_global_policy = 'reset-counter' AND NOT uncounted THEN 0
                   ELSE expected_before END,
              CASE WHEN completed AND consecutive_regional <> counter_after
                   THEN concat('; metadata stores ', consecutive_regional) ELSE '' END) AS detail
FROM x
WHERE counter_before <> expected_before
   OR counter_after <> CASE WHEN status = 'GLOBAL' THEN 0 WHEN status = 'REGIONAL' THEN counter_before + 1
                            WHEN forced_global AND forced_global_policy = 'reset-counter' AND NOT uncounted THEN 0
                            ELSE counter_before END
   OR (completed AND consecutive_regional <> counter_after)
