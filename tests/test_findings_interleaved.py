"""Findings F12-F19 judged: each fails for its stated reason, its mechanism explains every violating row, and a
violation outside the mechanism is not excused.

In:  the findings' own catalogue scenarios (`FINDING_SCENARIOS`: F12 `pr-abort-completes-regional`, F13
     `pr-late-ack-completes-global`, F14 `concurrent-fallback-skips-newer`, F15 `pr-split-assigned-before-fallback`,
     F16 `pr-gateway-stays-closed`, F17 `pr-store-failure-leaks-slot`, F18 `concurrent-regional-past-bound`, F19
     `pr-final-flag-forces-older`), emulated once each into the embedded S3 server on their pinned schedules; the
     same schedules under the other semantics (`OTHER`: the FLIP for F12, F13, F15, F16, F17, F19, whose runs are valid;
     the PR for F14 and F18, which show them too); and copies of the finding runs with one raw artifact edited
     (`tests.tamper_helpers`: the history's notifications, task record, split assignments, store failure, region
     fallback requests or a final checkpoint's trigger, a sink commit file);
     and F13's schedule with the process task silent instead of the source (`F13_SOURCE_GRAFTED`).
     All runs are judged in the session's ONE pooled pass of the GX suites (tests/judge_pool.py).
Out: (a) each finding's run is invalid, fails exactly the invariants `FINDING_SCENARIOS` names (its ``expect``
     invariant among them), each through rules its finding declares, every violating row tagged by the finding's
     mechanism (``expectations/mechanisms/F12`` ... ``F19``), and is as expected (`findings.meets_expectation`);
     (b) the other semantics: valid for the PR-only findings, explained by F14's mechanism for F14; (c) each
     tampered copy fails the same rule with a row the mechanism does not tag, and is not as expected; (d) F13 with
     the source's graft left fails ``source_ahead_of_counter`` within the checkpoint, explained by F13.
The same findings read from the raw artifacts of in-memory runs, without Spark: tests/test_findings_interleaved_model.py.
"""

from __future__ import annotations


import pytest

from regionchaos import findings, runner
from regionchaos.judge import Judgement
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests import tamper_helpers as H
from tests.judge_pool import pooled

pytestmark = pytest.mark.spark

SEMANTICS = "flink.execution.checkpointing.region.semantics"
# finding -> (its catalogue scenario, the invariants its own schedule fails)
FINDING_SCENARIOS = {
    "F12": ("pr-abort-completes-regional", {"notifications", "exactly_once_output"}),
    "F13": ("pr-late-ack-completes-global", {"decisions_follow_rules", "exactly_once_output"}),
    "F14": ("concurrent-fallback-skips-newer", {"exactly_once_output"}),
    "F15": ("pr-split-assigned-before-fallback", {"reachable_global_state"}),
    "F16": ("pr-gateway-stays-closed", {"liveness", "reachable_global_state"}),
    "F17": ("pr-store-failure-leaks-slot", {"liveness"}),
    "F18": ("concurrent-regional-past-bound", {"flip_bounds"}),
    "F19": ("pr-final-flag-forces-older", {"decisions_follow_rules"}),
}
# the same schedule under the other semantics: (its override, the invariants it fails there)
OTHER = {"F12": ("flip", set()), "F13": ("flip", set()), "F14": ("pr", {"exactly_once_output"}),
         "F15": ("flip", set()), "F16": ("flip", set()), "F17": ("flip", set()), "F18": ("pr", {"flip_bounds"}),
         "F19": ("flip", set())}


# F13 with the process task silent instead: its late ack overwrites its own graft, the source's stays (checkpoint 1's
# offsets under a counter at 2), and checkpoint 2 is still retained at the end (its state objects are read)
F13_SOURCE_GRAFTED = {"faults.schedule": [{"checkpoint": 1, "kind": "timeout", "vertex": "process", "subtask": 1}],
                      "faults.heal_checkpoints": 1, "flink.state.checkpoints.num-retained": 3}
F13_SOURCE_GRAFTED_ID = "intl-f13-source-grafted"


def _run_id(finding: str, other: bool = False) -> str:
    return f"intl-{finding.lower()}" + (f"-{OTHER[finding][0]}" if other else "")


def _load(finding: str, other: bool = False):
    name = FINDING_SCENARIOS[finding][0]
    return load(name, {SEMANTICS: OTHER[finding][0]} if other else None)


def _emulate(config, finding: str, other: bool = False) -> ObjectStore:
    scenario = _load(finding, other)
    run_id = _run_id(finding, other)
    store = ObjectStore.for_run(config, run_id)
    overrides = {SEMANTICS: OTHER[finding][0]} if other else {}
    runner.start(store, scenario, run_id=run_id, mutant=None,
                 replay=runner.replay_line(FINDING_SCENARIOS[finding][0], scenario.seed, overrides, None))
    return store


# -- edits outside each mechanism ---------------------------------------------------------------------------


def forget_the_abort(store):
    """F12: the history's notifications that carried an abort now read as the deliveries of the completed
    checkpoint itself (no ``aborted``): the failed region's commit upon it is no abort notification's doing."""
    def fn(events):
        for e in events:
            if e["kind"] == "notified":
                e.pop("aborted", None)
        return events
    H.edit_history(store, fn)


def ack_in_time(store):
    """F13: the task record of the GLOBAL checkpoint 2: the silent task's ack arrived in time (no late ack), so
    nothing says its region's entries were grafted while a late ack was on its way."""
    H.acks_in_time(store, 2)


def duplicate_a_commit_of_another_region(store):
    """F14: a sink commit file: a commit of a sink of region 2 (no checkpoint skipped it) committed twice."""
    key = H.commit_keys(store)[0]

    def fn(commits):
        commits.append(dict(next(c for c in commits if c["subtask"] == 2)))
    H.tamper(store, key, H.edit_json(fn))


def forget_the_assignment(store):
    """F15: the history: the assignment of the discovered split while checkpoint 2 was pending is gone."""
    discovered = {s for e in H.read_history(store) if e["kind"] == "splits_discovered" for s in e["splits"]}
    H.edit_history(store, lambda events: [e for e in events if not (e["kind"] == "split_assigned"
                                                                     and e["split"] in discovered)])


def decline_after_the_snapshot(store):
    """F16: the task record of checkpoint 2: source 3 declined for a failed state upload, after its synchronous
    snapshot (and its AcknowledgeCheckpointEvent, which opens the gateway)."""
    def fn(events):
        record = next(e for e in events if e["kind"] == "task_responses" and e["checkpoint_id"] == 2)
        task = next(t for t in record["tasks"] if t[0] == "source" and t[1] == 3)
        task[5] = "CHECKPOINT_DECLINED_STATE_UPLOAD_FAILED"
        return events
    H.edit_history(store, fn)


def refuse_a_global_checkpoint(store):
    """F17: the history's store failure names a GLOBAL checkpoint (whose completion removes it in a finally): no
    REGIONAL checkpoint the store refused is left pending."""
    H.refusal_as_global(store)


def decide_after_the_older_completed(store):
    """F18: the history: the region fallback requests of the REGIONAL checkpoint past the bound are gone, so
    nothing says it was decided before the older REGIONAL checkpoint completed."""
    def fn(events):
        regional = [e["checkpoint_id"] for e in events if e["kind"] == "checkpoint_completed" and e["type"] == "REGIONAL"]
        return [e for e in events if not (e["kind"] == "fallback_requested" and e["checkpoint_id"] == regional[-1])]
    H.edit_history(store, fn)


def trigger_the_final_one_later(store):
    """F19: the history: the trigger of the first final checkpoint (4) no longer says it is final, so no final
    checkpoint's trigger came before the older checkpoint's forced decision (its own decision still says final)."""
    def fn(events):
        first = min(e["checkpoint_id"] for e in events if e["kind"] == "checkpoint_triggered" and e.get("final"))
        for e in events:
            if e["kind"] == "checkpoint_triggered" and e["checkpoint_id"] == first:
                e["final"] = False
        return events
    H.edit_history(store, fn)


# finding -> (edit, the rule whose untagged row it leaves)
TAMPERED = {
    "F12": (forget_the_abort, "notifications.failed_region_did_not_commit"),
    "F13": (ack_in_time, "decisions_follow_rules.global_has_no_refs"),
    "F14": (duplicate_a_commit_of_another_region, "exactly_once_output.no_duplicate_commit"),
    "F15": (forget_the_assignment, "reachable_global_state.split_assignment_consistent"),
    "F16": (decline_after_the_snapshot, "liveness.held_split_delivered"),
    "F17": (refuse_a_global_checkpoint, "liveness.global_after_faults"),
    "F18": (decide_after_the_older_completed, "flip_bounds.consecutive_regional_within_bound"),
    "F19": (trigger_the_final_one_later, "decisions_follow_rules.forced_exactly_at_bound"),
}


# F14 seen through the chain bound: smoke seed 1340 as a swarm draws it. REGIONAL checkpoint 10 asked for its
# fallback while 6 was the latest; the older pending 7 completed GLOBAL before 10's decision and reset the counter,
# so 10 completes with the counter at 1 and the chain 10 -> 6 -> 5 -> 3 -> 1 (4 > 3 deep).
F14_CHAIN = ("smoke", 1340, {"faults.swarm": True})
F14_CHAIN_ID = "intl-f14-chain"


def complete_the_global_after_the_decision(store):
    """F14 through the chain: the history puts the skipped checkpoint 7's GLOBAL completion after 10's decision (the
    completion event's ``seq``), so no reset of the counter lies under 10's link to 6 before 10 was decided, and its
    chain is too deep with nothing to explain it (7 is still the last GLOBAL decision, so no tier-2 reset is F1's)."""
    def fn(events):
        decided = next(e["seq"] for e in events if e["kind"] == "checkpoint_decided" and e.get("checkpoint_id") == 10)
        return [{**e, "seq": decided + 1} if e["kind"] == "checkpoint_completed" and e.get("checkpoint_id") == 7 else e
                for e in events]
    H.edit_history(store, fn)


def _build(config, spark) -> list[ObjectStore]:
    """Each finding's run, its schedule under the other semantics, and one edited copy of the finding's run; F13
    with its source's graft left; F14 through the chain bound, and an edited copy."""
    stores = []
    for finding in FINDING_SCENARIOS:
        base = _emulate(config, finding)
        stores += [base, _emulate(config, finding, other=True)]
        copy = H.copy_run(base, f"{_run_id(finding)}-tampered")
        TAMPERED[finding][0](copy)
        stores.append(copy)
    name = FINDING_SCENARIOS["F13"][0]
    store = ObjectStore.for_run(config, F13_SOURCE_GRAFTED_ID)
    scenario = load(name, F13_SOURCE_GRAFTED)
    runner.start(store, scenario, run_id=F13_SOURCE_GRAFTED_ID, mutant=None,
                 replay=runner.replay_line(name, scenario.seed, F13_SOURCE_GRAFTED, None))
    name, seed, overrides = F14_CHAIN
    chain = ObjectStore.for_run(config, F14_CHAIN_ID)
    scenario = load(name, seed=seed, overrides=overrides)
    runner.start(chain, scenario, run_id=F14_CHAIN_ID, mutant=None,
                 replay=runner.replay_line(name, seed, overrides, None))
    copy = H.copy_run(chain, f"{F14_CHAIN_ID}-tampered")
    complete_the_global_after_the_decision(copy)
    return [*stores, store, chain, copy]


pooled(__name__, _build)


@pytest.fixture(scope="module")
def judged(judge_pool) -> dict[str, Judgement]:
    return judge_pool.results(__name__)


def _failed(result: Judgement) -> set[str]:
    return {c["name"] for c in result.checks if c["success"] is False}


def test_each_finding_has_its_scenario_and_a_mechanism_for_every_rule():
    by_id = {f.id: f for f in findings.FINDINGS}
    for finding, (name, invariants) in FINDING_SCENARIOS.items():
        sc = load(name)
        assert sc.expect.verdict == "invalid" and sc.expect.invariant in invariants
        assert finding in {f.id for f in findings.applicable(sc)}
        assert invariants <= findings.allowed_failures(sc)
        assert by_id[finding].unchecked == {}


@pytest.mark.parametrize("finding", sorted(FINDING_SCENARIOS))
def test_finding_fails_for_its_stated_reason(judged, finding):
    sc = _load(finding)
    result = judged[_run_id(finding)]
    assert result.verdict == "invalid"
    assert _failed(result) == FINDING_SCENARIOS[finding][1]
    shows = findings.outcome(result.checks)
    declared = set(next(f for f in findings.FINDINGS if f.id == finding).rules_for(sc))
    for rule in shows["failed_rules"]:
        assert rule in declared, (finding, rule)
        tags = shows["explained"][rule]
        assert sum(tags.values()) > 0 and all(finding in tag.split(",") for tag in tags), (rule, tags)
    assert findings.meets_expectation(sc, result.verdict, shows["failed"], shows["unknown"],
                                      failed_rules=shows["failed_rules"], explained=shows["explained"]) == (True, "")


@pytest.mark.parametrize("finding", sorted(OTHER))
def test_the_same_schedule_under_the_other_semantics(judged, finding):
    """The PR's findings do not show under the FLIP (valid, every rule at 0 rows); F14's shows under the PR too,
    explained by its mechanism."""
    result = judged[_run_id(finding, other=True)]
    assert _failed(result) == OTHER[finding][1], [(c["name"], c.get("failed_rules")) for c in result.checks
                                                  if c["success"] is not True]
    if not OTHER[finding][1]:
        assert result.verdict == "valid"
        assert all(n == 0 for c in result.checks for n in c["rules"].values())
        return
    shows = findings.outcome(result.checks)
    assert all(finding in tag.split(",") for rule in shows["failed_rules"] for tag in shows["explained"][rule])
    sc = _load(finding, other=True)
    assert findings.meets_expectation(sc, result.verdict, shows["failed"], shows["unknown"],
                                      failed_rules=shows["failed_rules"], explained=shows["explained"],
                                      must_show=False) == (True, "")


@pytest.mark.parametrize("finding", sorted(TAMPERED))
def test_a_violation_outside_the_mechanism_is_not_excused(judged, finding):
    _, rule = TAMPERED[finding]
    sc = _load(finding)
    assert rule in findings.allowed_rules(sc)
    result = judged[f"{_run_id(finding)}-tampered"]
    shows = findings.outcome(result.checks)
    assert rule in shows["failed_rules"], shows["failed_rules"]
    untagged = sum(n for tag, n in shows["explained"][rule].items() if finding not in tag.split(","))
    assert untagged > 0, shows["explained"][rule]
    why = findings.unexplained(sc, rule, shows["explained"])
    assert why and "does not explain" in why
    assert findings.meets_expectation(sc, result.verdict, shows["failed"], shows["unknown"],
                                      failed_rules=shows["failed_rules"], explained=shows["explained"])[0] is False


def test_f13_with_the_source_graft_left_the_counter_runs_ahead_of_its_source(judged):
    """The process task is the silent one: its late ack completes checkpoint 2 GLOBAL with source 1's entry still
    checkpoint 1's, so within checkpoint 2 the counter has consumed records the source had not emitted
    (``source_ahead_of_counter``), explained by F13's mechanism on the metadata and the task record."""
    result = judged[F13_SOURCE_GRAFTED_ID]
    shows = findings.outcome(result.checks)
    rule = "state_consistency.source_ahead_of_counter"
    assert rule in shows["failed_rules"] and set(shows["explained"][rule]) == {"F13"}, shows["explained"]
    sc = load(FINDING_SCENARIOS["F13"][0], F13_SOURCE_GRAFTED)
    assert findings.meets_expectation(sc, result.verdict, shows["failed"], shows["unknown"],
                                      failed_rules=shows["failed_rules"], explained=shows["explained"]) == (True, "")


def test_f14_through_the_chain_bound_and_its_edited_copy(judged):
    """The swarm's seed 1340: flip_bounds fails only through ref_chain_depth_within_bound, its row tagged F14 (the
    counter reset by the skipped GLOBAL checkpoint 7 under 10's link to 6), and the run is as smoke expects; with
    7's GLOBAL completion after 10's decision in the history the same rule's row is untagged and the run is not as
    expected."""
    rule = "flip_bounds.ref_chain_depth_within_bound"
    name, seed, overrides = F14_CHAIN
    sc = load(name, seed=seed, overrides=overrides)
    result = judged[F14_CHAIN_ID]
    shows = findings.outcome(result.checks)
    assert result.verdict == "invalid" and shows["failed_rules"] == [rule], shows["failed_rules"]
    assert shows["explained"][rule] == {"F14": 1}, shows["explained"][rule]
    assert findings.meets_expectation(sc, result.verdict, shows["failed"], shows["unknown"],
                                      failed_rules=shows["failed_rules"], explained=shows["explained"])[0] is True
    edited = findings.outcome(judged[f"{F14_CHAIN_ID}-tampered"].checks)
    assert rule in edited["failed_rules"] and edited["explained"][rule].get("", 0) > 0, edited["explained"].get(rule)
    assert findings.meets_expectation(sc, judged[f"{F14_CHAIN_ID}-tampered"].verdict, edited["failed"],
                                      edited["unknown"], failed_rules=edited["failed_rules"],
                                      explained=edited["explained"])[0] is False
