-- Union list state (the legacy Kafka consumer's per-split offsets) of every completed checkpoint is one a
-- real execution could have produced: across all subtasks' union lists each split the checkpoint's
-- even-split source state owns appears exactly once, with the offset that source state holds for it (both
-- read from the state objects the metadata names; checkpoints whose objects the cleaner removed are not
-- readable and not judged here). A REGIONAL checkpoint whose failed subtask falls back to
-- a state that already holds other subtasks' splits (e.g. its whole redistributed union list after a
-- rescale) holds a split twice: on restore every subtask gets the whole list and one entry wins.
WITH cp AS (
  SELECT c.run_id, c.checkpoint_id FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id WHERE c.completed
),
owned AS (
  SELECT s.run_id, s.checkpoint_id, s.split, min(s.src) AS src, count(*) AS n
  FROM rc_state_values s JOIN cp ON cp.run_id = s.run_id AND cp.checkpoint_id = s.checkpoint_id
  WHERE s.operator = 'source' AND s.found AND s.split >= 0
  GROUP BY s.run_id, s.checkpoint_id, s.split
),
unioned AS (
  SELECT s.run_id, s.checkpoint_id, s.split, count(*) AS n, count(DISTINCT s.value) AS offsets,
         min(s.value) AS lo, max(s.value) AS hi, min(s.subtask) AS first_subtask
  FROM rc_state_values s JOIN cp ON cp.run_id = s.run_id AND cp.checkpoint_id = s.checkpoint_id
  WHERE s.operator = 'offsets' AND s.found
  GROUP BY s.run_id, s.checkpoint_id, s.split
)
SELECT coalesce(o.run_id, u.run_id) AS run_id, coalesce(o.checkpoint_id, u.checkpoint_id) AS checkpoint_id,
       NULL AS region, u.first_subtask AS subtask, 'offsets' AS operator, coalesce(o.split, u.split) AS split,
       CASE WHEN u.n IS NULL THEN 'split owned by the source state but absent from the union offsets'
            WHEN o.split IS NULL THEN concat('union offsets hold a split no source subtask owns (', u.n, ' entries)')
            WHEN u.n > 1 THEN concat('split appears ', u.n, ' times in the union list, offsets ', u.lo, '..', u.hi,
                                     '; the source state holds ', o.src)
            ELSE concat('union offset ', u.lo, ' but the source state holds ', o.src) END AS detail
FROM owned o FULL OUTER JOIN unioned u
  ON u.run_id = o.run_id AND u.checkpoint_id = o.checkpoint_id AND u.split = o.split
WHERE u.n IS NULL OR o.split IS NULL OR u.n <> 1 OR u.lo <> o.src
