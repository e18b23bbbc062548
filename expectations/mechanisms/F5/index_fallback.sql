-- explains: reachable_global_state.split_assignment_consistent, reachable_global_state.union_offsets_reachable, exactly_once_output.commit_within_checkpoint, exactly_once_output.no_duplicate_commit, metadata_well_formed.one_entry_per_operator_subtask, state_consistency.counter_equals_truth, state_consistency.source_ahead_of_counter
-- F5 (PR, a fallback after a rescale at the old parallelism's index): a REGIONAL checkpoint N in which a failed
-- subtask's source entry falls back to a checkpoint L taken at another parallelism and holds exactly the splits
-- L's source entry of the same subtask index held (the PR's lastCompleted...getState(subtaskIndex)), or in which a
-- source subtask of the time has no entry at all (after an upscale the old parallelism has none at its index).
-- Its consequences (a split held twice or by nobody, counters and commits of a restore from N) show in N and
-- later checkpoints of the run: every violation of its rules from N on is F5's; before the first such N, none.
WITH fb AS (
  SELECT e.run_id, e.checkpoint_id, e.subtask, e.ref_checkpoint_id
  FROM rc_entries e
  JOIN rc_checkpoints n ON n.run_id = e.run_id AND n.checkpoint_id = e.checkpoint_id AND n.status = 'REGIONAL'
  JOIN rc_checkpoints l ON l.run_id = e.run_id AND l.checkpoint_id = e.ref_checkpoint_id
  WHERE e.operator = 'source' AND e.ref_checkpoint_id IS NOT NULL AND l.job_parallelism <> n.job_parallelism
),
held AS (
  SELECT run_id, checkpoint_id, subtask, array_sort(collect_list(split)) AS splits
  FROM rc_entry_splits WHERE operator = 'source' GROUP BY run_id, checkpoint_id, subtask
),
by_index AS (
  SELECT fb.run_id, fb.checkpoint_id
  FROM fb
  LEFT JOIN held hn ON hn.run_id = fb.run_id AND hn.checkpoint_id = fb.checkpoint_id AND hn.subtask = fb.subtask
  LEFT JOIN held hl ON hl.run_id = fb.run_id AND hl.checkpoint_id = fb.ref_checkpoint_id AND hl.subtask = fb.subtask
  WHERE coalesce(hn.splits, array()) = coalesce(hl.splits, array())
),
missing AS (
  SELECT n.run_id, n.checkpoint_id
  FROM rc_checkpoints n
  LEFT JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.operator = 'source'
  WHERE n.status = 'REGIONAL'
  GROUP BY n.run_id, n.checkpoint_id, n.job_parallelism
  HAVING count(DISTINCT e.subtask) < max(n.job_parallelism)
),
first_n AS (
  SELECT run_id, min(checkpoint_id) AS since FROM (SELECT * FROM by_index UNION ALL SELECT * FROM missing) GROUP BY run_id
)
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM first_n f JOIN rc_checkpoints c ON c.run_id = f.run_id AND c.checkpoint_id >= f.since
