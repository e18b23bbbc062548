-- explains: exactly_once_output.no_duplicate_commit
-- F5, the duplicate's other half: index_fallback.sql excuses every violation from the first REGIONAL checkpoint N
-- that shows the PR's index fallback after a rescale (or a source subtask with no entry). A duplicate commit is
-- reported once, on whichever of the two overlapping commits sorts later by (start, end): when the split is read
-- again from its start after N and the first reading committed more before N, that is the older commit, notified
-- before N. Here both commits of an overlapping pair of the same split (rc_commits) are keyed (the notified
-- checkpoint, the committing subtask, the split) when one of them was committed upon N or later, or by a restore
-- in N's attempt or later; a pair both of whose commits come before N is not F5's.
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
  SELECT f.run_id, f.since, c.attempt
  FROM (SELECT run_id, min(checkpoint_id) AS since FROM (SELECT * FROM by_index UNION ALL SELECT * FROM missing)
        GROUP BY run_id) f
  JOIN rc_checkpoints c ON c.run_id = f.run_id AND c.checkpoint_id = f.since
),
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
