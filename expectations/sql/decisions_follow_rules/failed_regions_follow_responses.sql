-- The regions a completed checkpoint falls back are the ones its tasks' own responses say failed. The
-- evidence is the task side's record (rc_task_responses: each triggered task's ack or decline and when it
-- arrived, in emulated ms after the trigger), not the coordinator's decision event: a region must fail iff
-- one of its tasks declined or acknowledged after the deadline. The deadline comes from scenario.json: the
-- per-region timeout with regional checkpoints on under the FLIP's semantics, else the checkpoint timeout.
-- Under the PR a task the CheckpointCanceller marked declined may still acknowledge, and a checkpoint every
-- task then acknowledged completes GLOBAL (markUnacknowledgedTasksAsDeclined leaves it in
-- notYetAcknowledgedTasks): for a GLOBAL checkpoint under the PR the cut-off is when it completed.
-- Which regions the coordinator failed is read from the metadata: their entries reference an earlier
-- checkpoint. A completed checkpoint whose task record does not cover every task its trigger expected is
-- reported too (it cannot be judged). And every decision (GLOBAL, REGIONAL or ABORTED) must name as
-- failed exactly the regions of those tasks: the abort and REGIONAL rules read the decision's failed
-- regions, so a coordinator that maps tasks to the wrong regions (and says so consistently in its own
-- decision) is caught here, against the task record and the topology (mutation testing found this gap).
-- Aborts taken before every response was in are no such decision and name the failures seen so far: a
-- failover's ('job-failover-region'), a subsumption's ('checkpoint-subsumed'), the coordinator's shutdown at
-- the job's end ('checkpoint-coordinator-shutdown'), and with regional checkpoints
-- off the first decline's ('regional-checkpoints-disabled', 'savepoint-declined').
WITH timed AS (
  SELECT run_id, checkpoint_id, kind, CAST(get_json_object(detail, '$.time_ms') AS BIGINT) AS time_ms
  FROM rc_events WHERE kind IN ('checkpoint_triggered', 'checkpoint_decided')
),
deadline AS (
  SELECT c.run_id, c.checkpoint_id,
         CASE WHEN r.semantics = 'pr' AND c.status = 'GLOBAL' AND d.time_ms - t.time_ms > r.timeout_ms
              THEN d.time_ms - t.time_ms
              WHEN r.region_enabled AND r.semantics = 'flip' AND r.region_timeout_ms IS NOT NULL
              THEN r.region_timeout_ms ELSE r.timeout_ms END AS deadline_ms
  FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
  LEFT JOIN timed t ON t.run_id = c.run_id AND t.checkpoint_id = c.checkpoint_id AND t.kind = 'checkpoint_triggered'
  LEFT JOIN timed d ON d.run_id = c.run_id AND d.checkpoint_id = c.checkpoint_id AND d.kind = 'checkpoint_decided'
),
resp AS (
  SELECT t.run_id, t.checkpoint_id, t.region, d.deadline_ms,
         max(CASE WHEN t.response = 'ack' AND t.at_ms <= d.deadline_ms THEN 0 ELSE 1 END) AS must_fail,
         max_by(named_struct('vertex', t.vertex, 'subtask', t.subtask, 'response', t.response, 'at_ms', t.at_ms),
                CASE WHEN t.response = 'ack' THEN t.at_ms ELSE d.deadline_ms + 1 END) AS w  -- worded only if reported
  FROM rc_task_responses t JOIN deadline d ON d.run_id = t.run_id AND d.checkpoint_id = t.checkpoint_id
  GROUP BY t.run_id, t.checkpoint_id, t.region, d.deadline_ms
),
meta AS (
  SELECT run_id, checkpoint_id, region, max(CASE WHEN ref_checkpoint_id IS NULL THEN 0 ELSE 1 END) AS referenced
  FROM rc_entries GROUP BY run_id, checkpoint_id, region
),
covered AS (
  SELECT run_id, checkpoint_id, count(*) AS tasks FROM rc_task_responses GROUP BY run_id, checkpoint_id
),
failing AS (
  SELECT run_id, checkpoint_id, sort_array(collect_set(CASE WHEN must_fail = 1 THEN region END)) AS regions
  FROM resp GROUP BY run_id, checkpoint_id
),
expected AS (
  SELECT run_id, checkpoint_id, CAST(get_json_object(detail, '$.expected') AS INT) AS tasks
  FROM rc_events WHERE kind = 'checkpoint_triggered'
)
SELECT resp.run_id, resp.checkpoint_id, resp.region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN resp.must_fail = 1
            THEN concat('region ', resp.region, ' must fail (', resp.w.vertex, ' ', resp.w.subtask, ' ',
                        resp.w.response, ' at ', resp.w.at_ms, ' ms, deadline ', resp.deadline_ms,
                        ' ms) but the ', c.metadata_type, ' metadata keeps its fresh state')
            ELSE concat('every task of region ', resp.region, ' acknowledged by ', resp.deadline_ms,
                        ' ms (latest: ', resp.w.vertex, ' ', resp.w.subtask, ' ', resp.w.response, ' at ',
                        resp.w.at_ms, ' ms) but the metadata falls it back') END AS detail
FROM resp
JOIN rc_checkpoints c ON c.run_id = resp.run_id AND c.checkpoint_id = resp.checkpoint_id AND c.completed
JOIN meta m ON m.run_id = resp.run_id AND m.checkpoint_id = resp.checkpoint_id AND m.region = resp.region
WHERE resp.must_fail <> m.referenced
UNION ALL
SELECT c.run_id, c.checkpoint_id, NULL, NULL, NULL, NULL,
       concat('the task side recorded ', coalesce(n.tasks, 0), ' responses, the trigger expected ', x.tasks)
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
JOIN expected x ON x.run_id = c.run_id AND x.checkpoint_id = c.checkpoint_id
LEFT JOIN covered n ON n.run_id = c.run_id AND n.checkpoint_id = c.checkpoint_id
WHERE c.completed AND coalesce(n.tasks, 0) <> x.tasks
UNION ALL
SELECT c.run_id, c.checkpoint_id, NULL, NULL, NULL, NULL,
       concat('the ', c.status, ' decision names failed regions [', array_join(c.failed_regions, ', ', 'null'),
              '] but the task record fails regions [', array_join(f.regions, ', '), ']')
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
JOIN failing f ON f.run_id = c.run_id AND f.checkpoint_id = c.checkpoint_id
WHERE c.failed_regions IS NOT NULL AND NOT (sort_array(c.failed_regions) <=> f.regions)
  AND coalesce(c.reason, '') NOT IN ('job-failover-region', 'checkpoint-subsumed', 'checkpoint-coordinator-shutdown',
                                     'regional-checkpoints-disabled', 'savepoint-declined')
