-- F13's shared CTEs (included by each of its mechanisms): fb, each region-fallback request of a checkpoint
-- (the history's `fallback_requested`: its failed regions and fallback checkpoint L); late, the regions of a
-- checkpoint with a task the canceller marked declined whose ack arrived after all (the task record: an ack
-- after the checkpoint timeout).
fb AS (
  SELECT run_id, checkpoint_id, seq,
         from_json(get_json_object(detail, '$.failed_regions'), 'array<int>') AS failed_regions,
         CAST(get_json_object(detail, '$.fallback_checkpoint_id') AS BIGINT) AS fallback_id
  FROM rc_events WHERE kind = 'fallback_requested'
),
late AS (
  SELECT DISTINCT t.run_id, t.checkpoint_id, t.region
  FROM rc_task_responses t JOIN {batch} r ON r.run_id = t.run_id
  WHERE t.response = 'ack' AND t.at_ms > r.timeout_ms
),
