-- Shared by the mechanisms of findings that lose a split in a checkpoint (F13 grafted_split.sql, F15
-- lost_at_end_bounded.sql, F16 held_in_checkpoints.sql): lost_in, (C, S) where C's coordinator state counts S as assigned and no source entry
-- of C holds it (its metadata); carried, a global restore from such a C, which rebuilds the enumerator from C
-- (S assigned) and every reader from C's entries (none has S); carried_end, until S is assigned again, the job
-- restarts from scratch or restores again.
lost_in AS (  -- (C, S): C's coordinator state counts S as assigned, and no source entry of C holds it
  SELECT x.run_id, x.checkpoint_id, x.split
  FROM (SELECT c.run_id, c.checkpoint_id,
               explode(array_except(c.coord_discovered, coalesce(c.coord_unassigned, array()))) AS split
        FROM rc_checkpoints c WHERE c.completed AND c.coord_discovered IS NOT NULL) x
  LEFT ANTI JOIN rc_entry_splits e ON e.run_id = x.run_id AND e.checkpoint_id = x.checkpoint_id
                                  AND e.operator = 'source' AND e.split = x.split
),
carried AS (  -- a global restore from a checkpoint C in which S is lost: S lost from the restore on
  SELECT g.run_id, g.seq, l.split, l.checkpoint_id AS restore_from
  FROM rc_events g
  JOIN lost_in l ON l.run_id = g.run_id AND l.checkpoint_id = g.restore_from
  WHERE g.kind = 'global_restore'
),
carried_end AS (  -- until S is assigned again, the job restarts from scratch or restores again
  SELECT c.run_id, c.seq, c.split, min(e.seq) AS end_seq
  FROM carried c
  JOIN rc_events e ON e.run_id = c.run_id AND e.seq > c.seq
   AND (e.kind IN ('global_restore', 'global_restart_from_scratch', 'jobmanager_failover')
        OR (e.kind IN ('split_assigned', 'split_held') AND e.split = c.split))
  GROUP BY c.run_id, c.seq, c.split
),
