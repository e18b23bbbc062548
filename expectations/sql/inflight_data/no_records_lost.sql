-- No record is lost across recovery and rescale, judged on the sink's committed output (sink/commits), not on
-- the emulator's account of itself: per split, the committed record ranges, ordered by start, leave no hole
-- below the highest offset committed of that split (the first starts at 0, each next one where the ones before
-- ended at the latest). Records skipped on a restore (recovered channel state starting after the restored
-- counter's position) are never in any transaction, so their range is a hole once a later one commits. Any
-- run, bounded or not (bounded_output_complete also wants the tail of a finished bounded job).
WITH c AS (
  SELECT c.*, max(c.end) OVER (PARTITION BY c.run_id, c.split ORDER BY c.start, c.end, c.commit_file, c.pos
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM rc_commits c
)
SELECT c.run_id, c.notified_checkpoint_id AS checkpoint_id, NULL AS region, c.subtask, 'sink' AS operator, c.split,
       concat('records [', coalesce(c.prev_end, 0), ', ', c.start, ') of split ', c.split,
              ' never committed, but [', c.start, ', ', c.end, ') was (transaction of checkpoint ', c.txn_checkpoint_id,
              ', ', c.cause, ')') AS detail
FROM c JOIN {batch} r ON r.run_id = c.run_id
WHERE c.start > coalesce(c.prev_end, 0)
