-- F10's shared CTEs (included by handed_back*.sql and carried*.sql):
-- restores and split assignments from the history; n, each region-fallback call with its failed regions and
-- fallback L; failed, the source subtasks of its failed regions; held, a split S assigned to such a subtask s
-- after L's trigger and still its own when the call ran; handed_back, S assigned again after the call with no
-- restore of s between.
restores AS (
  SELECT run_id, seq, kind, region FROM rc_events
  WHERE kind IN ('region_failover', 'global_restore', 'global_restart_from_scratch', 'jobmanager_failover')
),
assigned AS (SELECT run_id, seq, split, subtask FROM rc_events WHERE kind = 'split_assigned'),
n AS (  -- each region-fallback call the source coordinator ran (applied or not: its hand-back is not undone), with
        -- its request's failed regions and fallback checkpoint L (lastCompleted at that request's decision)
  SELECT q.run_id, q.checkpoint_id, d.seq AS back_seq,
         from_json(get_json_object(q.detail, '$.failed_regions'), 'array<int>') AS failed_regions,
         CAST(get_json_object(q.detail, '$.fallback_checkpoint_id') AS BIGINT) AS l_id
  FROM rc_events q
  JOIN {batch} r ON r.run_id = q.run_id AND r.semantics = 'pr'
  JOIN rc_events d ON d.run_id = q.run_id AND d.kind = 'fallback_completed' AND d.checkpoint_id = q.checkpoint_id
                  AND get_json_object(d.detail, '$.request') = get_json_object(q.detail, '$.request')
  WHERE q.kind = 'fallback_requested'
),
failed AS (
  SELECT n.run_id, n.checkpoint_id, n.back_seq, l.trigger_seq AS l_trigger_seq, t.subtask, t.region
  FROM n
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.checkpoint_id = n.l_id
  JOIN rc_task_responses t ON t.run_id = n.run_id AND t.checkpoint_id = n.checkpoint_id AND t.vertex = 'source'
                          AND array_contains(n.failed_regions, t.region)
),
held AS (  -- S assigned to the failed subtask s after L's trigger, still its own when the coordinator handed it back
  SELECT f.run_id, f.checkpoint_id, f.back_seq, f.subtask, f.region, a.split, a.seq
  FROM failed f
  JOIN assigned a ON a.run_id = f.run_id AND a.subtask = f.subtask AND a.seq > f.l_trigger_seq
                 AND a.seq < f.back_seq
  LEFT ANTI JOIN assigned b ON b.run_id = a.run_id AND b.split = a.split AND b.seq > a.seq AND b.seq < f.back_seq
  LEFT ANTI JOIN restores x ON x.run_id = a.run_id AND x.seq > a.seq AND x.seq < f.back_seq
                           AND (x.kind <> 'region_failover' OR x.region = f.region)
),
handed_back AS (  -- assigned again after the hand-back, before any restore of s
  SELECT DISTINCT h.run_id, h.split, h.checkpoint_id
  FROM held h
  JOIN assigned a ON a.run_id = h.run_id AND a.split = h.split AND a.seq > h.back_seq
  LEFT ANTI JOIN restores x ON x.run_id = h.run_id AND x.seq > h.back_seq AND x.seq < a.seq
                           AND (x.kind <> 'region_failover' OR x.region = h.region)
),
