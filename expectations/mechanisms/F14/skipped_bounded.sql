-- explains: exactly_once_output.bounded_output_complete
-- F14 on a bounded run that finished: a split committed upon a checkpoint M by a sink of a region r that a newer
-- REGIONAL checkpoint N, decided before M completed, falls back past M (as skipped_checkpoint.sql finds, with a
-- restore of r from N or from a checkpoint leading back to it) is committed more than once by the end. Only the
-- excess is F14's: the split's committed ranges cover [0, records_per_split) with no gap and end at its length, and
-- sum to more; a split with records never committed, or committed past its end, is not F14's doing.
WITH RECURSIVE decided AS (
  SELECT run_id, checkpoint_id, min(seq) AS seq FROM rc_events WHERE kind = 'fallback_requested'
  GROUP BY run_id, checkpoint_id
),
grafts AS (  -- (N, r, L): N REGIONAL, r's entries referencing L, N's decision
  SELECT DISTINCT n.run_id, n.checkpoint_id, e.region, e.ref_checkpoint_id AS l_id, d.seq AS decided_seq,
         n.completed_seq
  FROM rc_checkpoints n
  JOIN decided d ON d.run_id = n.run_id AND d.checkpoint_id = n.checkpoint_id
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id IS NOT NULL
  WHERE n.status = 'REGIONAL' AND n.completed
),
skipped AS (  -- (N, r, M): M between L and N completed after N's decision, before N, r's sinks fresh in M
  SELECT DISTINCT g.run_id, g.checkpoint_id, g.region, m.checkpoint_id AS m_id, em.subtask
  FROM grafts g
  JOIN rc_checkpoints m ON m.run_id = g.run_id AND m.completed AND m.checkpoint_id > g.l_id
                       AND m.checkpoint_id < g.checkpoint_id AND m.completed_seq > g.decided_seq
                       AND m.completed_seq < g.completed_seq
  JOIN rc_entries em ON em.run_id = g.run_id AND em.checkpoint_id = m.checkpoint_id AND em.region = g.region
                    AND em.operator = 'sink' AND em.ref_checkpoint_id IS NULL
),
links AS (SELECT DISTINCT run_id, checkpoint_id, region, ref_checkpoint_id FROM rc_entries
           WHERE ref_checkpoint_id IS NOT NULL AND ref_checkpoint_id < checkpoint_id),
reaches (run_id, checkpoint_id, region, cur) AS (  -- checkpoints whose entries of r lead back to N
  SELECT DISTINCT run_id, checkpoint_id, region, checkpoint_id FROM skipped
  UNION ALL
  SELECT x.run_id, x.checkpoint_id, x.region, l.checkpoint_id
  FROM reaches x
  JOIN links l ON l.run_id = x.run_id AND l.ref_checkpoint_id = x.cur AND l.region = x.region
),
restored AS (  -- r restored from N or from a checkpoint leading back to N
  SELECT DISTINCT x.run_id, x.checkpoint_id, x.region
  FROM (SELECT DISTINCT * FROM reaches) x
  JOIN rc_events ev ON ev.run_id = x.run_id AND ev.restore_from = x.cur
                   AND (ev.kind = 'global_restore' OR (ev.kind = 'region_failover' AND ev.region = x.region))
),
early AS (  -- commits upon M by r's sinks
  SELECT DISTINCT c.*
  FROM skipped s
  JOIN restored x ON x.run_id = s.run_id AND x.checkpoint_id = s.checkpoint_id AND x.region = s.region
  JOIN rc_commits c ON c.run_id = s.run_id AND c.notified_checkpoint_id = s.m_id AND c.subtask = s.subtask
                   AND c.cause = 'notify'
),
-- include: _covered_twice.sql
SELECT DISTINCT e.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, e.split
FROM early e JOIN covered v ON v.run_id = e.run_id AND v.split = e.split
