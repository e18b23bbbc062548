-- explains: exactly_once_output.bounded_output_complete
-- F10 on a bounded run that finished: a split handed back at a region fallback while its failed-region reader
-- still held it (the same evidence as handed_back.sql: assigned to a failed source subtask after the fallback
-- checkpoint's trigger, held when the coordinator's region-fallback call ran, assigned again after it with no
-- restore of that subtask between) is committed more than once by the end. Only the excess is F10's: the split's
-- committed ranges (rc_commits) cover [0, records_per_split) with no gap and end at its length, and sum to more; a
-- split with records never committed (a gap, a missing head or tail) or committed past its end is not F10's doing.
WITH
-- include: _hand_back.sql
-- include: _covered_twice.sql
SELECT DISTINCT h.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, h.split
FROM handed_back h JOIN covered v ON v.run_id = h.run_id AND v.split = h.split
