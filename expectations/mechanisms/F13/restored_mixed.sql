-- explains: exactly_once_output.no_duplicate_commit, inflight_data.no_records_lost, state_consistency.counter_equals_truth, state_consistency.source_ahead_of_counter
-- F13, a restore from the mixed GLOBAL checkpoint: N completed GLOBAL under the PR after a late ack while the region
-- fallback it had requested was pending (the history's `fallback_requested` before N's decision, a task of the
-- failed region r whose ack arrived after the timeout), and N's metadata still holds entries of r that reference the
-- fallback checkpoint L next to r's fresh ones (rc_entries of N). A restore of r from N, or from a later checkpoint
-- whose entries of r still reference N (r failed each checkpoint since: its entries' refCheckpointIds lead back to
-- N), by a region failover of r or a global restore (restore_from), starts r's tasks from two different checkpoints: a source from L's offsets under a
-- sink at N (its records read and committed again), a counter at L under a source at N (the records between never
-- counted), a sink at L under a source at N (the records between never committed when N's notification had not
-- reached it). Every violation about a split r held in N (rc_entry_splits of N), in N or a later checkpoint, is
-- F13's; one about another split, before N, or in a run with no restore from N, is not.
WITH RECURSIVE
-- include: _late_ack.sql
mixed AS (  -- (N, r): N GLOBAL with r's entries grafted from L and r's late ack
  SELECT DISTINCT n.run_id, n.checkpoint_id, e.region
  FROM rc_checkpoints n
  JOIN {batch} r ON r.run_id = n.run_id AND r.semantics = 'pr'
  JOIN fb ON fb.run_id = n.run_id AND fb.checkpoint_id = n.checkpoint_id AND fb.seq < n.decided_seq
  JOIN rc_entries e ON e.run_id = n.run_id AND e.checkpoint_id = n.checkpoint_id AND e.ref_checkpoint_id = fb.fallback_id
                   AND array_contains(fb.failed_regions, e.region)
  JOIN late l ON l.run_id = n.run_id AND l.checkpoint_id = n.checkpoint_id AND l.region = e.region
  WHERE n.status = 'GLOBAL' AND n.completed
),
links AS (SELECT DISTINCT run_id, checkpoint_id, region, ref_checkpoint_id FROM rc_entries
           WHERE ref_checkpoint_id IS NOT NULL AND ref_checkpoint_id < checkpoint_id),
reaches (run_id, checkpoint_id, region, cur) AS (  -- checkpoints whose entries of r lead back to N
  SELECT run_id, checkpoint_id, region, checkpoint_id FROM mixed
  UNION ALL
  SELECT x.run_id, x.checkpoint_id, x.region, l.checkpoint_id
  FROM reaches x
  JOIN links l ON l.run_id = x.run_id AND l.ref_checkpoint_id = x.cur AND l.region = x.region
),
restored AS (  -- a restore of r from N, or from a checkpoint whose entries of r lead back to N
  SELECT DISTINCT x.run_id, x.checkpoint_id, x.region
  FROM (SELECT DISTINCT * FROM reaches) x
  JOIN rc_events ev ON ev.run_id = x.run_id AND ev.restore_from = x.cur
                   AND (ev.kind = 'global_restore' OR (ev.kind = 'region_failover' AND ev.region = x.region))
),
splits AS (
  SELECT DISTINCT x.run_id, x.checkpoint_id, s.split
  FROM restored x
  JOIN rc_entry_splits s ON s.run_id = x.run_id AND s.checkpoint_id = x.checkpoint_id AND s.region = x.region
  WHERE s.split IS NOT NULL
)
SELECT DISTINCT s.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, s.split
FROM splits s
JOIN rc_checkpoints c ON c.run_id = s.run_id AND c.checkpoint_id >= s.checkpoint_id
