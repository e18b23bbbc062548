-- explains: exactly_once_output.no_duplicate_commit
-- F10 (PR: a split handed back at a region fallback while its reader still runs): a region-fallback call of
-- checkpoint N under the PR's semantics (scenario.json): the history's `fallback_requested` (its failed regions,
-- and L, the checkpoint that request's decision grafted from) and the `fallback_completed` of the same request,
-- applied or not (N may have been aborted meanwhile: the coordinator's hand-back is done either way and not
-- undone). A source subtask s of a failed region (its task record of N) was assigned split S after L's trigger (the
-- history's split_assigned: the tracker records it after L) and still held it when the call ran (no later
-- assignment of S, and no restore of s since: a region failover of s's region, a global restore, a restart, a
-- JobManager failover). The enumerator assigns S again after that with no restore of s in between: two readers of
-- S, the failed one never reset. A duplicate commit of such a split S is F10's; one of a split no such hand-back
-- touched is not.
WITH
-- include: _hand_back.sql
splits AS (SELECT DISTINCT run_id, split FROM handed_back)
SELECT run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, split
FROM splits
