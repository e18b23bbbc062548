-- explains: exactly_once_output.no_duplicate_commit
-- F12, the duplicate it leads to: a failed region's sink s committed REGIONAL N's transaction upon an abort
-- notification that carried N (the commits abort_completes.sql finds: s's sink entry in N references an earlier
-- checkpoint L, the commit is in the commit file of that abort delivery). When s's region later restores from a
-- checkpoint whose entry is L's, its source reads those records again and they are committed a second time. Both
-- commits of an overlapping pair of the same split (rc_commits), one of them such an F12 commit, are keyed (the
-- checkpoint each was committed upon, its subtask, the split); a duplicate of a range no F12 commit holds is not.
WITH aborts AS (
  SELECT ev.run_id, ev.checkpoint_id, get_json_object(ev.detail, '$.commit_file') AS commit_file,
         explode(from_json(get_json_object(ev.detail, '$.subtasks'), 'array<int>')) AS subtask
  FROM rc_events ev
  WHERE ev.kind = 'notified' AND get_json_object(ev.detail, '$.aborted') IS NOT NULL
),
grafted AS (
  SELECT DISTINCT e.run_id, e.checkpoint_id, e.subtask
  FROM rc_entries e
  JOIN {batch} r ON r.run_id = e.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints n ON n.run_id = e.run_id AND n.checkpoint_id = e.checkpoint_id
  WHERE n.status = 'REGIONAL' AND n.completed AND e.operator = 'sink' AND e.ref_checkpoint_id IS NOT NULL
    AND array_contains(n.failed_regions, e.region)
),
early AS (  -- F12's commits
  SELECT c.* FROM rc_commits c
  JOIN grafted g ON g.run_id = c.run_id AND g.checkpoint_id = c.notified_checkpoint_id AND g.subtask = c.subtask
  JOIN aborts a ON a.run_id = c.run_id AND a.checkpoint_id = c.notified_checkpoint_id AND a.subtask = c.subtask
               AND a.commit_file = c.commit_file
  WHERE c.cause = 'notify'
),
pairs AS (
  SELECT a.run_id, a.split, a.notified_checkpoint_id AS a_id, a.subtask AS a_subtask,
         b.notified_checkpoint_id AS b_id, b.subtask AS b_subtask
  FROM early a
  JOIN rc_commits b ON b.run_id = a.run_id AND b.split = a.split AND b.start < a.end AND a.start < b.end
                   AND NOT (b.commit_file = a.commit_file AND b.pos = a.pos)
)
SELECT DISTINCT run_id, a_id AS checkpoint_id, NULL AS region, a_subtask AS subtask, 'sink' AS operator, split FROM pairs
UNION
SELECT DISTINCT run_id, b_id, NULL, b_subtask, 'sink', split FROM pairs
