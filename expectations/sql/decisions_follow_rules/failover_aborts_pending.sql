-- A failover aborts every pending checkpoint (PROTOCOL.md section 5; Flink's SchedulerBase.restoreState,
-- abortPendingCheckpoints(JOB_FAILOVER_REGION), before a regional and a global restore alike): no checkpoint
-- triggered before a restart (a region failover, a global restore or rescale, a restart from scratch) completes
-- after it. Judged on the history's order of triggers, restarts and completions.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('checkpoint ', c.checkpoint_id, ' was pending at the ', e.kind, ' (history event ', e.seq,
              ') but completed ', c.status, ' after it') AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
JOIN rc_events e ON e.run_id = c.run_id AND e.kind IN ('region_failover', 'global_restore', 'global_restart_from_scratch')
                AND e.seq > c.trigger_seq AND e.seq < c.completed_seq
WHERE c.completed AND c.trigger_seq IS NOT NULL
