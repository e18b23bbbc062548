-- Never a duplicate: no committed record range overlaps another committed range of the same split.
WITH c AS (
  SELECT c.*, max(c.end) OVER (PARTITION BY c.run_id, c.split ORDER BY c.start, c.end, c.commit_file, c.pos
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM rc_commits c
)
SELECT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, c.subtask, 'sink' AS operator, c.split,
       concat('commit of [', c.start, ', ', c.end, ') (transaction of checkpoint ', c.txn_checkpoint_id, ', ', c.cause,
              ') overlaps records committed before up to ', c.prev_end) AS detail
FROM c JOIN {batch} r ON r.run_id = c.run_id
WHERE c.prev_end IS NOT NULL AND c.start < c.prev_end
