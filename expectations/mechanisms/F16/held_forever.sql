-- explains: liveness.held_split_delivered
-- F16 (PR: notifyRegionalCheckpointFallback does not reopen the gateway): a REGIONAL checkpoint N under the PR's
-- semantics (scenario.json) that source subtask s declined before its snapshot (the task record: a decline whose reason
-- is not a failed state upload, which comes after the synchronous part and its AcknowledgeCheckpointEvent) in a region N
-- failed. A split assignment to s held by its gateway, closed for N (the history's `split_held`, `closed_for` naming N),
-- that never reaches s is F16's; one held for a checkpoint s did not so decline, or under the FLIP, is not.
WITH
-- include: _held.sql
SELECT DISTINCT h.run_id, NULL AS checkpoint_id, NULL AS region, h.subtask, 'source' AS operator, h.split
FROM held h
