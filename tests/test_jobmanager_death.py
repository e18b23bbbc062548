"""A JobManager that dies does nothing more: the event simulation against a crash that lands inside its own work.

In:  `smoke` under ``semantics: pr`` on pinned schedules (in-memory runs, `tests.memrun`) where a JobManager crash
     between state upload and metadata commit (``crash_before_metadata``, which `regionchaos.instants` lands when its
     checkpoint ends, aborted or subsumed too) lands while the JobManager is in the middle of something: a region or
     global failover aborting every pending checkpoint, a completion subsuming the older pending ones.
Out: what the history shows after the ``jobmanager_failover``: the dead JobManager's other pending checkpoints are
     voided (never decided after the new JobManager took over), its region failovers and its completed checkpoint's
     notifications do not happen; the new JobManager's one restore is the job's restart.
     In Flink the JobManager process is gone: its scheduler's failover (``SchedulerBase.restoreState``:
     ``abortPendingCheckpoints`` first), its ``cleanupAfterCompletedCheckpoint`` (``dropSubsumedCheckpoints``, then
     ``sendAcknowledgeMessages``) stop where it died; the new JobManager restores the whole job from the completed
     checkpoint store (raoraoxiong/flink fada049, ``CheckpointCoordinator``). Before,
     a dead JobManager went on: smoke seed 553 as a PR swarm draws it logged an abort decision for checkpoint 9 with
     the old JobManager's counter (2) after the new one started at 0, which `counter_follows_decisions` then
     reported for checkpoint 10 as a counter change no finding explains.
"""

from __future__ import annotations

from regionchaos import history
from regionchaos.scenario import load
from tests import memrun


def _events(schedule: list[dict], **overrides) -> list[dict]:
    sc = load("smoke", {"execution.checkpointing.region.semantics": "pr", "faults.schedule": schedule,
                        "workload.discovered_splits": 0, **overrides})
    _, store = memrun.emulate(sc)
    keys = [k for k in store.list_keys(history.PREFIX) if history.is_history_key(k)]
    return history.decode(store.get(k) for k in sorted(keys))


def _failover(events: list[dict]) -> dict:
    (failover,) = [e for e in events if e["kind"] == "jobmanager_failover"]
    return failover


def _same_instant_after(events: list[dict], event: dict) -> list[dict]:
    """The events after ``event`` at its instant, up to the next checkpoint trigger (what the failover itself did)."""
    out = []
    for e in events:
        if e["seq"] <= event["seq"]:
            continue
        if e["time_ms"] != event["time_ms"] or e["kind"] == "checkpoint_triggered":
            break
        out.append(e)
    return out


def test_a_jobmanager_dying_in_a_region_failover_aborts_and_restores_nothing_more():
    """Checkpoint 2 waits for a silent source (600 s) and carries a JobManager crash; checkpoint 3 waits for its
    region fallback (100 s). TaskManager 1 is lost: the region failover aborts 2 (the crash lands: the JobManager
    dies), then would abort 3 and restart regions 1 and 3. The new JobManager voids 3 and restores the whole job
    from checkpoint 1, once; 3 is never decided, and no region failover follows."""
    events = _events([{"checkpoint": 1, "kind": "crash_before_metadata"},
                      {"checkpoint": 1, "kind": "timeout", "vertex": "source", "subtask": 0},
                      {"checkpoint": 2, "kind": "decline", "vertex": "process", "subtask": 3},
                      {"checkpoint": 3, "kind": "taskmanager_loss", "taskmanager": 1}],
                     **{"execution.checkpointing.max-concurrent-checkpoints": 2,
                        "timing.fallback_ms": [100000, 100000]})
    failover = _failover(events)
    assert failover["cause"] == "crash between state upload and metadata commit"
    assert [e["checkpoint_id"] for e in events if e["kind"] == "checkpoint_voided"] == [2, 3]
    assert not [e for e in events if e["kind"] == "checkpoint_decided" and e["checkpoint_id"] in (2, 3)]
    after = _same_instant_after(events, failover)
    restarts = [(e["kind"], e.get("restore_from")) for e in after
                if e["kind"] in ("global_restore", "region_failover", "global_restart_from_scratch")]
    assert restarts == [("global_restore", 1)]


def test_a_jobmanager_dying_while_it_subsumes_sends_no_notification():
    """Checkpoint 2 waits for a silent source and carries a JobManager crash; checkpoint 3 completes GLOBAL and
    subsumes it: the crash lands on 2's end, inside 3's completion, before its notifications. The dead JobManager
    notifies nobody of 3; the new one restores from 3."""
    events = _events([{"checkpoint": 1, "kind": "crash_before_metadata"},
                      {"checkpoint": 1, "kind": "timeout", "vertex": "source", "subtask": 0}],
                     **{"execution.checkpointing.max-concurrent-checkpoints": 2})
    failover = _failover(events)
    assert [(e["checkpoint_id"], e["type"]) for e in events if e["kind"] == "checkpoint_completed"
            and e["seq"] < failover["seq"]][-1] == (3, "GLOBAL")
    assert [e["restore_from"] for e in _same_instant_after(events, failover) if e["kind"] == "global_restore"] == [3]
    assert not [e for e in events if e["kind"] == "notified" and e["checkpoint_id"] == 3]


def test_a_jobmanager_dying_in_a_global_failover_restarts_the_job_once():
    """No checkpoint completed yet: checkpoint 1 waits for a silent source and carries a JobManager crash. A
    TaskManager is lost (regions 1 and 3) while 1 is pending, and with nothing to restore a region from the
    failover is global: it aborts 1, the crash lands, and the new JobManager (no checkpoint on storage) restarts
    the job from scratch, once; the dead one's global failover, and its failover of the second lost region, do not
    restart it again."""
    events = _events([{"checkpoint": 0, "kind": "crash_before_metadata"},
                      {"checkpoint": 0, "kind": "timeout", "vertex": "source", "subtask": 0},
                      {"checkpoint": 1, "kind": "taskmanager_loss", "taskmanager": 1}],
                     **{"execution.checkpointing.max-concurrent-checkpoints": 2})
    failover = _failover(events)
    assert failover["recovered"] == []
    after = _same_instant_after(events, failover)
    assert [e["kind"] for e in after if e["kind"] in ("global_restore", "region_failover",
                                                     "global_restart_from_scratch")] == ["global_restart_from_scratch"]
