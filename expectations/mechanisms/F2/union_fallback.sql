-- explains: reachable_global_state.union_offsets_reachable, exactly_once_output.no_duplicate_commit, inflight_data.channel_starts_at_consumed
-- F2 (union state after a rescale): in a REGIONAL checkpoint C a failed subtask's union list state (offsets)
-- falls back (refCheckpointId set) to a list that holds a split another subtask's union list in C holds too
-- (rc_entry_splits of the metadata). A violation about that split in C or a later checkpoint (the union list
-- holding it twice, its records committed twice when a restore resumes it from the stale entry, a channel state
-- behind them) is F2's; one about a split no such fallback held, or before C, is not.
WITH dup AS (
  SELECT DISTINCT f.run_id, f.checkpoint_id, f.split
  FROM rc_entry_splits f
  JOIN rc_entry_splits o ON o.run_id = f.run_id AND o.checkpoint_id = f.checkpoint_id AND o.operator = 'offsets'
                        AND o.split = f.split AND o.subtask <> f.subtask
  JOIN rc_checkpoints c ON c.run_id = f.run_id AND c.checkpoint_id = f.checkpoint_id AND c.status = 'REGIONAL'
  WHERE f.operator = 'offsets' AND f.ref_checkpoint_id IS NOT NULL
),
first_dup AS (SELECT run_id, split, min(checkpoint_id) AS since FROM dup GROUP BY run_id, split)
SELECT DISTINCT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, d.split
FROM first_dup d JOIN rc_checkpoints c ON c.run_id = d.run_id AND c.checkpoint_id >= d.since
