-- explains: reachable_global_state.split_assignment_consistent, reachable_global_state.union_offsets_reachable
-- F10 (PR: a split handed back at a region fallback while its reader still runs), carried on: from the hand-back of
-- split S by a failed-region reader s that reads on (handed_back_still_read.sql's `held`), S has a reader the
-- enumerator does not count, and the enumerator hands it to a second reader (or hands it back again from that one);
-- every checkpoint triggered until every reader is reset (a global restore or a restart from scratch) holds S in
-- two readers' entries, or in one while its coordinator state counts it unassigned, and the union offsets list S
-- once per reader. A global restore from such a checkpoint brings both owners back, and the checkpoints after it
-- too (_carried_spans.sql). C's rows about S in such a span are F10's; rows about another split, about S before its
-- hand-back, or after a global restore from a checkpoint whose S is not F10's, are not.
WITH RECURSIVE
-- include: _hand_back.sql
-- include: _refreshed.sql
-- include: _carried_spans.sql
SELECT DISTINCT s.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, s.split
FROM (SELECT DISTINCT run_id, split, start_seq, end_seq FROM spans) s
JOIN rc_checkpoints c ON c.run_id = s.run_id AND c.trigger_seq > s.start_seq AND c.trigger_seq < s.end_seq
