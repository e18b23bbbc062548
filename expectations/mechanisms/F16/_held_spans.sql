-- F16's spans (a part of held_in_checkpoints.sql and held_bounded.sql): (run, S, start_seq, end_seq), the stretches of
-- the history in which split S is lost to F16, the hold and each global restore that carries it on
-- (held_in_checkpoints.sql says how).
-- include: _held.sql
,
ended AS (  -- the first event after the hold that ends it
  SELECT h.run_id, h.seq, min(e.seq) AS end_seq
  FROM held h
  JOIN rc_events e ON e.run_id = h.run_id AND e.seq > h.seq
   AND ((e.kind = 'region_failover' AND e.region = h.region)
        OR e.kind IN ('global_restore', 'global_restart_from_scratch', 'jobmanager_failover')
        OR (e.kind IN ('split_assigned', 'split_held') AND e.split = h.split))
  GROUP BY h.run_id, h.seq
),
-- include: _lost_split_carried.sql
spans (run_id, split, start_seq, end_seq) AS (  -- the hold, then each global restore that carries its loss on
  SELECT h.run_id, h.split, h.seq, coalesce(x.end_seq, 9223372036854775807)
  FROM held h LEFT JOIN ended x ON x.run_id = h.run_id AND x.seq = h.seq
  UNION ALL
  SELECT c.run_id, c.split, c.seq, coalesce(x.end_seq, 9223372036854775807)
  FROM spans s
  JOIN rc_checkpoints m ON m.run_id = s.run_id AND m.trigger_seq > s.start_seq AND m.trigger_seq < s.end_seq
  JOIN carried c ON c.run_id = s.run_id AND c.split = s.split AND c.restore_from = m.checkpoint_id
                AND c.seq > s.start_seq
  LEFT JOIN carried_end x ON x.run_id = c.run_id AND x.seq = c.seq AND x.split = c.split
)
