-- PROTOCOL.md section 5, element by element, recomputed here from the old entries of the checkpoint restored
-- from (concatenated in subtask order; g = global index, T = total, P' = new parallelism):
--   even-split: contiguous runs; with T = q*P' + r the first r new subtasks get q+1 elements, the rest q;
--   union:      every new subtask gets the whole list;
--   broadcast:  new subtask i gets old subtask (i mod P)'s list;
--   unchanged parallelism (even-split, broadcast): every subtask keeps its own list.
WITH old AS (
  SELECT o.*, row_number() OVER (PARTITION BY o.run_id, o.restore_id, o.operator ORDER BY o.subtask, o.pos) - 1 AS g,
         count(*) OVER (PARTITION BY o.run_id, o.restore_id, o.operator) AS total
  FROM rc_redistributions o WHERE o.side = 'old' AND o.kind = 'element'
),
cut AS (
  SELECT old.*, total div new_parallelism AS q, total % new_parallelism AS rem FROM old
),
expected AS (
  SELECT run_id, restore_id, restore_from, operator, mode,
         CASE WHEN g < rem * (q + 1) THEN g div (q + 1) ELSE rem + (g - rem * (q + 1)) div nullif(q, 0) END AS subtask,
         CASE WHEN g < rem * (q + 1) THEN g % (q + 1) ELSE (g - rem * (q + 1)) % nullif(q, 0) END AS pos, element
  FROM cut WHERE mode = 'even-split' AND old_parallelism <> new_parallelism
  UNION ALL
  SELECT run_id, restore_id, restore_from, operator, mode, subtask, pos, element
  FROM cut WHERE mode IN ('even-split', 'broadcast') AND old_parallelism = new_parallelism
  UNION ALL
  SELECT run_id, restore_id, restore_from, operator, mode, explode(sequence(0, new_parallelism - 1)) AS subtask,
         CAST(g AS INT) AS pos, element
  FROM cut WHERE mode = 'union'
  UNION ALL
  SELECT c.run_id, c.restore_id, c.restore_from, c.operator, c.mode, n.subtask, c.pos, c.element
  FROM cut c
  JOIN (SELECT DISTINCT run_id, restore_id, old_parallelism, explode(sequence(0, new_parallelism - 1)) AS subtask
        FROM rc_redistributions) n
    ON n.run_id = c.run_id AND n.restore_id = c.restore_id AND n.old_parallelism = c.old_parallelism
   AND n.subtask % c.old_parallelism = c.subtask
  WHERE c.mode = 'broadcast' AND c.old_parallelism <> c.new_parallelism
),
actual AS (
  SELECT run_id, restore_id, restore_from, operator, mode, subtask, pos, element
  FROM rc_redistributions WHERE side = 'new' AND kind = 'element'
)
SELECT coalesce(e.run_id, a.run_id) AS run_id, coalesce(e.restore_from, a.restore_from) AS checkpoint_id,
       NULL AS region, coalesce(e.subtask, a.subtask) AS subtask, coalesce(e.operator, a.operator) AS operator,
       NULL AS split,
       concat('restore ', coalesce(e.restore_id, a.restore_id), ' (', coalesce(e.mode, a.mode), ') position ',
              coalesce(e.pos, a.pos), ': expected ', coalesce(e.element, 'nothing'), ', got ', coalesce(a.element, 'nothing')) AS detail
FROM expected e
FULL OUTER JOIN actual a
  ON a.run_id = e.run_id AND a.restore_id = e.restore_id AND a.operator = e.operator AND a.subtask = e.subtask AND a.pos = e.pos
JOIN {batch} r ON r.run_id = coalesce(e.run_id, a.run_id)
WHERE e.element IS NULL OR a.element IS NULL OR e.element <> a.element
