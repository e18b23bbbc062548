-- explains: reachable_global_state.split_assignment_consistent
-- F16, the checkpoints while a split is held: a split S assigned to source subtask s while its gateway was closed for
-- a REGIONAL checkpoint N that s declined before its snapshot (as held_forever.sql: `split_held` naming N, s's decline
-- in N's task record, not a failed upload, its region failed, the PR's semantics). The enumerator counts S as s's,
-- while s never got it: every checkpoint C triggered after the hold and before s restarts (a region failover of its
-- region, a global restore or restart, a JobManager failover) or S is assigned again holds S in no source entry and
-- not as unassigned. C's row about S is F16's; one about another split, or after the hold ended, is not.
-- The loss outlives the hold when the job restores from such a C: a global restore (after a job failure or a
-- JobManager failover: the history's `global_restore` and its `restore_from`) from a checkpoint C whose row about S is
-- F16's, and whose metadata counts S as assigned (its coordinator state: discovered, not unassigned) while no source
-- entry of C holds it, rebuilds the enumerator from C (`SourceCoordinator.resetToCheckpoint`: S assigned) and every
-- reader from C's entries (none has S): S is lost until it is assigned again, a restart from scratch, or another
-- global restore. Every checkpoint triggered meanwhile is F16's for S, and so on through each global restore from one
-- of them (recursively). A region failover does not end it then (the reset subtask never had S: `subtaskReset` gives
-- back only what it was assigned since the restored checkpoint). A restore from a checkpoint that holds S, counts it
-- unassigned, or was not triggered in such a span, does not carry it.
WITH RECURSIVE
-- include: _held_spans.sql
SELECT DISTINCT s.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, s.split
FROM (SELECT DISTINCT * FROM spans) s
JOIN rc_checkpoints c ON c.run_id = s.run_id AND c.trigger_seq > s.start_seq AND c.trigger_seq < s.end_seq
