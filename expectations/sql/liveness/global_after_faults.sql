-- After the faults stop, a GLOBAL checkpoint completes within heal_checkpoints attempts of the heal phase.
-- A bounded job that finishes before a GLOBAL checkpoint of the heal phase (before the phase, or just after it
-- started, on a checkpoint triggered before it) must have ended on a GLOBAL checkpoint (the last checkpoint it
-- completed); an unbounded job must reach the heal phase.
WITH cp AS (
  SELECT c.run_id, c.checkpoint_id, c.attempt, c.status, c.completed FROM rc_checkpoints c
),
heal AS (
  SELECT r.run_id, r.heal_attempt, r.heal_checkpoints, r.bounded, r.job_finished,
         max(CASE WHEN cp.status = 'GLOBAL' AND cp.attempt >= r.heal_attempt
                   AND cp.attempt < r.heal_attempt + r.heal_checkpoints THEN 1 ELSE 0 END) AS global_in_heal,
         max_by(cp.status, cp.checkpoint_id) FILTER (WHERE cp.completed) AS last_status,
         max(cp.checkpoint_id) FILTER (WHERE cp.completed) AS last_completed
  FROM {batch} r LEFT JOIN cp ON cp.run_id = r.run_id
  WHERE r.started AND r.run_finished
  GROUP BY r.run_id, r.heal_attempt, r.heal_checkpoints, r.bounded, r.job_finished
)
SELECT run_id, last_completed AS checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       CASE WHEN heal_attempt IS NULL AND NOT (bounded AND job_finished) THEN 'the heal phase never started'
            WHEN heal_attempt IS NULL THEN concat('bounded job ended on a ', coalesce(last_status, 'missing'),
                                                  ' checkpoint, no GLOBAL checkpoint after the faults')
            ELSE concat('no GLOBAL checkpoint within ', heal_checkpoints, ' attempts after the heal phase started at attempt ',
                        heal_attempt) END AS detail
FROM heal
WHERE (heal_attempt IS NULL AND NOT (bounded AND job_finished))
   OR (heal_attempt IS NULL AND bounded AND job_finished AND coalesce(last_status, '') <> 'GLOBAL')
   OR (heal_attempt IS NOT NULL AND global_in_heal = 0 AND NOT (bounded AND job_finished AND coalesce(last_status, '') = 'GLOBAL'))
