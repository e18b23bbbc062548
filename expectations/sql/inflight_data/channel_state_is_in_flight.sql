-- With unaligned checkpoints, the channel state of split K in checkpoint N is exactly the records in flight:
-- [consumed, src) from N's counter and source state (nothing lost, nothing duplicated), including
-- checkpoints taken while recovered channel state was still being drained. Aligned checkpoints carry none.
WITH inflight AS (
  SELECT c.run_id, c.checkpoint_id, c.subtask, c.split, c.consumed, s.src
  FROM rc_state_values c
  JOIN rc_state_values s ON s.run_id = c.run_id AND s.checkpoint_id = c.checkpoint_id AND s.operator = 'source'
                        AND s.split = c.split AND s.found
  WHERE c.operator = 'counter' AND c.found
),
expected AS (SELECT * FROM inflight WHERE src > consumed),
actual AS (
  SELECT ch.* FROM rc_channel_state ch
  JOIN inflight i ON i.run_id = ch.run_id AND i.checkpoint_id = ch.checkpoint_id AND i.split = ch.split
)
SELECT coalesce(e.run_id, a.run_id) AS run_id, coalesce(e.checkpoint_id, a.checkpoint_id) AS checkpoint_id,
       NULL AS region, coalesce(e.subtask, a.subtask) AS subtask, 'counter' AS operator, coalesce(e.split, a.split) AS split,
       CASE WHEN a.split IS NULL THEN concat('records [', e.consumed, ', ', e.src, ') in flight but no channel state')
            WHEN e.split IS NULL THEN concat('channel state [', a.start, ', ', a.end, ') but nothing in flight')
            ELSE concat('channel state [', a.start, ', ', a.end, ') but in flight were [', e.consumed, ', ', e.src, ')') END AS detail
FROM expected e
FULL OUTER JOIN actual a ON a.run_id = e.run_id AND a.checkpoint_id = e.checkpoint_id AND a.split = e.split
JOIN {batch} r ON r.run_id = coalesce(e.run_id, a.run_id)
WHERE r.unaligned AND (a.split IS NULL OR e.split IS NULL OR a.start <> e.consumed OR a.end <> e.src)
UNION ALL
SELECT ch.run_id, ch.checkpoint_id, NULL, ch.subtask, ch.operator, ch.split,
       concat('aligned checkpoint carries channel state [', ch.start, ', ', ch.end, ')')
FROM rc_channel_state ch JOIN {batch} r ON r.run_id = ch.run_id
WHERE NOT r.unaligned
