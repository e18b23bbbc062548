-- PROTOCOL.md 3.5: when a forced-global checkpoint fails it is aborted, "not a job failure" (tier 2). The
-- history shows a job failure as a global restore that comes right after the decision, in the same attempt:
-- the next event after the forced checkpoint's ABORTED decision but for the notifications of that abort
-- (`notified`: they reach the tasks at the same instant, before or after the failover). Restores of crashes come at the start of an
-- attempt, before its trigger; a JobManager failover logs itself first; a rescale changes the parallelism.
-- Flink's CheckpointFailureManager (execution.checkpointing.tolerable-failed-checkpoints) fails the job on a
-- counted checkpoint failure; under the implementation PR the tier-2 abort counts like any other.
WITH ordered AS (
  SELECT run_id, seq, attempt, kind, checkpoint_id, detail,
         lead(kind) OVER (PARTITION BY run_id ORDER BY seq) AS next_kind,
         lead(attempt) OVER (PARTITION BY run_id ORDER BY seq) AS next_attempt,
         lead(detail) OVER (PARTITION BY run_id ORDER BY seq) AS next_detail
  FROM rc_events WHERE kind <> 'notified'
)
SELECT o.run_id, o.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('forced checkpoint ', o.checkpoint_id, ' ABORTED (', coalesce(get_json_object(o.detail, '$.reason'), '?'),
              '), then the job failed: a global restore from ',
              coalesce(get_json_object(o.next_detail, '$.restore_from'), '?'), ' right after it') AS detail
FROM ordered o
JOIN {batch} r ON r.run_id = o.run_id
WHERE o.kind = 'checkpoint_decided'
  AND get_json_object(o.detail, '$.status') = 'ABORTED'
  AND get_json_object(o.detail, '$.forced_global') = 'true'
  AND o.next_kind = 'global_restore'
  AND o.next_attempt = o.attempt
  AND coalesce(get_json_object(o.next_detail, '$.old_parallelism'), '') = coalesce(get_json_object(o.next_detail, '$.new_parallelism'), '')
