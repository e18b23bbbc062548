-- A region that failed checkpoint N gets the fallback notification, never notifyCheckpointComplete: none of
-- its sinks commits anything upon N's notification. The commit's region is derived from its subtask and the
-- job topology of the time.
WITH c AS (
  SELECT c.*, n.failed_regions, n.status, n.job_parallelism,
         CASE WHEN r.exchange = 'pipelined' AND r.partitioning <> 'forward' THEN 0
              WHEN r.exchange = 'pipelined' THEN c.subtask
              ELSE n.job_parallelism + c.subtask END AS derived_region
  FROM rc_commits c
  JOIN {batch} r ON r.run_id = c.run_id
  JOIN rc_checkpoints n ON n.run_id = c.run_id AND n.checkpoint_id = c.notified_checkpoint_id
  WHERE c.cause = 'notify'
)
SELECT run_id, notified_checkpoint_id AS checkpoint_id, derived_region AS region, subtask, 'sink' AS operator, split,
       concat('region ', derived_region, ' failed checkpoint ', notified_checkpoint_id, ' (', status,
              ') but committed [', start, ', ', end, ') upon its notification') AS detail
FROM c
WHERE array_contains(failed_regions, derived_region) OR array_contains(failed_regions, region)
