-- explains: exactly_once_output.no_duplicate_commit
-- F14 (a REGIONAL decision grafts from the latest checkpoint at the decision; an older pending checkpoint completing
-- before it is skipped): a REGIONAL checkpoint N whose entries of region r reference L (rc_entries of N) while a
-- checkpoint M, L < M < N, completed after N's decision (the history's first `fallback_requested` of N) and before N
-- completed, with r's sink entries fresh in M (r did not fail M: its sinks committed M's transactions upon M's
-- notification). A restore of r from N, or from a later checkpoint whose entries of r lead back to N, starts r from
-- L: its sources read again what M's commits hold. Both commits of an overlapping pair of a split, one of them a
-- commit upon M by a sink subtask of r, are keyed (the checkpoint each was committed upon, its subtask, the split),
-- in runs with such a restore; a duplicate of a range no such commit holds is not.
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
pairs AS (
  SELECT a.run_id, a.split, a.notified_checkpoint_id AS a_id, a.subtask AS a_subtask,
         b.notified_checkpoint_id AS b_id, b.subtask AS b_subtask
  FROM early a
  JOIN rc_commits b ON b.run_id = a.run_id AND b.split = a.split AND b.start < a.end AND a.start < b.end
                   AND NOT (b.commit_file = a.commit_file AND b.pos = a.pos)
)
SELECT DISTINCT run_id, a_id AS checkpoint_id, NULL AS region, a_subtask AS subtask, 'sink' AS operator, split FROM pairs
UNION
SELECT DISTINCT run_id, b_id, NULL, b_subtask, 'sink', split FROM pairs
