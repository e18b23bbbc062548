-- explains: exactly_once_output.no_duplicate_commit
-- F10 carried on (carried.sql, _carried_spans.sql), as handed_back.sql sees it: a split S with a span in which it has
-- a second reader (`twice`: assigned again after the hand-back, or carried on by a global restore) is read by two
-- readers, and both sinks commit it; every duplicate commit of S is F10's (the rule reports the later range of an
-- overlapping pair, which may be the first reader's). A duplicate of a split with no such span is not.
WITH RECURSIVE
-- include: _hand_back.sql
-- include: _refreshed.sql
-- include: _carried_spans.sql
SELECT DISTINCT run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, split
FROM twice
