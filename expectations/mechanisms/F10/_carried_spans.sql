-- F10's spans (a part of carried.sql, carried_commits.sql and carried_bounded.sql, after _hand_back.sql and
-- _refreshed.sql): (run, S, start_seq, end_seq), the stretches of the history in which split S has a reader the
-- enumerator no longer counts as its owner. One starts at the hand-back of S by its failed-region reader s, which
-- reads on (`held`), and lasts until the next reset of every reader: a global restore or a restart from scratch (a
-- region failover does not end it: a reset reader whose restored entry holds S reads it again). It goes on through a
-- global restore from a checkpoint R whose bookkeeping of S is F10's: S in two source entries of R, or in one while
-- R's coordinator state counts it unassigned (`doubled`, R's metadata), and R triggered in this span or an earlier
-- one from the same hand-back, or R `refreshed` (its coordinator state served after the hand-back). The restore
-- rebuilds the enumerator from R's coordinator state and every reader from R's entries
-- (`SourceCoordinator.resetToCheckpoint`, the readers' `restoreState`): S's owner and its unassigned copy come back
-- together, and the enumerator hands S to a second reader again. A restore from a checkpoint that holds S once ends it.
-- twice: the spans with a second reader of S (its commits: carried_commits.sql, carried_bounded.sql).
doubled AS (  -- (R, S): S in two source entries of R, or in one while R's coordinator state counts it unassigned
  SELECT e.run_id, e.checkpoint_id, e.split
  FROM rc_entry_splits e
  JOIN rc_checkpoints c ON c.run_id = e.run_id AND c.checkpoint_id = e.checkpoint_id
  WHERE e.operator = 'source'
  GROUP BY e.run_id, e.checkpoint_id, e.split
  HAVING count(DISTINCT e.subtask) > 1
      OR max(CASE WHEN array_contains(coalesce(c.coord_unassigned, array()), e.split) THEN 1 ELSE 0 END) = 1
),
resets AS (  -- each reset of every reader, with the next one after it
  SELECT e.run_id, e.seq, e.kind, e.restore_from, min(n.seq) AS next_seq
  FROM rc_events e
  LEFT JOIN rc_events n ON n.run_id = e.run_id AND n.seq > e.seq
                       AND n.kind IN ('global_restore', 'global_restart_from_scratch')
  WHERE e.kind IN ('global_restore', 'global_restart_from_scratch')
  GROUP BY e.run_id, e.seq, e.kind, e.restore_from
),
spans (run_id, split, origin_seq, start_seq, end_seq) AS (  -- origin: the hand-back; the spans from it are contiguous
  SELECT h.run_id, h.split, h.back_seq, h.back_seq, coalesce(min(x.seq), 9223372036854775807)
  FROM held h LEFT JOIN resets x ON x.run_id = h.run_id AND x.seq > h.back_seq
  GROUP BY h.run_id, h.split, h.back_seq
  UNION ALL
  SELECT s.run_id, s.split, s.origin_seq, g.seq, coalesce(g.next_seq, 9223372036854775807)
  FROM spans s
  JOIN resets g ON g.run_id = s.run_id AND g.seq = s.end_seq AND g.kind = 'global_restore'
  JOIN rc_checkpoints m ON m.run_id = g.run_id AND m.checkpoint_id = g.restore_from
  JOIN doubled d ON d.run_id = m.run_id AND d.checkpoint_id = m.checkpoint_id AND d.split = s.split
  LEFT JOIN refreshed f ON f.run_id = m.run_id AND f.checkpoint_id = m.checkpoint_id AND f.split = s.split
  WHERE (m.trigger_seq > s.origin_seq AND m.trigger_seq < s.end_seq) OR f.split IS NOT NULL
),
twice AS (  -- the spans in which S has a second reader: delivered again in the span (`split_assigned`; a held one does
            -- not reach its reader, F16), or after a global restore that carried it on
  SELECT DISTINCT s.run_id, s.split, s.start_seq, s.end_seq
  FROM spans s
  LEFT JOIN rc_events a ON a.run_id = s.run_id AND a.kind = 'split_assigned' AND a.split = s.split
                       AND a.seq > s.start_seq AND a.seq < s.end_seq
  WHERE s.start_seq > s.origin_seq OR a.seq IS NOT NULL
)
