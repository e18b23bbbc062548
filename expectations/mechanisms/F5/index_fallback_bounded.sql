-- explains: exactly_once_output.bounded_output_complete
-- F5 on a bounded run that finished: from the first REGIONAL checkpoint N with the PR's index fallback after a rescale
-- (index_fallback.sql), a checkpoint C >= N may hold a split in two source entries (the fallback entry keeps the
-- splits L's entry at its index held) or in none while its coordinator state counts it assigned (the failed subtask's
-- own splits). A restore from such a C (a global restore, or a region failover, restoring from C) reads the first
-- twice and never reads the rest of the second. The rule's row about such a split of such a C is F5's; one about a
-- split every checkpoint from N on holds once, or in a run that never restored from one that does not, is not.
WITH
-- include: _index_fallback.sql
,
-- include: _lost_split_carried.sql
twice AS (
  SELECT run_id, checkpoint_id, split FROM rc_entry_splits
  WHERE operator = 'source' AND split IS NOT NULL
  GROUP BY run_id, checkpoint_id, split HAVING count(DISTINCT subtask) > 1
),
odd AS (SELECT * FROM twice UNION SELECT run_id, checkpoint_id, split FROM lost_in),
restored AS (
  SELECT DISTINCT run_id, restore_from FROM rc_events
  WHERE kind IN ('global_restore', 'region_failover') AND restore_from IS NOT NULL
)
SELECT DISTINCT o.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, o.split
FROM odd o
JOIN first_n f ON f.run_id = o.run_id AND o.checkpoint_id >= f.since
JOIN restored x ON x.run_id = o.run_id AND x.restore_from = o.checkpoint_id
JOIN {batch} r ON r.run_id = o.run_id AND r.bounded AND r.job_finished
