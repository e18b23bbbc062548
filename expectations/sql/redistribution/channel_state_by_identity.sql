-- Channel state is reassigned by channel identity, never by time: after a restore, the in-flight records of
-- split K's channel go, unchanged, to the new subtask whose restored source state holds split K.
WITH old AS (
  SELECT run_id, restore_id, restore_from, operator, channel, start, end FROM rc_redistributions
  WHERE side = 'old' AND kind = 'channel'
),
new AS (
  SELECT run_id, restore_id, restore_from, operator, subtask, channel, start, end FROM rc_redistributions
  WHERE side = 'new' AND kind = 'channel'
),
owner AS (
  SELECT run_id, restore_id, CAST(element AS INT) AS split, subtask FROM rc_redistributions
  WHERE side = 'new' AND kind = 'element' AND operator = 'source'
)
SELECT coalesce(o.run_id, n.run_id) AS run_id, coalesce(o.restore_from, n.restore_from) AS checkpoint_id,
       NULL AS region, n.subtask, coalesce(o.operator, n.operator) AS operator, coalesce(o.channel, n.channel) AS split,
       CASE WHEN n.channel IS NULL THEN concat('channel state [', o.start, ', ', o.end, ') not restored')
            WHEN o.channel IS NULL THEN concat('restored channel state [', n.start, ', ', n.end, ') that was not checkpointed')
            WHEN o.start <> n.start OR o.end <> n.end THEN concat('channel state [', o.start, ', ', o.end, ') restored as [', n.start, ', ', n.end, ')')
            ELSE concat('channel restored on subtask ', n.subtask, ' but its split is read by subtask ', coalesce(CAST(w.subtask AS STRING), 'none')) END AS detail
FROM old o
FULL OUTER JOIN new n ON n.run_id = o.run_id AND n.restore_id = o.restore_id AND n.operator = o.operator AND n.channel = o.channel
LEFT JOIN owner w ON w.run_id = coalesce(o.run_id, n.run_id) AND w.restore_id = coalesce(o.restore_id, n.restore_id)
                 AND w.split = coalesce(o.channel, n.channel)
JOIN {batch} r ON r.run_id = coalesce(o.run_id, n.run_id)
WHERE n.channel IS NULL OR o.channel IS NULL OR o.start <> n.start OR o.end <> n.end
   OR w.subtask IS NULL OR w.subtask <> n.subtask
