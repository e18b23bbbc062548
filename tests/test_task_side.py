"""The task side's own record of its responses, the deadlines, and the rule that judges the
coordinator's failed regions against that record (not against the coordinator's decision).

In:  the coordinator's API with responses that carry their arrival time (pure); emulations
     with ``execution.checkpointing.region.timeout`` set (no Spark); a judged run and copies
     of it whose ``task_responses`` history events are edited on storage.
Out: an ack after the deadline counts as timed out: the region timeout under the FLIP with
     regional checkpoints on, the checkpoint timeout otherwise (and always under the PR);
     the emulation logs every triggered task's response and the coordinator fails exactly
     the regions of late or declining tasks; ``failed_regions_follow_responses`` passes on
     the untampered run and fails when the task record is edited, or when a decision names
     other failed regions than the task record does.
"""

from __future__ import annotations

import dataclasses

import pytest

from regionchaos import runner
from regionchaos.emulator import Emulation
from regionchaos.protocol.coordinator import GLOBAL, REGIONAL
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests import memrun
from tests import model_helpers as M
from tests import tamper_helpers as H
from tests.judge_pool import pooled

T, R = 600_000, 150_000  # checkpoint timeout, region timeout (ms)
LATE_TASK = ("proc", 1)  # region 1 of the forward job of model_helpers


def _coordinator(semantics: str = "flip", region_timeout: int | None = R):
    coord = M.coordinator(4, semantics=semantics, max_consecutive=3)
    coord.settings = dataclasses.replace(coord.settings, timeout_ms=T, region_timeout_ms=region_timeout)
    return coord


def _checkpoint(coord, owned, at_ms: dict):
    pending = coord.trigger_checkpoint()
    for task in sorted(pending.expected - set(pending.acks)):
        coord.receive_acknowledge(pending, task, M.ack_states(pending.checkpoint_id, task, owned),
                                  at_ms=at_ms.get(task, 10))
    return coord.complete_pending_checkpoint(pending)


def _second_checkpoint(semantics: str, region_timeout: int | None, late_at: int):
    coord = _coordinator(semantics, region_timeout)
    owned = M.start(coord, 8)
    assert _checkpoint(coord, owned, {}).status == GLOBAL  # every ack at 10 ms
    return _checkpoint(coord, owned, {LATE_TASK: late_at})


def test_an_ack_after_the_region_timeout_fails_its_region_under_the_flip():
    outcome = _second_checkpoint("flip", R, R + 1)
    assert (outcome.status, outcome.failed_regions, outcome.timed_out) == (REGIONAL, (1,), (LATE_TASK,))
    assert outcome.checkpoint.operator_states[("union", 1)].handles[0].checkpoint_id != outcome.checkpoint_id


def test_an_ack_at_the_region_timeout_is_on_time():
    assert _second_checkpoint("flip", R, R).status == GLOBAL


def test_without_a_region_timeout_the_checkpoint_timeout_is_the_deadline():
    assert _second_checkpoint("flip", None, T).status == GLOBAL
    outcome = _second_checkpoint("flip", None, T + 1)
    assert (outcome.status, outcome.timed_out) == (REGIONAL, (LATE_TASK,))


def test_the_pr_has_no_region_timeout():
    assert _second_checkpoint("pr", R, R + 1).status == GLOBAL
    # past the checkpoint timeout the PR's CheckpointCanceller marks the task declined: its region fails
    outcome = _second_checkpoint("pr", R, T + 1)
    assert (outcome.status, outcome.timed_out) == (REGIONAL, (LATE_TASK,))


def test_a_late_ack_is_discarded_not_counted_twice():
    coord = _coordinator()
    owned = M.start(coord, 8)
    pending = coord.trigger_checkpoint()
    coord.receive_acknowledge(pending, LATE_TASK, M.ack_states(pending.checkpoint_id, LATE_TASK, owned), at_ms=R + 1)
    with pytest.raises(ValueError, match="already responded"):
        coord.receive_acknowledge(pending, LATE_TASK, M.ack_states(pending.checkpoint_id, LATE_TASK, owned), at_ms=1)


# -- the emulation -----------------------------------------------------------------------------

REGION_TIMEOUT = {"execution.checkpointing.region.timeout": 150_000}


def _emulate(name: str, seed: int, overrides: dict | None = None):
    sc = load(name, seed=seed, overrides=overrides)
    emulation = Emulation(sc, memrun.persistence(sc))
    return sc, emulation, emulation.run().events


def test_the_region_timeout_reaches_the_coordinator():
    sc, emulation, _ = _emulate("smoke", 1, REGION_TIMEOUT)
    assert emulation.coordinator.settings.region_timeout_ms == 150_000
    assert emulation.coordinator.settings.deadline_ms == 150_000
    assert emulation.coordinator.settings.timeout_ms == sc.flink.timeout_ms


@pytest.mark.parametrize("seed", [1, 2])
def test_every_triggered_task_reports_and_late_acks_fail_their_region(seed):
    sc, _, events = _emulate("regional-basic", seed, REGION_TIMEOUT)
    responses = {e["checkpoint_id"]: e["tasks"] for e in events if e["kind"] == "task_responses"}
    triggered = {e["checkpoint_id"]: e["expected"] for e in events if e["kind"] == "checkpoint_triggered"}
    assert {cid: len(tasks) for cid, tasks in responses.items()} == triggered
    late_between = 0  # acks after the region timeout but within the checkpoint timeout
    for e in (e for e in events if e["kind"] == "checkpoint_decided"):
        tasks = responses[e["checkpoint_id"]]
        must_fail = {(v, s) for v, s, kind, at, _, _ in tasks if kind == "decline" or at > 150_000}
        failed = {(v, s) for v, s, _, _ in e["declined"]} | {(v, s) for v, s, _ in e["timed_out"]}
        assert failed == must_fail, e["checkpoint_id"]
        late_between += sum(1 for _, _, kind, at, _, _ in tasks if kind == "ack" and 150_000 < at <= sc.flink.timeout_ms)
    assert late_between > 0  # the schedule exercises the region timeout at all


def test_without_a_region_timeout_the_draws_are_those_of_before():
    """The upload times have a stream of their own: without a region timeout every on-time
    ack stays on time, so no other draw (declines, crashes) moved."""
    _, _, events = _emulate("regional-basic", 1)
    timed_out = [t for e in events if e["kind"] == "checkpoint_decided" for t in e["timed_out"]]
    late = [(v, s) for e in events if e["kind"] == "task_responses"
            for v, s, kind, at, _, _ in e["tasks"] if kind == "ack" and at > 600_000]
    assert sorted(late) == sorted((v, s) for v, s, _ in timed_out)


# -- the rule, on raw artifacts -------------------------------------------------------------------

BASE = "taskside-regional-basic-s1"
RULE = "failed_regions_follow_responses"


def _completed_with_regional(store):
    events = H.read_history(store)
    decided = {e["checkpoint_id"]: e for e in events if e["kind"] == "checkpoint_decided"}
    return [cid for cid, e in sorted(decided.items()) if e["status"] == "REGIONAL"], decided


def make_a_healthy_ack_late(store):
    """A task of a region the REGIONAL checkpoint kept fresh now answered after the deadline."""
    regional, decided = _completed_with_regional(store)
    cid = regional[0]
    failed = set(decided[cid]["failed_regions"])

    def fn(events):
        for e in events:
            if e["kind"] == "task_responses" and e["checkpoint_id"] == cid:
                for row in e["tasks"]:
                    if row[2] == "ack" and row[1] not in failed:  # forward job: region = subtask
                        row[3] = 150_001
                        return events
        raise AssertionError("no healthy ack")
    H.edit_history(store, fn)


def make_the_failed_region_answer_in_time(store):
    """Every task of a region the checkpoint fell back now acknowledged in time."""
    regional, decided = _completed_with_regional(store)
    cid = regional[0]
    region = decided[cid]["failed_regions"][0]

    def fn(events):
        for e in events:
            if e["kind"] == "task_responses" and e["checkpoint_id"] == cid:
                for row in e["tasks"]:
                    if row[1] == region:
                        row[2], row[3], row[5] = "ack", 5, None
        return events
    H.edit_history(store, fn)


def drop_a_task_record(store):
    regional, _ = _completed_with_regional(store)
    H.edit_history(store, lambda events: [e for e in events
                                          if not (e["kind"] == "task_responses" and e["checkpoint_id"] == regional[0])])


def misname_the_failed_region_of_a_decision(store):
    """The REGIONAL decision now names another region as failed (the task record and the metadata
    stay as they were): a coordinator mapping tasks to the wrong regions says just this."""
    regional, decided = _completed_with_regional(store)
    cid = regional[0]
    failed = decided[cid]["failed_regions"]
    healthy = sorted(set(range(decided[cid]["num_regions"])) - set(failed))

    def fn(events):
        for e in events:
            if e["kind"] == "checkpoint_decided" and e["checkpoint_id"] == cid:
                e["failed_regions"] = sorted([healthy[0], *failed[1:]])
        return events
    H.edit_history(store, fn)


CASES = {"late-healthy": make_a_healthy_ack_late, "failed-in-time": make_the_failed_region_answer_in_time,
         "no-record": drop_a_task_record, "decision-misnames": misname_the_failed_region_of_a_decision}


def _build(config, spark) -> list[ObjectStore]:
    """The base run and one edited copy per case."""
    scenario = load("regional-basic", seed=1, overrides=REGION_TIMEOUT)
    base = ObjectStore.for_run(config, BASE)
    runner.start(base, scenario, run_id=BASE, mutant=None, replay="task-side base")
    stores = [base]
    for name, edit in CASES.items():
        copy = H.copy_run(base, f"{BASE}-{name}")
        edit(copy)
        stores.append(copy)
    return stores


pooled(__name__, _build)


@pytest.fixture(scope="module")
def judged(judge_pool) -> dict[str, dict]:
    return judge_pool.results(__name__)


@pytest.mark.spark
def test_the_run_with_a_region_timeout_follows_its_responses(judged):
    result = judged[BASE]
    check = next(c for c in result.checks if c["name"] == "decisions_follow_rules")
    assert check["rules"][RULE] == 0 and check["success"] is True, check


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_editing_the_task_record_fails_the_rule(judged, case):
    result = judged[f"{BASE}-{case}"]
    assert RULE in H.failed_rules(result, "decisions_follow_rules"), [
        (c["name"], c.get("failed_rules"), c.get("error")) for c in result.checks if c["success"] is not True]
