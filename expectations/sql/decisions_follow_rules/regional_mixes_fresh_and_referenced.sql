-- A REGIONAL checkpoint has at least one fresh region and at least one referenced region; the referenced
-- regions are exactly the failed regions, and within a region all entries are either fresh or referenced.
WITH reg AS (
  SELECT e.run_id, e.checkpoint_id, e.region,
         sum(CASE WHEN e.ref_checkpoint_id IS NULL THEN 1 ELSE 0 END) AS fresh,
         sum(CASE WHEN e.ref_checkpoint_id IS NULL THEN 0 ELSE 1 END) AS referenced
  FROM rc_entries e GROUP BY e.run_id, e.checkpoint_id, e.region
),
c AS (
  SELECT c.* FROM rc_checkpoints c JOIN {batch} r ON r.run_id = c.run_id WHERE c.status = 'REGIONAL'
),
per_cp AS (
  SELECT c.run_id, c.checkpoint_id, c.failed_regions,
         sum(CASE WHEN reg.referenced = 0 THEN 1 ELSE 0 END) AS fresh_regions,
         sum(CASE WHEN reg.fresh = 0 THEN 1 ELSE 0 END) AS referenced_regions
  FROM c LEFT JOIN reg ON reg.run_id = c.run_id AND reg.checkpoint_id = c.checkpoint_id
  GROUP BY c.run_id, c.checkpoint_id, c.failed_regions
)
SELECT reg.run_id, reg.checkpoint_id, reg.region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN reg.fresh > 0 AND reg.referenced > 0 THEN 'region mixes fresh and referenced entries'
            WHEN reg.referenced > 0 THEN 'region falls back (referenced) but did not fail'
            ELSE 'failed region holds fresh state' END AS detail
FROM reg JOIN c ON c.run_id = reg.run_id AND c.checkpoint_id = reg.checkpoint_id
WHERE (reg.fresh > 0 AND reg.referenced > 0)
   OR (reg.referenced > 0 AND NOT array_contains(c.failed_regions, reg.region))
   OR (reg.fresh > 0 AND array_contains(c.failed_regions, reg.region))
UNION ALL
SELECT run_id, checkpoint_id, NULL, NULL, NULL, NULL,
       concat('REGIONAL with ', fresh_regions, ' fresh and ', referenced_regions, ' referenced regions')
FROM per_cp
WHERE coalesce(fresh_regions, 0) = 0 OR coalesce(referenced_regions, 0) = 0
