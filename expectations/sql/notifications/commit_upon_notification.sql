-- Commit latency: when the notification of a completed checkpoint N reaches a sink subtask, it commits every
-- pending transaction with id <= N of the splits N's entry covers (the split's sink entry in N is fresh: its
-- region did not fail N and was notified complete). A transaction left open past that notification,
-- committed only upon a later one or by a later restore, would in production be lost to the transaction
-- timeout (Kafka's transaction.timeout.ms). Judged on the committed transactions (sink/commits, in commit
-- order) against the history's deliveries (`notified`: the sink subtasks N's notification reached, and the
-- commit file their commits go to): the first commit of each (split, transaction) is in a commit file no
-- later than the one of the first delivery of N to the subtask whose fresh sink entry holds the split, N the
-- first completed checkpoint >= the transaction with such an entry. A notification that never reached it
-- (overtaken by a newer one, which it then ignores, or lost to a restart, which commits) asks nothing.
-- The due checkpoint of a first commit is found in one pass over each split's first commits and fresh entries in
-- checkpoint order, read backwards (the smallest fresh id at or after the transaction's), not by joining every
-- commit to every later fresh entry of its split (a `large` run: 200 k commits x ~100 later checkpoints).
WITH c AS (
  SELECT c.*, row_number() OVER (PARTITION BY c.run_id, c.split, c.txn_checkpoint_id
                                 ORDER BY c.commit_file, c.pos) AS k
  FROM rc_commits c
),
fresh AS (
  SELECT s.run_id, s.split, s.checkpoint_id, s.subtask
  FROM rc_entry_splits s
  JOIN rc_checkpoints n ON n.run_id = s.run_id AND n.checkpoint_id = s.checkpoint_id
  WHERE s.operator = 'sink' AND s.ref_checkpoint_id IS NULL AND n.completed AND s.split IS NOT NULL
),
split_order AS (
  SELECT c.run_id, c.split, c.txn_checkpoint_id AS id, 0 AS is_fresh, CAST(NULL AS BIGINT) AS fresh_id,
         c.txn_checkpoint_id, c.start, c.end, c.subtask, c.cause, c.notified_checkpoint_id, c.commit_file
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
),
delivered AS (  -- the first delivery of each checkpoint's notification to each sink subtask
  SELECT run_id, checkpoint_id, subtask, min(commit_file) AS commit_file, min(seq) AS seq
  FROM (SELECT ev.run_id, ev.checkpoint_id, ev.seq, get_json_object(ev.detail, '$.commit_file') AS commit_file,
               explode(from_json(get_json_object(ev.detail, '$.subtasks'), 'array<int>')) AS subtask
        FROM rc_events ev WHERE ev.kind = 'notified')
  GROUP BY run_id, checkpoint_id, subtask
)
SELECT d.run_id, d.due_id AS checkpoint_id, NULL AS region, f.subtask, 'sink' AS operator, d.split,
       concat('transaction of checkpoint ', d.txn_checkpoint_id, ' [', d.start, ', ', d.end, ') was pending when ',
              'the notification of checkpoint ', d.due_id, ' reached sink subtask ', f.subtask,
              ' (history event ', n.seq, '), which holds the split''s fresh entry, but was committed only ',
              CASE WHEN d.cause = 'notify' THEN concat('upon checkpoint ', d.notified_checkpoint_id)
                   ELSE concat('by a ', d.cause) END, ', later (', d.commit_file, ')') AS detail
FROM due d
JOIN {batch} r ON r.run_id = d.run_id
JOIN fresh f ON f.run_id = d.run_id AND f.checkpoint_id = d.due_id AND f.split = d.split
JOIN delivered n ON n.run_id = d.run_id AND n.checkpoint_id = d.due_id AND n.subtask = f.subtask
WHERE d.is_fresh = 0 AND d.commit_file > n.commit_file
