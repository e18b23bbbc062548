-- FLIP-147: a task finishes only upon the notification of a completed checkpoint whose entries for it are fresh
-- (refCheckpointId empty): the state it finishes with is the one it snapshotted after its input ended, not a
-- fallback to an older checkpoint's. Judged on every task_finished event against that checkpoint's metadata
-- (rc_entries: the _metadata object where it is still on storage, else the history's copy); a task that
-- finished on a checkpoint with no entry for it, or on one that did not complete, fails too.
WITH fin AS (
  SELECT ev.run_id, ev.seq, ev.checkpoint_id, ev.subtask, get_json_object(ev.detail, '$.vertex') AS vertex
  FROM rc_events ev JOIN {batch} r ON r.run_id = ev.run_id
  WHERE ev.kind = 'task_finished'
),
per_task AS (
  SELECT f.run_id, f.seq, f.checkpoint_id, f.subtask, f.vertex, min(e.region) AS region,
         count(e.operator) AS n_entries,
         sum(CASE WHEN e.ref_checkpoint_id IS NOT NULL THEN 1 ELSE 0 END) AS referenced,
         concat_ws(', ', sort_array(collect_list(CASE WHEN e.ref_checkpoint_id IS NOT NULL
                                                     THEN concat(e.operator, ' -> ', e.ref_checkpoint_id) END))) AS refs
  FROM fin f
  LEFT JOIN rc_entries e ON e.run_id = f.run_id AND e.checkpoint_id = f.checkpoint_id
                        AND e.vertex = f.vertex AND e.subtask = f.subtask
  GROUP BY f.run_id, f.seq, f.checkpoint_id, f.subtask, f.vertex
)
SELECT p.run_id, p.checkpoint_id, p.region, p.subtask, p.vertex AS operator, NULL AS split,
       concat(p.vertex, ' subtask ', p.subtask, ' finished on checkpoint ', coalesce(CAST(p.checkpoint_id AS STRING), '?'),
              CASE WHEN p.n_entries = 0 THEN ', which holds no entry for it'
                   ELSE concat(', whose entries for it reference older checkpoints (', p.refs, ')') END) AS detail
FROM per_task p
WHERE p.n_entries = 0 OR p.referenced > 0
