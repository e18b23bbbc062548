-- FLIP-600 claims ref chains are at most max-consecutive-failures deep. depth(N) = 0 without refs, else
-- 1 + the largest depth of the checkpoints N's entries reference (rc_checkpoints.ref_depth); the depth
-- recurrence itself is re-checked here against the referenced checkpoints' depths.
WITH refs AS (
  SELECT c.run_id, c.checkpoint_id, c.ref_depth, explode(c.ref_ids) AS ref_id
  FROM rc_checkpoints c WHERE c.completed AND size(c.ref_ids) > 0
),
deepest AS (
  SELECT refs.run_id, refs.checkpoint_id, max(refs.ref_depth) AS ref_depth, max(coalesce(p.ref_depth, 0)) AS parent_depth,
         array_join(collect_list(CAST(refs.ref_id AS STRING)), ',') AS ref_list
  FROM refs LEFT JOIN rc_checkpoints p ON p.run_id = refs.run_id AND p.checkpoint_id = refs.ref_id
  GROUP BY refs.run_id, refs.checkpoint_id
)
SELECT d.run_id, d.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN d.ref_depth <> d.parent_depth + 1
            THEN concat('ref depth recorded as ', d.ref_depth, ' but the referenced checkpoints ', d.ref_list,
                        ' give ', d.parent_depth + 1)
            ELSE concat('ref chain depth ', d.ref_depth, ' (via ', d.ref_list, ') > max-consecutive-failures ',
                        r.max_consecutive_failures) END AS detail
FROM deepest d JOIN {batch} r ON r.run_id = d.run_id
WHERE d.ref_depth > r.max_consecutive_failures OR d.ref_depth <> d.parent_depth + 1
UNION ALL
SELECT c.run_id, c.checkpoint_id, NULL, NULL, NULL, NULL,
       concat('checkpoint without refs has ref depth ', c.ref_depth)
FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id
WHERE c.completed AND size(c.ref_ids) = 0 AND c.ref_depth <> 0
