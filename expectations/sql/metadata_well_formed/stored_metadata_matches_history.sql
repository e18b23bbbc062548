-- The two copies of a retained checkpoint's metadata agree: for every _metadata object still on storage the
-- history's checkpoint_completed event for that checkpoint exists and carries the same document (equal
-- digests of the one JSON form). The rules judge the _metadata on storage where it is there, the history's copy
-- where the cleaner removed it: an edit of either copy of a retained checkpoint shows here.
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN c.history_digest IS NULL THEN 'a _metadata object on storage for a checkpoint the history never completed'
            ELSE 'the _metadata object on storage differs from the metadata in the history''s checkpoint_completed event' END AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
WHERE c.stored_digest IS NOT NULL AND (c.history_digest IS NULL OR c.history_digest <> c.stored_digest)
