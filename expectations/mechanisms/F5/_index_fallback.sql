-- F5's index fallback (a part of its mechanisms): fb, a failed subtask's source or sink entry (the split-keyed state)
-- in a REGIONAL checkpoint N that falls back to a checkpoint L taken at another parallelism (or in a GLOBAL N that
-- kept such a graft: a late ack during its region fallback, F13); by_index, such an N whose fallback entry holds
-- exactly the splits L's entry of the same operator and subtask index held; missing, a REGIONAL N with a source
-- subtask of the time without an entry; first_n, the first such N of the run (since), and its attempt.
fb AS (
  SELECT e.run_id, e.checkpoint_id, e.operator, e.subtask, e.ref_checkpoint_id
  FROM rc_entries e
  JOIN rc_checkpoints n ON n.run_id = e.run_id AND n.checkpoint_id = e.checkpoint_id
                        AND n.status IN ('REGIONAL', 'GLOBAL')
  JOIN rc_checkpoints l ON l.run_id = e.run_id AND l.checkpoint_id = e.ref_checkpoint_id
  WHERE e.operator IN ('source', 'sink') AND e.ref_checkpoint_id IS NOT NULL AND l.job_parallelism <> n.job_parallelism
),
held AS (
  SELECT run_id, checkpoint_id, operator, subtask, array_sort(collect_list(split)) AS splits
  FROM rc_entry_splits WHERE operator IN ('source', 'sink') GROUP BY run_id, checkpoint_id, operator, subtask
),
by_index AS (
  SELECT fb.run_id, fb.checkpoint_id
  FROM fb
  LEFT JOIN held hn ON hn.run_id = fb.run_id AND hn.checkpoint_id = fb.checkpoint_id AND hn.operator = fb.operator
                   AND hn.subtask = fb.subtask
  LEFT JOIN held hl ON hl.run_id = fb.run_id AND hl.checkpoint_id = fb.ref_checkpoint_id AND hl.operator = fb.operator
                   AND hl.subtask = fb.subtask
  WHERE coalesce(hn.splits, array()) = coalesce(hl.splits, array())
),
missing AS (
  SELECT n.run_id, n.checkpoint_id
  FROM rc_checkpoints n
  LEFT JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.operator = 'source'
  WHERE n.status = 'REGIONAL'
  GROUP BY n.run_id, n.checkpoint_id, n.job_parallelism
  HAVING count(DISTINCT e.subtask) < max(n.job_parallelism)
),
first_n AS (
  SELECT f.run_id, f.since, c.attempt
  FROM (SELECT run_id, min(checkpoint_id) AS since FROM (SELECT * FROM by_index UNION ALL SELECT * FROM missing)
        GROUP BY run_id) f
  JOIN rc_checkpoints c ON c.run_id = f.run_id AND c.checkpoint_id = f.since
)
