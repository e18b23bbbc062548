-- PROTOCOL.md 3.4: N may complete REGIONAL only if regional checkpoints are on, the job has more than one
-- region, an earlier checkpoint completed, failed/total regions <= max-failure-ratio (the scenario's
-- setting), N was not forced global, and N is not the final checkpoint of a bounded job.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('REGIONAL although ',
              concat_ws('; ',
                CASE WHEN NOT r.region_enabled THEN 'regional checkpoints are disabled' END,
                CASE WHEN c.num_regions <= 1 THEN 'the job has a single region' END,
                CASE WHEN prior.n IS NULL THEN 'no earlier checkpoint completed' END,
                CASE WHEN CAST(c.failed_region_count AS DOUBLE) / c.num_regions > r.max_failure_ratio
                     THEN concat(c.failed_region_count, '/', c.num_regions, ' regions failed > max-failure-ratio ',
                                 r.max_failure_ratio) END,
                CASE WHEN c.forced_global THEN 'it was forced global' END,
                CASE WHEN c.final THEN 'it is the final checkpoint of a bounded job' END)) AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
LEFT JOIN (
  SELECT a.run_id, a.checkpoint_id, count(b.checkpoint_id) AS n
  FROM rc_checkpoints a JOIN rc_checkpoints b
    ON b.run_id = a.run_id AND b.completed AND b.checkpoint_id < a.checkpoint_id
  GROUP BY a.run_id, a.checkpoint_id
) prior ON prior.run_id = c.run_id AND prior.checkpoint_id = c.checkpoint_id
WHERE c.status = 'REGIONAL'
  AND (NOT r.region_enabled OR c.num_regions <= 1 OR prior.n IS NULL
       OR CAST(c.failed_region_count AS DOUBLE) / c.num_regions > r.max_failure_ratio
       OR c.forced_global OR c.final)
