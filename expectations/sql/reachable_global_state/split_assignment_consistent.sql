-- The OperatorCoordinator's split assignment matches the subtasks' states in every completed checkpoint:
-- discovered splits = unassigned splits + splits held by source subtasks, disjoint, none held twice; and
-- the split enumerator knows every split the source has: the scenario's initial splits and those of every
-- splits_discovered event before the checkpoint was triggered (none forgotten, e.g. by a new JobManager).
WITH held AS (
  SELECT run_id, checkpoint_id, collect_list(split) AS held
  FROM rc_entry_splits WHERE operator = 'source'
  GROUP BY run_id, checkpoint_id
),
later AS (
  SELECT c.run_id, c.checkpoint_id, flatten(collect_list(from_json(get_json_object(e.detail, '$.splits'), 'array<int>'))) AS found
  FROM rc_checkpoints c
  JOIN rc_events e ON e.run_id = c.run_id AND e.kind = 'splits_discovered' AND e.seq < c.trigger_seq
  WHERE c.completed
  GROUP BY c.run_id, c.checkpoint_id
),
cp AS (
  SELECT c.run_id, c.checkpoint_id, c.coord_discovered AS discovered, c.coord_unassigned AS unassigned,
         coalesce(h.held, array()) AS held,
         array_union(CASE WHEN r.initial_splits > 0 THEN sequence(0, r.initial_splits - 1) ELSE array() END,
                     coalesce(l.found, array())) AS known
  FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
  LEFT JOIN held h ON h.run_id = c.run_id AND h.checkpoint_id = c.checkpoint_id
  LEFT JOIN later l ON l.run_id = c.run_id AND l.checkpoint_id = c.checkpoint_id
  WHERE c.completed
),
twice AS (
  SELECT s.run_id, s.checkpoint_id, s.split FROM rc_entry_splits s
  JOIN cp ON cp.run_id = s.run_id AND cp.checkpoint_id = s.checkpoint_id
  WHERE s.operator = 'source'
  GROUP BY s.run_id, s.checkpoint_id, s.split HAVING count(*) > 1
),
v AS (
  SELECT cp.*,
         array_sort(array_intersect(held, unassigned)) AS both,
         array_sort(array_except(discovered, array_union(held, unassigned))) AS lost,
         array_sort(array_except(array_union(held, unassigned), discovered)) AS undiscovered,
         array_sort(array_except(known, discovered)) AS forgotten
  FROM cp WHERE discovered IS NOT NULL
)
SELECT run_id, checkpoint_id, NULL AS region, NULL AS subtask, 'source' AS operator, split,
       concat('split ', split, CASE problem WHEN 'twice' THEN ' held by more than one source subtask'
                                           WHEN 'both' THEN ' held by a subtask and also unassigned'
                                           WHEN 'lost' THEN ' discovered but neither unassigned nor held by any subtask (lost)'
                                           WHEN 'forgotten' THEN ' of the source unknown to the split enumerator (forgotten)'
                                           ELSE ' held or unassigned but never discovered' END) AS detail
FROM (
  SELECT run_id, checkpoint_id, 'twice' AS problem, split FROM twice
  UNION ALL SELECT run_id, checkpoint_id, 'both', explode(both) FROM v
  UNION ALL SELECT run_id, checkpoint_id, 'lost', explode(lost) FROM v
  UNION ALL SELECT run_id, checkpoint_id, 'forgotten', explode(forgotten) FROM v
  UNION ALL SELECT run_id, checkpoint_id, 'undiscovered', explode(undiscovered) FROM v
) x
UNION ALL
SELECT run_id, checkpoint_id, NULL, NULL, 'source', NULL, 'checkpoint has no split enumerator state'
FROM cp WHERE discovered IS NULL
