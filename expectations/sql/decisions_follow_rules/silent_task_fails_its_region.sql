-- PROTOCOL.md 3.2: with regional checkpoints on, a subtask that neither acks nor declines in time fails its
-- region; the coordinator then decides by the rules of 3.4. Letting the whole checkpoint expire for it
-- ('checkpoint-expired', Flink's plain checkpoint timeout, which the implementation PR keeps for a silent
-- task) is not one of them, even though a task did time out (abort_has_a_reason accepts that reason then).
SELECT c.run_id, c.checkpoint_id, NULL AS region, NULL AS subtask, NULL AS operator, NULL AS split,
       concat('ABORTED for checkpoint-expired with ', coalesce(c.timed_out_count, 0),
              ' silent subtask(s); with regional checkpoints on their regions fail instead (3.2)') AS detail
FROM rc_checkpoints c
JOIN {batch} r ON r.run_id = c.run_id
WHERE c.status = 'ABORTED' AND c.reason = 'checkpoint-expired' AND r.region_enabled
