-- explains: reachable_global_state.split_assignment_consistent, reachable_global_state.union_offsets_reachable, exactly_once_output.commit_within_checkpoint, exactly_once_output.no_duplicate_commit, metadata_well_formed.one_entry_per_operator_subtask, state_consistency.counter_equals_truth, state_consistency.source_ahead_of_counter, redistribution.channel_state_by_identity
-- F5 (PR, a fallback after a rescale at the old parallelism's index): a REGIONAL checkpoint N (or a GLOBAL one that
-- kept the graft, F13) in which a failed subtask's source entry falls back to a checkpoint L taken at another parallelism and holds exactly the splits
-- L's source entry of the same subtask index held (the PR's lastCompleted...getState(subtaskIndex)), or in which a
-- source subtask of the time has no entry at all (after an upscale the old parallelism has none at its index).
-- Its consequences (a split held twice or by nobody, counters, commits and the channel state of a restore from N)
-- show in N and later checkpoints of the run: every violation of its rules from N on is F5's; before the first such
-- N, none.
WITH
-- include: _index_fallback.sql
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split
FROM first_n f JOIN rc_checkpoints c ON c.run_id = f.run_id AND c.checkpoint_id >= f.since
