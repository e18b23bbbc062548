-- explains: notifications.commit_upon_notification
-- F11, the acknowledging task's sink: a REGIONAL checkpoint N under the PR's semantics (scenario.json) whose
-- fallback L (the last checkpoint completed before N's decision) ran at a smaller parallelism than N. A sink entry
-- of a region N failed that is fresh in N's metadata at a subtask index where L has no sink entry was kept, not
-- grafted, yet its task was told "fallback": the transactions of the splits it holds (rc_entry_splits of N) are
-- not committed upon N's notification. A late commit due at N (the rule's checkpoint) of such a split is F11's;
-- one due at another checkpoint, or of a split no such entry holds, is not.
WITH n AS (
  SELECT n.run_id, n.checkpoint_id, n.job_parallelism, n.failed_regions, max(l.checkpoint_id) AS l_id
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.completed AND l.completed_seq < n.decided_seq
  WHERE n.status = 'REGIONAL' AND n.completed
  GROUP BY n.run_id, n.checkpoint_id, n.job_parallelism, n.failed_regions
),
upscaled AS (
  SELECT n.* FROM n JOIN rc_checkpoints l ON l.run_id = n.run_id AND l.checkpoint_id = n.l_id
  WHERE l.job_parallelism < n.job_parallelism
)
SELECT DISTINCT s.run_id, s.checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, s.split
FROM upscaled u
JOIN rc_entry_splits s ON s.run_id = u.run_id AND s.checkpoint_id = u.checkpoint_id AND s.operator = 'sink'
                      AND s.ref_checkpoint_id IS NULL AND array_contains(u.failed_regions, s.region)
LEFT ANTI JOIN rc_entries le ON le.run_id = s.run_id AND le.checkpoint_id = u.l_id AND le.operator = 'sink'
                            AND le.subtask = s.subtask
