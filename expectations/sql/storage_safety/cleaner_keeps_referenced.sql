-- At every point of the history, an object deleted (by the cleaner on subsumption, by an abort, or by a new
-- JobManager's orphan clean-up) was not named by a checkpoint still retained at that point, directly or
-- through a ref chain (a regional checkpoint's referenced entries name L's physical handles).
SELECT d.run_id, t.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat(d.cause, ' at seq ', d.seq,
              CASE WHEN d.checkpoint_id IS NOT NULL THEN concat(' (checkpoint ', d.checkpoint_id, ')') ELSE '' END,
              ' deleted ', d.object_key, ', still named by retained checkpoint ', t.checkpoint_id) AS detail
FROM rc_deletions d
JOIN {batch} r ON r.run_id = d.run_id
JOIN rc_retention t ON t.run_id = d.run_id AND t.from_seq <= d.seq AND (t.to_seq IS NULL OR d.seq < t.to_seq)
JOIN rc_handles h ON h.run_id = d.run_id AND h.source = 'completed' AND h.checkpoint_id = t.checkpoint_id
                 AND h.object_key = d.object_key
