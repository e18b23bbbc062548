-- explains: reachable_global_state.split_assignment_consistent
-- F10 (PR: a split handed back at a region fallback while its reader still runs), as a later checkpoint sees it:
-- a region-fallback call of checkpoint N under the PR's semantics (scenario.json), applied or not, hands split S
-- back to the enumerator (S assigned to a source subtask s of a failed region after the trigger of L, the
-- checkpoint the request's decision grafted from, and still s's when the call ran: handed_back.sql's `held`). A
-- checkpoint M completed after that, triggered before S was assigned again and before any restore of s, holds S in
-- s's fresh entry while its enumerator state counts S unassigned (or, assigned again meanwhile, twice): M's row about
-- S is F10's. So is the row of a REGIONAL M triggered after S's assignment to s and before the call, whose
-- coordinator state is the bytes of a region-fallback call of M served after it (M's last `fallback_completed`
-- before its completion; the PR's bytes overwrite M's trigger-time snapshot, F15): the live enumerator's, S
-- unassigned unless assigned again in between, while s's entry, taken at M's trigger, holds S. The same split with
-- no such hand-back, or after s was restored, is not.
WITH
-- include: _hand_back.sql
-- include: _refreshed.sql
later AS (  -- M: completed after the hand-back, triggered before S was assigned again and before a restore of s
  SELECT DISTINCT h.run_id, m.checkpoint_id, h.split
  FROM held h
  JOIN rc_checkpoints m ON m.run_id = h.run_id AND m.completed AND m.trigger_seq > h.back_seq
  LEFT ANTI JOIN assigned a ON a.run_id = h.run_id AND a.split = h.split AND a.seq > h.back_seq
                           AND a.seq < m.trigger_seq AND a.subtask <> h.subtask
  LEFT ANTI JOIN restores x ON x.run_id = h.run_id AND x.seq > h.back_seq AND x.seq < m.trigger_seq
                           AND (x.kind <> 'region_failover' OR x.region = h.region)
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, split
FROM later
UNION
SELECT run_id, checkpoint_id, NULL, NULL, 'source', split
FROM refreshed
