-- Union state (the global epoch): after every global restore, every new subtask of the union operator holds
-- the same full list, the concatenation of all old subtasks' lists in subtask order.
WITH restores AS (
  SELECT DISTINCT run_id, restore_id, restore_from, new_parallelism FROM rc_redistributions
),
unions AS (SELECT DISTINCT run_id, operator FROM rc_redistributions WHERE mode = 'union'),
expected AS (
  SELECT x.run_id, x.restore_id, x.restore_from, u.operator, explode(sequence(0, x.new_parallelism - 1)) AS subtask
  FROM restores x JOIN unions u ON u.run_id = x.run_id
),
old AS (
  SELECT run_id, restore_id, operator,
         array_join(transform(array_sort(collect_list(struct(subtask, pos, element))), x -> x.element), ' ') AS full
  FROM rc_redistributions WHERE mode = 'union' AND side = 'old' AND kind = 'element'
  GROUP BY run_id, restore_id, operator
),
new AS (
  SELECT run_id, restore_id, operator, subtask,
         array_join(transform(array_sort(collect_list(struct(pos, element))), x -> x.element), ' ') AS got
  FROM rc_redistributions WHERE mode = 'union' AND side = 'new' AND kind = 'element'
  GROUP BY run_id, restore_id, operator, subtask
)
SELECT e.run_id, e.restore_from AS checkpoint_id, NULL AS region, e.subtask, e.operator, NULL AS split,
       concat('restore ', e.restore_id, ': union state [', coalesce(n.got, ''), '] differs from the full list [',
              coalesce(o.full, ''), ']') AS detail
FROM expected e JOIN {batch} r ON r.run_id = e.run_id
LEFT JOIN old o ON o.run_id = e.run_id AND o.restore_id = e.restore_id AND o.operator = e.operator
LEFT JOIN new n ON n.run_id = e.run_id AND n.restore_id = e.restore_id AND n.operator = e.operator AND n.subtask = e.subtask
WHERE coalesce(n.got, '') <> coalesce(o.full, '')
