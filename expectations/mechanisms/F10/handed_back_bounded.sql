-- explains: exactly_once_output.bounded_output_complete
-- F10 on a bounded run that finished: a split handed back at a REGIONAL completion while its failed-region reader
-- still held it (the same evidence as handed_back.sql: assigned to a failed source subtask after the fallback
-- checkpoint's trigger, held at N's decision, assigned again after it with no restore of that subtask between)
-- is committed more than once by the end. Only the excess is F10's: the split's committed ranges (rc_commits)
-- cover [0, records_per_split) with no gap and end at its length, and sum to more; a split with records never
-- committed (a gap, a missing head or tail) or committed past its end is not F10's doing.
WITH restores AS (
  SELECT run_id, seq, kind, region FROM rc_events
  WHERE kind IN ('region_failover', 'global_restore', 'global_restart_from_scratch', 'jobmanager_failover')
),
assigned AS (SELECT run_id, seq, split, subtask FROM rc_events WHERE kind = 'split_assigned'),
n AS (
  SELECT n.run_id, n.checkpoint_id, n.decided_seq, n.failed_regions, max(l.checkpoint_id) AS l_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.completed AND l.completed_seq < n.decided_seq
  WHERE n.status = 'REGIONAL' AND n.completed
  GROUP BY n.run_id, n.checkpoint_id, n.decided_seq, n.failed_regions
),
failed AS (
  SELECT n.run_id, n.checkpoint_id, n.decided_seq, l.trigger_seq AS l_trigger_seq, t.subtask, t.region
  FROM n
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.checkpoint_id = n.l_id
  JOIN rc_task_responses t ON t.run_id = n.run_id AND t.checkpoint_id = n.checkpoint_id AND t.vertex = 'source'
                          AND array_contains(n.failed_regions, t.region)
),
held AS (  -- S assigned to the failed subtask s after L's trigger, still its own at N's decision
  SELECT f.run_id, f.checkpoint_id, f.decided_seq, f.subtask, f.region, a.split, a.seq
  FROM failed f
  JOIN assigned a ON a.run_id = f.run_id AND a.subtask = f.subtask AND a.seq > f.l_trigger_seq
                 AND a.seq < f.decided_seq
  LEFT ANTI JOIN assigned b ON b.run_id = a.run_id AND b.split = a.split AND b.seq > a.seq AND b.seq < f.decided_seq
  LEFT ANTI JOIN restores x ON x.run_id = a.run_id AND x.seq > a.seq AND x.seq < f.decided_seq
                           AND (x.kind <> 'region_failover' OR x.region = f.region)
),
handed_back AS (  -- assigned again after N's decision, before any restore of s
  SELECT DISTINCT h.run_id, h.split, h.checkpoint_id
  FROM held h
  JOIN assigned a ON a.run_id = h.run_id AND a.split = h.split AND a.seq > h.decided_seq
  LEFT ANTI JOIN restores x ON x.run_id = h.run_id AND x.seq > h.decided_seq AND x.seq < a.seq
                           AND (x.kind <> 'region_failover' OR x.region = h.region)
),
c AS (
  SELECT c.run_id, c.split, c.start, c.end,
         max(c.end) OVER (PARTITION BY c.run_id, c.split ORDER BY c.start, c.end
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM rc_commits c
),
covered AS (  -- every record of the split committed, some more than once
  SELECT c.run_id, c.split
  FROM c JOIN {batch} r ON r.run_id = c.run_id
  GROUP BY c.run_id, c.split, r.records_per_split
  HAVING min(c.start) = 0 AND max(c.end) = max(r.records_per_split) AND sum(c.end - c.start) > max(r.records_per_split)
     AND count(CASE WHEN c.prev_end IS NOT NULL AND c.start > c.prev_end THEN 1 END) = 0
)
SELECT DISTINCT h.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, h.split
FROM handed_back h JOIN covered v ON v.run_id = h.run_id AND v.split = h.split
