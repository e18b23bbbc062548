-- FLIP-600 claims ref chains are at most max-consecutive-failures deep. The chains are followed here through
-- the raw references of the metadata: every entry (OperatorSubtaskState) of a completed checkpoint N whose
-- refCheckpointId is L is a link N -> L (rc_entries: N's _metadata object where it is still on storage, else
-- the history's copy), and the chain goes on through L's own links. depth(N) = the longest chain of links
-- from N (0 without refs). Followed up to max-consecutive-failures + 1 links (enough to break the bound);
-- a link to a checkpoint that is not older is not followed (ref_names_earlier_completed reports it).
WITH RECURSIVE links AS (
  SELECT DISTINCT run_id, checkpoint_id, ref_checkpoint_id AS ref_id FROM rc_entries
  WHERE ref_checkpoint_id IS NOT NULL AND ref_checkpoint_id < checkpoint_id
),
chain (run_id, head, cur, depth, path) AS (
  SELECT run_id, checkpoint_id, ref_id, 1, concat(checkpoint_id, ' -> ', ref_id) FROM links
  UNION ALL
  SELECT c.run_id, c.head, l.ref_id, c.depth + 1, concat(c.path, ' -> ', l.ref_id)
  FROM chain c
  JOIN links l ON l.run_id = c.run_id AND l.checkpoint_id = c.cur
  JOIN {batch} b ON b.run_id = c.run_id
  WHERE c.depth <= b.max_consecutive_failures
),
deepest AS (
  SELECT run_id, head, max(depth) AS depth, max_by(path, depth) AS path FROM chain GROUP BY run_id, head
)
SELECT d.run_id, d.head AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('ref chain ', d.path, ' is ', d.depth, ' deep > max-consecutive-failures ', r.max_consecutive_failures) AS detail
FROM deepest d JOIN {batch} r ON r.run_id = d.run_id
WHERE d.depth > r.max_consecutive_failures
