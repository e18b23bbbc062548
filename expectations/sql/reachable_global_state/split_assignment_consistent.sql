-- The OperatorCoordinator's split assignment matches the subtasks' states in every completed checkpoint:
-- discovered splits = unassigned splits + splits held by source subtasks, disjoint, none held twice.
WITH held AS (
  SELECT s.run_id, s.checkpoint_id, s.split, count(*) AS n, array_join(collect_list(CAST(s.subtask AS STRING)), ',') AS subtasks,
         min(s.subtask) AS subtask, min(s.region) AS region
  FROM rc_entry_splits s WHERE s.operator = 'source'
  GROUP BY s.run_id, s.checkpoint_id, s.split
),
cp AS (
  SELECT c.run_id, c.checkpoint_id, c.coord_discovered, c.coord_unassigned
  FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id WHERE c.completed
),
universe AS (
  SELECT run_id, checkpoint_id, split FROM held
  UNION SELECT run_id, checkpoint_id, explode(coord_discovered) FROM cp
  UNION SELECT run_id, checkpoint_id, explode(coord_unassigned) FROM cp
)
SELECT u.run_id, u.checkpoint_id, h.region, h.subtask, 'source' AS operator, u.split,
       CASE WHEN cp.coord_discovered IS NULL THEN 'checkpoint has no split enumerator state'
            WHEN h.n > 1 THEN concat('split held by ', h.n, ' source entries (subtasks ', h.subtasks, ')')
            WHEN h.n = 1 AND array_contains(cp.coord_unassigned, u.split) THEN 'split held by a subtask and also unassigned'
            WHEN NOT array_contains(cp.coord_discovered, u.split) THEN 'split held or unassigned but never discovered'
            ELSE 'discovered split is neither unassigned nor held by any source subtask (lost)' END AS detail
FROM universe u
JOIN cp ON cp.run_id = u.run_id AND cp.checkpoint_id = u.checkpoint_id
LEFT JOIN held h ON h.run_id = u.run_id AND h.checkpoint_id = u.checkpoint_id AND h.split = u.split
WHERE cp.coord_discovered IS NULL
   OR h.n > 1
   OR (h.n = 1 AND array_contains(cp.coord_unassigned, u.split))
   OR NOT array_contains(cp.coord_discovered, u.split)
   OR (h.n IS NULL AND NOT array_contains(cp.coord_unassigned, u.split))
