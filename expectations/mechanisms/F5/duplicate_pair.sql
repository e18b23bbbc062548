-- explains: exactly_once_output.no_duplicate_commit
-- F5, the duplicate's other half: index_fallback.sql excuses every violation from the first REGIONAL checkpoint N
-- that shows the PR's index fallback after a rescale (or a source subtask with no entry). A duplicate commit is
-- reported once, on whichever of the two overlapping commits sorts later by (start, end): when the split is read
-- again from its start after N and the first reading committed more before N, that is the older commit, notified
-- before N. Here both commits of an overlapping pair of the same split (rc_commits) are keyed (the notified
-- checkpoint, the committing subtask, the split) when one of them was committed upon N or later, or by a restore
-- in N's attempt or later; a pair both of whose commits come before N is not F5's.
WITH
-- include: _index_fallback.sql
,
late AS (  -- commits upon N or later, or by a restore in N's attempt or later
  SELECT c.* FROM rc_commits c JOIN first_n f ON f.run_id = c.run_id
  WHERE (c.cause = 'notify' AND c.notified_checkpoint_id >= f.since) OR (c.cause <> 'notify' AND c.attempt >= f.attempt)
),
pairs AS (
  SELECT a.run_id, a.split, a.notified_checkpoint_id AS a_id, a.subtask AS a_subtask,
         b.notified_checkpoint_id AS b_id, b.subtask AS b_subtask
  FROM late a
  JOIN rc_commits b ON b.run_id = a.run_id AND b.split = a.split AND b.start < a.end AND a.start < b.end
                   AND NOT (b.commit_file = a.commit_file AND b.pos = a.pos)
)
SELECT DISTINCT run_id, a_id AS checkpoint_id, NULL AS region, a_subtask AS subtask, 'sink' AS operator, split FROM pairs
UNION
SELECT DISTINCT run_id, b_id, NULL, b_subtask, 'sink', split FROM pairs
