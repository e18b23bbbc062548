-- F10's `served` and `refreshed` (a part of handed_back_still_read.sql and _carried_spans.sql, after
-- _hand_back.sql): served, the region-fallback call whose bytes are a REGIONAL M's coordinator state (its last
-- before M completed); refreshed, (M, S) for M triggered while s held S, before the hand-back, whose coordinator
-- state was served after it: S unassigned there while s's entry, taken at M's trigger, holds it.
served AS (  -- the region-fallback call whose bytes are a REGIONAL M's coordinator state: its last before M completed
  SELECT m.run_id, m.checkpoint_id, max(f.seq) AS seq
  FROM rc_checkpoints m
  JOIN rc_events f ON f.run_id = m.run_id AND f.kind = 'fallback_completed' AND f.checkpoint_id = m.checkpoint_id
                  AND f.seq < m.completed_seq
  WHERE m.status = 'REGIONAL' AND m.completed
  GROUP BY m.run_id, m.checkpoint_id
),
refreshed AS (  -- M: triggered while s held S, before the hand-back; its coordinator state served after it
  SELECT DISTINCT h.run_id, m.checkpoint_id, h.split
  FROM held h
  JOIN rc_checkpoints m ON m.run_id = h.run_id AND m.trigger_seq > h.seq AND m.trigger_seq < h.back_seq
  JOIN served v ON v.run_id = m.run_id AND v.checkpoint_id = m.checkpoint_id AND v.seq > h.back_seq
  LEFT ANTI JOIN assigned a ON a.run_id = h.run_id AND a.split = h.split AND a.seq > h.back_seq AND a.seq < v.seq
),
