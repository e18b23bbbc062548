-- Every decision is one PROTOCOL.md section 3 knows: GLOBAL, REGIONAL or ABORTED. The other rules of this
-- suite select decisions by their status, so a decision under any other name would escape all of them
-- (mutation testing found it: a coordinator that wrote its aborts as "XXABORTEDXX" passed every rule).
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('decided as ', coalesce(c.status, 'null'), ', which PROTOCOL.md section 3 does not know') AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
WHERE c.decided_seq IS NOT NULL AND (c.status IS NULL OR c.status NOT IN ('GLOBAL', 'REGIONAL', 'ABORTED'))
