"""The fault kind ``ack_loss``: a TaskManager's acknowledgements never reach the JobManager.

In:  the catalogue scenario ``ack-loss`` (8 forward regions on 4 TaskManagers, regional
     checkpoints, ack_loss lasting 2 attempts), emulated in memory (no Spark), pinned, swarmed,
     and once deep through `regionchaos.runner` on the embedded S3 server with Spark, judged by
     the suites together with a copy whose history is edited.
Out: the fault is drawn from the seed and replays; it is a schedule kind (``regionchaos pin``
     writes it, a pinned run replays the drawn one) and a swarm kind (drawn on its own stream:
     the other kinds' mix does not move); the tasks on the TaskManager acknowledge (the task
     record: ``ack``, an upload time, never arrived, reason ``ack_loss``) while the coordinator's
     decision counts them timed out and fails their regions (regional checkpoints) or aborts
     (global ones); the deep run is valid, and the same run with the lost acks edited into
     acks on time fails ``failed_regions_follow_responses`` (the rule tells a lost ack from a
     wrongly failed region by the task record alone).
"""

from __future__ import annotations

import pytest

from regionchaos import runner
from regionchaos.cli import main
from regionchaos.faultkinds import FAULT_KINDS, SCHEDULE_KINDS
from regionchaos.nemesis import Nemesis
from regionchaos.scenario import ScenarioError, from_dict, load
from regionchaos.schedule import protocol_stats_of
from regionchaos.storage import ObjectStore
from tests import memrun
from tests import tamper_helpers as H
from tests.judge_pool import pooled

NAME = "ack-loss"
GLOBAL_ONLY = {"execution.checkpointing.region.enabled": False}
RULE = "failed_regions_follow_responses"


def _emulate(scenario):
    """(events, the faults handed out as schedule entries) of an in-memory emulation."""
    result, _ = memrun.emulate(scenario, record_schedule=True)
    return result.events, result.schedule


def _lost_by_checkpoint(events) -> dict[int, list]:
    """checkpoint id -> the task record's rows whose ack never arrived."""
    return {e["checkpoint_id"]: [row for row in e["tasks"] if row[3] is None]
            for e in events if e["kind"] == "task_responses"}


def test_the_fault_is_drawn_from_the_seed_and_replays():
    scenario = load(NAME, seed=1)
    events, schedule = _emulate(scenario)
    again, schedule_again = _emulate(load(NAME, seed=1))
    assert events == again and schedule == schedule_again
    hits = [(f["checkpoint"], f["taskmanager"]) for f in schedule if f["kind"] == "ack_loss"]
    assert hits, "seed 1 of ack-loss draws no ack_loss"
    _, other = _emulate(load(NAME, seed=2))
    assert hits != [(f["checkpoint"], f["taskmanager"]) for f in other if f["kind"] == "ack_loss"]
    # a hit lasts ack_loss_checkpoints (2) attempts: every lost attempt of a TaskManager has a neighbour
    for attempt, tm in hits:
        assert (attempt - 1, tm) in hits or (attempt + 1, tm) in hits, (attempt, tm, hits)
    never = load(NAME, seed=1, overrides={"faults.ack_loss": 0.0})
    assert not [f for f in _emulate(never)[1] if f["kind"] == "ack_loss"]
    assert "ack_loss" not in load("regional-basic").to_dict()["faults"]  # off: the dict (run id) as before


def test_it_is_a_schedule_kind_that_pin_writes_and_replays(tmp_path, capsys):
    out = tmp_path / "pinned.yaml"
    assert main(["pin", "--scenario", NAME, "--seed", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    lines = [line for line in out.read_text().splitlines() if "kind: ack_loss" in line]
    assert lines and all("taskmanager:" in line for line in lines), out.read_text()
    pinned = load(str(out))
    assert "ack_loss" in SCHEDULE_KINDS and pinned.faults.schedule
    assert protocol_stats_of(pinned) == protocol_stats_of(load(NAME, seed=1))
    data = pinned.to_dict()
    data["faults"]["schedule"] = [{"checkpoint": 0, "kind": "ack_loss", "region": 1}]
    with pytest.raises(ScenarioError) as err:
        from_dict(data)
    fields = [f for f, _ in err.value.errors]
    assert "faults.schedule.0.taskmanager" in fields and "faults.schedule.0.region" in fields, err.value.errors


def test_it_is_in_the_swarm_mix_on_its_own_stream():
    assert "ack_loss" in FAULT_KINDS
    swarm = {"faults.swarm": True}
    mixes = [Nemesis(load("smoke", seed=s, overrides=swarm)).faults for s in range(1, 41)]
    on = [m.ack_loss for m in mixes if m.ack_loss > 0]
    assert 5 < len(on) < 35 and all(p <= 0.1 for p in on)  # on for about half the seeds, up to 2 * 0.05
    # its scale moves only its own value: the other kinds' mix is drawn as before the kind existed
    for s in range(1, 41):
        a = Nemesis(load("smoke", seed=s, overrides=swarm)).faults
        b = Nemesis(load("smoke", seed=s, overrides={**swarm, "faults.ack_loss": 0.4})).faults
        others = [k for k in FAULT_KINDS if k != "ack_loss"] + ["correlated_regions"]
        assert [getattr(a, k) for k in others] == [getattr(b, k) for k in others]
        assert (a.ack_loss > 0) == (b.ack_loss > 0)


def test_the_tasks_acknowledge_and_the_coordinator_fails_their_regions():
    scenario = load(NAME, seed=1)
    tms = scenario.topology.taskmanagers
    events, schedule = _emulate(scenario)
    lost_at = {}
    for f in schedule:
        if f["kind"] == "ack_loss":
            lost_at.setdefault(f["checkpoint"], set()).add(f["taskmanager"])
    attempt_of = {e["checkpoint_id"]: e["attempt"] for e in events if e["kind"] == "checkpoint_triggered"}
    decided = {e["checkpoint_id"]: e for e in events if e["kind"] == "checkpoint_decided"}
    regional_with_loss = 0
    for cid, rows in _lost_by_checkpoint(events).items():
        assert all(r[2] == "ack" and r[4] is not None and r[5] == "ack_loss" for r in rows), rows
        assert {r[1] % tms for r in rows} == lost_at.get(attempt_of[cid], set()) - _declined_only(events, cid, tms)
        if not rows:
            continue
        d = decided[cid]
        timed_out = {(v, s) for v, s, _ in d["timed_out"]}
        assert {(r[0], r[1]) for r in rows} <= timed_out, (cid, rows, d["timed_out"])
        assert d["status"] != "GLOBAL", d
        if d["status"] == "REGIONAL":  # forward job: the region of subtask s is s
            assert {r[1] for r in rows} <= set(d["failed_regions"]), (cid, rows, d["failed_regions"])
            regional_with_loss += 1
    assert regional_with_loss >= 3


def _declined_only(events, cid, tms) -> set[int]:
    """TaskManagers all of whose tasks declined at checkpoint ``cid`` (no ack to lose)."""
    rows = next(e["tasks"] for e in events if e["kind"] == "task_responses" and e["checkpoint_id"] == cid)
    return {tm for tm in range(tms) if all(r[2] == "decline" for r in rows if r[1] % tms == tm)}


def test_with_global_checkpoints_a_lost_ack_aborts_the_checkpoint():
    events, _ = _emulate(load(NAME, seed=1, overrides=GLOBAL_ONLY))
    decided = {e["checkpoint_id"]: e for e in events if e["kind"] == "checkpoint_decided"}
    with_loss = [cid for cid, rows in _lost_by_checkpoint(events).items() if rows]
    assert with_loss and all(decided[cid]["status"] == "ABORTED" for cid in with_loss)


# -- the deep run, judged ---------------------------------------------------------------------------

BASE = "ackloss-s1"


def make_the_lost_acks_arrive_in_time(store):
    """Every lost ack of the first checkpoint that had some now arrived at 5 ms: the record of a
    coordinator that failed regions whose tasks all answered in time."""
    def fn(events):
        for e in events:
            if e["kind"] == "task_responses" and any(row[3] is None for row in e["tasks"]):
                for row in e["tasks"]:
                    if row[3] is None:
                        row[3], row[5] = 5, None
                return events
        raise AssertionError("no lost ack")
    H.edit_history(store, fn)


def _build(config, spark) -> list[ObjectStore]:
    """The base run and its copy whose lost acknowledgements arrive in time."""
    scenario = load(NAME, seed=1)
    base = ObjectStore.for_run(config, BASE)
    runner.start(base, scenario, run_id=BASE, mutant=None, replay="ack-loss base", spark=spark)
    edited = H.copy_run(base, f"{BASE}-in-time")
    make_the_lost_acks_arrive_in_time(edited)
    return [base, edited]


pooled(__name__, _build)


@pytest.fixture(scope="module")
def judged(judge_pool) -> dict[str, dict]:
    return judge_pool.results(__name__)


@pytest.mark.spark
def test_the_deep_run_is_valid(judged):
    result = judged[BASE]
    failing = [(c["name"], c.get("failed_rules"), c.get("error")) for c in result.checks if c["success"] is not True]
    assert result.verdict == "valid" and not failing, failing


@pytest.mark.spark
def test_lost_acks_edited_into_acks_on_time_fail_the_rule(judged):
    result = judged[f"{BASE}-in-time"]
    assert RULE in H.failed_rules(result, "decisions_follow_rules"), [
        (c["name"], c.get("failed_rules"), c.get("error")) for c in result.checks if c["success"] is not True]
