-- explains: exactly_once_output.bounded_output_complete
-- F13 on a bounded run that finished: a region r restored from the mixed GLOBAL checkpoint N (or from a later
-- checkpoint whose entries of r lead back to it), as restored_mixed.sql finds, starts its tasks from two checkpoints,
-- so a split r held in N is read twice or has records never committed. The rule's row about such a split (the whole
-- run's output of it) is F13's; one about a split no such restore touched is not.
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
SELECT DISTINCT s.run_id, NULL AS checkpoint_id, NULL AS region, NULL AS subtask, 'sink' AS operator, s.split
FROM splits s
