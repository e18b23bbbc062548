"""Faults inside pending checkpoints, concurrent checkpoints and late messages: what the event
simulation does at each interleaving, against the code it models.

In:  small scenarios with pinned schedules (`faults.schedule` entries placed with ``at``) or the
     swarm's drawn mix, emulated in memory on the real data plane (`tests.memrun`); and the
     CheckpointCoordinator driven step by step (`regionchaos.protocol`).
Out: a failover aborts every pending checkpoint, uncounted, under both semantics; the forced flag is
     read at the decision (tier 2 hits the checkpoint decided next) and a completion subsumes older
     pending checkpoints, uncounted; under the PR the canceller re-runs the regional decision while
     its fallback is pending, and a late ack can complete the checkpoint GLOBAL; a late ack's state is
     discarded; the region-failover case of RegionalCheckpointITCase; seeds replay event for event;
     the interleaving coverage a swarm reports.
"""

from __future__ import annotations

import pytest

from regionchaos.interleavings import INTERLEAVINGS
from regionchaos.protocol import coordinator as C
from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL
from regionchaos.scenario import ScenarioError, load
from tests import memrun
from tests.model_helpers import ack_states, coordinator

PR = {"execution.checkpointing.region.semantics": "pr"}


def _decided(result) -> dict[int, dict]:
    return {e["checkpoint_id"]: e for e in result.events if e["kind"] == "checkpoint_decided"}


def _crash_inside(at: str, after_acks: int | None = None, checkpoint: int = 3, region: int = 1) -> dict:
    entry = {"checkpoint": checkpoint, "kind": "subtask_crash", "region": region, "at": at}
    return {**entry, **({"after_acks": after_acks} if after_acks is not None else {})}


# -- a failover while checkpoints are pending ---------------------------------------------------------


@pytest.mark.parametrize("semantics", ["flip", "pr"])
def test_a_failover_aborts_every_pending_checkpoint_uncounted(semantics):
    """PROTOCOL.md 5 / ``SchedulerBase.restoreState``: ``abortPendingCheckpoints(JOB_FAILOVER_REGION)``, a
    reason ``CheckpointFailureManager`` ignores: with tolerable-failed-checkpoints 0 the job does not fail."""
    sc = load("smoke", {"execution.checkpointing.region.semantics": semantics,
                        "execution.checkpointing.tolerable-failed-checkpoints": 0,
                        "faults.schedule": [_crash_inside("pending", 3)]})
    result, _ = memrun.emulate(sc)
    aborted = [d for d in _decided(result).values() if d["reason"] == C.R_FAILOVER]
    failover = next(e for e in result.events if e["kind"] == "region_failover")
    assert [d["checkpoint_id"] for d in aborted] == [4]  # attempt 3's checkpoint, pending at the crash
    assert aborted[0]["seq"] < failover["seq"] and aborted[0]["status"] == C.ABORTED
    assert not any(e["kind"] == "global_restore" and "tolerable" in e.get("cause", "") for e in result.events)
    assert result.stats["interleavings"]["failover_while_pending"] == 1


def test_the_mutant_that_keeps_pending_checkpoints_completes_them_after_the_failover():
    sc = load("smoke", {"faults.schedule": [_crash_inside("pending", 3)]})
    result, _ = memrun.emulate(sc, "failover-keeps-pending")
    decided = _decided(result)
    failover = next(e for e in result.events if e["kind"] == "region_failover")
    assert decided[4]["status"] != C.ABORTED and decided[4]["seq"] > failover["seq"]


def test_region_failover_case_of_the_itcase():
    """RegionalCheckpointITCase.testRegionalCheckpointCompleteDuringRegionFailover (apache/flink bd2cf43c):
    P = 3, max-failure-ratio 0.5, max-consecutive-failures 2, a store retaining 1; after the first completed
    checkpoint the last region's map subtask fails in its checkpoint's synchronous phase, three times: a task
    failure while the checkpoint is pending (it aborts every pending checkpoint, JOB_FAILOVER_REGION), the
    region restores from the latest checkpoint. The Flink test asserts that checkpoints complete and every
    sink subtask receives records; the job is bounded and finishes here, nothing lost."""
    sc = load("bounded-final", {**PR, "execution.checkpointing.region.max-failure-ratio": 0.5,
                                "execution.checkpointing.region.max-consecutive-failures": 2,
                                "state.checkpoints.num-retained": 1, "topology.parallelism": 3,
                                "workload.splits": 6, "faults.schedule": [
                                    _crash_inside("pending", 0, checkpoint=c, region=2) for c in (2, 3, 4)]})
    result, store = memrun.emulate(sc)
    decided = list(_decided(result).values())
    assert result.stats["finished"] and sum(d["status"] != C.ABORTED for d in decided) >= 1
    assert sum(d["reason"] == C.R_FAILOVER for d in decided) == 3
    assert {c["subtask"] for c in memrun.commits(store)} == {0, 1, 2}  # every sink subtask received records
    assert result.stats["records_committed"] >= 6 * sc.workload.records_per_split


# -- the forced flag and subsumption with several checkpoints pending ------------------------------------


def _two_pending(semantics: str, mutant: str | None = None):
    """Checkpoint 1 GLOBAL, then 2 and 3 pending at once; 2 completes REGIONAL at the bound (1), then 3,
    with a declined region too, is decided."""
    coord = coordinator(4, ratio=0.5, max_consecutive=1, semantics=semantics, mutant=mutant)
    coord.enumerator.add_splits(range(4))
    owned = {sub: list(s) for sub, s in coord.enumerator.assign_pending().items()}
    first = coord.trigger_checkpoint()
    for t in sorted(first.expected):
        coord.receive_acknowledge(first, t, ack_states(1, t, owned))
    assert coord.complete_pending_checkpoint(first).status == GLOBAL
    two, three = coord.trigger_checkpoint(), coord.trigger_checkpoint()
    for pending in (two, three):
        for t in sorted(pending.expected):
            if t == ("src", 0):
                coord.receive_decline(pending, t, "CHECKPOINT_DECLINED")
            else:
                coord.receive_acknowledge(pending, t, ack_states(pending.checkpoint_id, t, owned))
    return coord, two, three


@pytest.mark.parametrize("semantics", ["flip", "pr"])
def test_the_forced_flag_is_read_at_the_decision(semantics):
    coord, two, three = _two_pending(semantics)
    assert not three.forced_global  # triggered before 2 completed: a reading at the trigger says not forced
    assert coord.complete_pending_checkpoint(two).status == REGIONAL
    outcome = coord.complete_pending_checkpoint(three)
    assert (outcome.status, outcome.reason, outcome.forced_global) == (C.ABORTED, C.R_FORCED_GLOBAL, True)


def test_the_mutant_that_fixes_the_flag_at_the_trigger_lets_a_second_regional_through():
    coord, two, three = _two_pending("flip", mutant="forced-flag-at-trigger")
    assert coord.complete_pending_checkpoint(two).status == REGIONAL
    assert coord.complete_pending_checkpoint(three).status == REGIONAL  # past max-consecutive-failures 1


def test_a_completion_subsumes_older_pending_checkpoints_uncounted():
    """``dropSubsumedCheckpoints``: every pending checkpoint older than a completed one is aborted,
    CHECKPOINT_SUBSUMED, which CheckpointFailureManager ignores."""
    coord, two, three = _two_pending("pr")
    three.declines.clear()
    coord.receive_acknowledge(three, ("src", 0), ack_states(three.checkpoint_id, ("src", 0), {}))
    assert coord.complete_pending_checkpoint(three).status == GLOBAL
    assert coord.subsumed_pending(three.checkpoint_id) == [two]
    aborted = coord.abort(two, coord._undecided(two, settled=False), C.R_SUBSUMED)
    assert aborted.status == C.ABORTED and aborted.failures_after == 0 and not aborted.job_failed


# -- the PR's decision while its region fallback is pending -----------------------------------------------


def test_pr_the_canceller_runs_the_regional_decision_again_while_the_fallback_is_pending():
    """``CheckpointCanceller.run`` checks only ``isDisposed``: a REGIONAL decision whose fallback future is
    still pending at the timeout is taken again, and the coordinator is asked a second time."""
    sc = load("smoke", {**PR, "timing.fallback_ms": [700_000, 700_000], "faults.schedule": [
        {"checkpoint": 2, "kind": "decline", "vertex": "source", "subtask": 1}]})
    result, _ = memrun.emulate(sc)
    requests = [e for e in result.events if e["kind"] == "fallback_requested" and e["checkpoint_id"] == 3]
    assert [e["request"] for e in requests] == [1, 2]
    done = [e for e in result.events if e["kind"] == "fallback_completed" and e["checkpoint_id"] == 3]
    assert [e["applied"] for e in done] == [True, False]  # the first completes it, the second finds it done


def test_pr_a_late_ack_during_the_fallback_completes_the_checkpoint_global():
    """A task the canceller marked declined is still in ``notYetAcknowledgedTasks``: its late ack succeeds
    and, the last one, makes the checkpoint fully acknowledged: GLOBAL, though its REGIONAL decision came
    first (under the FLIP the silent task's ack is late and discarded)."""
    silent = [{"checkpoint": 2, "kind": "timeout", "vertex": v, "subtask": 1} for v in ("source", "process")]
    for semantics, status in (("pr", GLOBAL), ("flip", REGIONAL)):
        sc = load("smoke", {"execution.checkpointing.region.semantics": semantics,
                            "timing.fallback_ms": [5_000, 5_000], "faults.schedule": silent})
        result, _ = memrun.emulate(sc)
        assert _decided(result)[3]["status"] == status, semantics
        assert any(e["kind"] == "fallback_requested" and e["checkpoint_id"] == 3 for e in result.events)


# -- late acknowledgements ------------------------------------------------------------------------------


@pytest.mark.parametrize("mutant, kept", [(None, False), ("late-ack-kept", True)])
def test_a_late_acks_state_is_discarded_when_it_arrives(mutant, kept):
    """A TaskManager's state PUT is slow: its tasks' acks arrive after the checkpoint ended (their region
    fails it, it completes REGIONAL), and their state object was uploaded after its directory went: the
    JobManager discards it when the acks arrive (``discardSubtaskState``); the object is deleted, or, with
    the mutant, left behind."""
    sc = load("smoke", {"faults.schedule": [{"checkpoint": 2, "kind": "slow_put", "taskmanager": 1}],
                        "execution.checkpointing.region.max-failure-ratio": 0.5})
    result, store = memrun.emulate(sc, mutant)
    key = "checkpoints/chk-3/tm-1.state"
    decided = _decided(result)[3]
    assert decided["status"] == REGIONAL
    assert (key in store.list_keys("checkpoints/")) is kept


# -- determinism, schedules and coverage ----------------------------------------------------------------


@pytest.mark.parametrize("seed", [3, 11, 44])
def test_a_swarm_seed_replays_event_for_event(seed):
    runs = [memrun.emulate(load("smoke", {"faults.swarm": True, "seed": seed})) for _ in range(2)]
    (a, store_a), (b, store_b) = runs
    assert a.events == b.events
    assert {k: store_a.get(k) for k in store_a.list_keys("") if "timing/" not in k} == \
           {k: store_b.get(k) for k in store_b.list_keys("") if "timing/" not in k}


def test_the_swarm_covers_every_interleaving():
    seen = {kind: 0 for kind in INTERLEAVINGS}
    for seed in range(1, 41):
        result, _ = memrun.emulate(load("smoke", {"faults.swarm": True, "seed": seed}))
        for kind, n in result.stats["interleavings"].items():
            seen[kind] += n > 0
    assert all(seen.values()), seen


@pytest.mark.parametrize("entry, field", [
    ({"checkpoint": 1, "kind": "decline", "vertex": "source", "subtask": 0, "at": "pending"}, "at"),
    ({"checkpoint": 1, "kind": "subtask_crash", "region": 0, "after_acks": 2}, "after_acks"),
    ({"checkpoint": 1, "kind": "subtask_crash", "region": 0, "at": "later"}, "at"),
])
def test_a_bad_instant_names_its_field(entry, field):
    with pytest.raises(ScenarioError) as err:
        load("smoke", {"faults.schedule": [entry]})
    assert any(f.endswith(field) for f, _ in err.value.errors), err.value.errors


def test_the_region_timeout_is_refused_under_the_pr():
    with pytest.raises(ScenarioError) as err:
        load("smoke", {**PR, "execution.checkpointing.region.timeout": 1000})
    assert [f for f, _ in err.value.errors] == ["flink.execution.checkpointing.region.timeout"]
    assert "not a Flink key" in err.value.errors[0][1]


def test_shrinking_moves_a_fault_out_of_its_checkpoint_or_earlier():
    """A shrink step moves a fault placed inside a pending checkpoint out between checkpoints, or to land one
    response earlier: a smaller schedule, the same faults."""
    from regionchaos.shrink import candidates, size

    sc = load("smoke", {"faults.schedule": [_crash_inside("pending", 3)]})
    moved = [c for c in candidates(sc) if len(c.faults.schedule or ()) == 1 and c.checkpoints == sc.checkpoints
             and c.topology.parallelism == sc.topology.parallelism]
    entries = sorted((c.faults.schedule[0].at or "", c.faults.schedule[0].after_acks or 0) for c in moved)
    assert entries == [("", 0), ("pending", 2)]
    assert all(size(c) < size(sc) for c in candidates(sc))


def test_pinning_writes_where_each_fault_landed():
    """`pin` writes a drawn run's faults with their instants; the pinned run is the drawn run, event for event."""
    from regionchaos.schedule import pin

    drawn = next(sc for seed in range(1, 60)
                 if (sc := load("smoke", {"faults.swarm": True, "seed": seed})) and sc.faults.swarm
                 and any(e.get("at") for e in (memrun.emulate(sc, record_schedule=True)[0].schedule or [])))
    pinned, _ = pin(drawn)
    assert any(f.at not in (None, "between") for f in pinned.faults.schedule)
    a, _ = memrun.emulate(drawn)
    b, _ = memrun.emulate(pinned)
    def strip(events):
        return [{k: v for k, v in e.items() if k not in ("drawn", "scenario")} for e in events]
    assert strip(a.events) == strip(b.events)


def _rescale_then_decline(semantics: str, subtasks: list[int]):
    """4 -> 2 after the first checkpoint, then every task of ``subtasks`` declines the first checkpoint at
    parallelism 2 (max-failure-ratio 1.0: no ratio abort); the metadata copies of the history, by id."""
    from regionchaos.scenario import from_dict
    from tests import tamper_helpers as H

    sc = from_dict({
        "name": "t", "seed": 1, "checkpoints": 3, "topology": {"parallelism": 4, "taskmanagers": 2},
        "workload": {"splits": 8, "records_per_interval": [5, 20]},
        "flink": {"execution.checkpointing.region.enabled": True, "execution.checkpointing.region.semantics": semantics,
                  "execution.checkpointing.region.max-failure-ratio": 1.0,
                  "execution.checkpointing.region.max-consecutive-failures": 3},
        "rescale": [{"after_checkpoint": 1, "parallelism": 2}],
        "faults": {"schedule": [{"checkpoint": 2, "kind": "decline", "vertex": v, "subtask": s}
                                for s in subtasks for v in ("source", "process")], "heal_checkpoints": 1},
    })
    _, store = memrun.emulate(sc)
    return H.history_metadata(store)


def test_the_pr_names_the_old_parallelism_for_an_operator_no_subtask_acknowledged():
    """Behaviour 6 (part of F5): under the PR an operator none of whose subtasks acknowledged N gets an
    OperatorState built at the fallback checkpoint's parallelism (`lastState.getParallelism()`), so after
    4 -> 2 checkpoint 3's metadata names parallelism 4 with entries at subtasks 0 and 1 only; with one
    region failed the operator has a state of its own, at 2. The FLIP aborts a checkpoint every region
    failed (the all-regions-failed rule), so there it cannot happen."""
    every = _rescale_then_decline("pr", [0, 1])[3]
    assert every["type"] == "REGIONAL" and every["failedRegions"] == [0, 1]
    assert set(every["parallelism"].values()) == {4}
    assert {e["subtask"] for e in every["operatorSubtaskStates"]} == {0, 1}

    one = _rescale_then_decline("pr", [1])[3]
    assert one["type"] == "REGIONAL" and one["failedRegions"] == [1]
    assert set(one["parallelism"].values()) == {2}

    assert 3 not in _rescale_then_decline("flip", [0, 1])


def test_a_checkpoint_pending_when_the_job_finishes_is_aborted_and_its_state_deleted():
    """A checkpoint triggered after the final one completed, before its notifications finished the tasks, is
    still pending when the job finishes: the coordinator's shutdown aborts it (uncounted) and its state objects
    are deleted (`coordinator-fallback` seed 2 of the swarm's mix: checkpoint 44 after final checkpoint 43)."""
    from regionchaos.protocol.rules import R_SHUTDOWN, UNCOUNTED

    result, store = memrun.emulate(load("coordinator-fallback", {"seed": 2, "faults.swarm": True}))
    finished = next(e for e in result.events if e["kind"] == "job_finished")
    shut = [e for e in result.events if e["kind"] == "checkpoint_decided" and e.get("reason") == R_SHUTDOWN]
    assert shut and all(e["seq"] > finished["seq"] and e["checkpoint_id"] > finished["checkpoint_id"] for e in shut)
    assert R_SHUTDOWN in UNCOUNTED
    for e in shut:
        assert not store.list_keys(f"checkpoints/chk-{e['checkpoint_id']}/"), e["checkpoint_id"]


@pytest.mark.parametrize("seed", [12, 27])
def test_an_upload_still_running_when_the_job_finishes_is_discarded(seed):
    """A checkpoint that ended while one of its state PUTs still runs (seed 12: subsumed before the job
    finished; seed 27: pending, aborted by the coordinator's shutdown): the finishing task waits for that upload
    (``StreamTask.afterInvoke``: ``waitForPendingCheckpoints``) and its late ack reaches the running
    coordinator, which discards the object (`regionchaos.outcomes.discard_at_finish`). `bounded-final` seeds of
    the swarm's mix under ``keep-forcing``: nothing of such a checkpoint stays."""
    sc = load("bounded-final", {"faults.swarm": True, "seed": seed,
                                "execution.checkpointing.region.forced-global-failure": "keep-forcing"})
    result, store = memrun.emulate(sc)
    finished = next(e for e in result.events if e["kind"] == "job_finished")
    triggered = {e["checkpoint_id"]: e["time_ms"] for e in result.events if e["kind"] == "checkpoint_triggered"}
    responses = {e["checkpoint_id"]: e["tasks"] for e in result.events if e["kind"] == "task_responses"}
    outliving = {cid for cid, tasks in responses.items()
                 if any(t[2] == "ack" and t[4] is not None and triggered[cid] + t[4] > finished["time_ms"]
                        for t in tasks)}
    completed = {e["checkpoint_id"] for e in result.events if e["kind"] == "checkpoint_completed"}
    assert outliving - completed, outliving  # the interleaving this test is about happened
    for cid in outliving - completed:
        assert not store.list_keys(f"checkpoints/chk-{cid}/"), cid


def _named_and_present(store) -> tuple[set[str], set[str]]:
    """(the objects some `_metadata` on storage names, the state objects on storage)."""
    from regionchaos.protocol.checkpoint import CompletedCheckpoint

    keys = set(store.list_keys("checkpoints/"))
    named = set().union(*(CompletedCheckpoint.from_bytes(store.get(k)).object_keys()
                          for k in keys if k.endswith("/_metadata")))
    return named, {k for k in keys if not k.endswith("/_metadata")}


def test_a_finished_task_s_final_state_outlives_the_checkpoint_it_finished_on():
    """FLIP-147: a finished task's final state is reused by every later checkpoint. `coordinator-fallback` seed 18 of
    the swarm's mix under ``keep-forcing``: source 2 finishes on GLOBAL checkpoint 35's notification, which reaches
    it after 36 and 37 (each with source 2's own fresh entry) were triggered; 37 subsumes 35 (two retained). The
    final state moves to 37's fresh entry when 37 completes (`refresh_final_states`), and until then the cleaner
    keeps the object it is in (`CompletedCheckpointStore.live_objects`): every object a `_metadata` on storage names
    is there, and no state object is named by none."""
    sc = load("coordinator-fallback", {"faults.swarm": True, "seed": 18,
                                       "execution.checkpointing.region.forced-global-failure": "keep-forcing"})
    result, store = memrun.emulate(sc)
    finished = next(e for e in result.events if e["kind"] == "task_finished" and e["subtask"] == 2)
    decided = {e["checkpoint_id"]: e for e in result.events if e["kind"] == "checkpoint_decided"}
    triggered = {e["checkpoint_id"]: e["seq"] for e in result.events if e["kind"] == "checkpoint_triggered"}
    # the interleaving this is about: 37 triggered before source 2 finished on 35, then 37 subsumes 35
    assert finished["checkpoint_id"] == 35 and triggered[37] < finished["seq"] and 35 in decided[37]["subsumed"]
    named, state = _named_and_present(store)
    assert named <= state, sorted(named - state)
    assert state <= named, sorted(state - named)


def test_a_finished_task_s_fresh_entry_in_a_newer_checkpoint_becomes_its_final_state():
    """`pr-final-flag-forces-older` seed 2: three sources finish on checkpoint 5 after 6, with their fresh entries,
    was triggered; 6 completes and subsumes 5. Their final states are 6's entries from then on, so nothing keeps 5's
    objects: the cleaner deletes them and none is left that no `_metadata` names."""
    result, store = memrun.emulate(load("pr-final-flag-forces-older", {"seed": 2}))
    finished = [e for e in result.events if e["kind"] == "task_finished"]
    decided = {e["checkpoint_id"]: e for e in result.events if e["kind"] == "checkpoint_decided"}
    assert finished and {e["checkpoint_id"] for e in finished} == {5} and 5 in decided[6]["subsumed"]
    named, state = _named_and_present(store)
    assert not any(k.startswith("checkpoints/chk-5/") for k in state)
    assert named <= state and state <= named, (sorted(named - state), sorted(state - named))
