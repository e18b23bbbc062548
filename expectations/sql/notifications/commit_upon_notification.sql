-- Commit latency: upon the notification of a completed checkpoint N, a sink subtask commits every pending
-- transaction with id <= N of the splits N's entry covers (the split's sink entry in N is fresh: its region
-- did not fail N and was notified complete). A transaction left open past that notification, committed only
-- upon a later notification or by a later restore, would in production be lost to the transaction timeout
-- (Kafka's transaction.timeout.ms). Judged on the committed transactions (sink/commits, in commit order):
-- the first commit of each (split, transaction) comes no later than the notification of the first completed
-- checkpoint N >= the transaction whose sink entry holds the split fresh (rc_entry_splits of N's metadata):
-- upon N or an earlier checkpoint, or by a restore in an attempt no later than N's.
-- The due checkpoint of a first commit is found in one pass over each split's first commits and fresh entries in
-- checkpoint order, read backwards (the smallest fresh id at or after the transaction's), not by joining every
-- commit to every later fresh entry of its split (a `large` run: 200 k commits x ~100 later checkpoints).
WITH c AS (
  SELECT c.*, row_number() OVER (PARTITION BY c.run_id, c.split, c.txn_checkpoint_id
                                 ORDER BY c.commit_file, c.pos) AS k
  FROM rc_commits c
),
fresh AS (
  SELECT s.run_id, s.split, s.checkpoint_id
  FROM rc_entry_splits s
  JOIN rc_checkpoints n ON n.run_id = s.run_id AND n.checkpoint_id = s.checkpoint_id
  WHERE s.operator = 'sink' AND s.ref_checkpoint_id IS NULL AND n.completed AND s.split IS NOT NULL
),
split_order AS (
  SELECT c.run_id, c.split, c.txn_checkpoint_id AS id, 0 AS is_fresh, CAST(NULL AS BIGINT) AS fresh_id,
         c.txn_checkpoint_id, c.start, c.end, c.subtask, c.cause, c.notified_checkpoint_id, c.attempt
  FROM c
  WHERE c.k = 1 AND c.run_id IS NOT NULL AND c.split IS NOT NULL AND c.txn_checkpoint_id IS NOT NULL
  UNION ALL
  SELECT f.run_id, f.split, f.checkpoint_id, 1, f.checkpoint_id,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM fresh f
),
due AS (
  SELECT o.*, min(o.fresh_id) OVER (PARTITION BY o.run_id, o.split ORDER BY o.id DESC, o.is_fresh DESC
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS due_id
  FROM split_order o
)
SELECT d.run_id, d.due_id AS checkpoint_id, NULL AS region, d.subtask, 'sink' AS operator, d.split,
       concat('transaction of checkpoint ', d.txn_checkpoint_id, ' [', d.start, ', ', d.end, ') was pending when ',
              'checkpoint ', d.due_id, ' (attempt ', n.attempt, ') notified the split''s fresh entry, but was committed ',
              CASE WHEN d.cause = 'notify' THEN concat('only upon checkpoint ', d.notified_checkpoint_id)
                   ELSE concat('only by a ', d.cause, ' in attempt ', d.attempt) END) AS detail
FROM due d
JOIN {batch} r ON r.run_id = d.run_id
JOIN rc_checkpoints n ON n.run_id = d.run_id AND n.checkpoint_id = d.due_id
WHERE d.is_fresh = 0
  AND ((d.cause = 'notify' AND d.notified_checkpoint_id > d.due_id)
    OR (d.cause <> 'notify' AND d.attempt > n.attempt))
