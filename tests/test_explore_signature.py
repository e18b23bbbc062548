"""The explorer's state signature against enumeration without it, and its model against the emulator.

In:  small scenarios (parallelism 2 or 3, a few checkpoint attempts) explored by `regionchaos.explore.search` and
     enumerated naively here (every action at every attempt, concrete states told apart by their whole contents);
     the representatives' schedules emulated by `regionchaos.runner.emulate_in_memory`.
Out: pass/fail: the naive enumeration reaches exactly the signatures the search reaches, and every concrete state
     of a signature has the same successors (per action, with the same flip_bounds observations); the audit finds
     no two runs of one state whose futures differ; leaving out any field of the signature makes the search
     merge runs whose futures differ (each field with the smallest configuration that shows it); the model
     takes the emulator's decisions and restores on every representative; the explorer's own predicates find
     F1's schedule and prove keep-forcing's bound at a fixpoint; refused settings exit 2 naming the field; every
     recorded finding and public mutant has an exploration the explorer accepts, or the reason it is outside.
     Bounded sources (`BOUNDED`: 2 splits of 10 or 15 records, 5 per interval) are held to the same checks: their
     positions, finished tasks and restore points are fields of the signature, and a bounded job's final
     checkpoint is explored (the ``regional-final-checkpoint`` mutant completes it REGIONAL, the protocol aborts it).
No Spark: the GX-judged exploration is `tests/test_explore.py`.
"""

from __future__ import annotations

import pytest

from regionchaos.cli import main
from regionchaos.explore.cases import FINDING_CASES, MUTANT_CASES, SHORTEST
from regionchaos.explore.judging import conformance, representatives
from regionchaos.explore.model import Model
from regionchaos.explore.scope import Choices, refuse
from regionchaos.findings import FINDINGS
from regionchaos.explore.search import PREDICATES, observed, search
from regionchaos.explore.signature import FIELDS, signature
from regionchaos.runner import emulate_in_memory
from regionchaos.scenario import MUTANTS, ScenarioError, ScheduledFault, load

TIER2 = "forced-global-tier2"  # max-consecutive-failures 2, max-failure-ratio 0.5, reset-counter, tolerable 0
# bounded sources at parallelism 2: 2 splits, 5 records each per interval (15 records: the input ends at attempt 2, and
# a region two intervals behind after a failover lets the other's source finish first)
BOUNDED = {"topology.parallelism": 2, "workload.bounded": True, "workload.splits": 2,
           "workload.records_per_interval": [5, 5], "workload.records_per_split": 15}
INSIDE = {"faults.subtask_crash": 0.1, "faults.jobmanager_failover": 0.1, "faults.crash_before_metadata": 0.1,
          "faults.inside": 0.5}


def exact(model: Model) -> str:
    """Everything a model holds, as text: two models with the same text are the same run state (finer than
    needed: dict orders and absolute times and ids count too, which only splits states further)."""
    c = model.coord
    parts = [repr(c.counters), [cp.to_bytes() for cp in c.store.retained], sorted(
        (t, ref, repr(sorted(states.items()))) for t, (states, ref) in c.fallback.items()),
        [(cid, repr(p)) for cid, p in sorted(c.pending.items())], repr(sorted(c.finished.items())),
        repr(sorted(vars(c.enumerator).items())), c.graph.tasks(), c.next_checkpoint_id, c.sources_exhausted,
        model.now_ms, sorted(repr(e) for e in model.queue), repr(sorted(model.attempts.items())),
        repr(sorted(model.faults.items())), model.times, model.waiting, model.deferred, model.last_end_ms,
        sorted(model.rescales.items()), model.awaiting_fallback, sorted(model.crashed_in),
        sorted(model.storage), sorted(model.depth.items()), model.streak, model.index, model.life, model.parallelism]
    flow = model.flow  # a bounded job's data flow: every position, owner, snapshot and commit
    if flow is not None:
        parts += [sorted((split, repr(sp)) for split, sp in flow.splits.items()), sorted(flow.owned.items()),
                  sorted(flow.snapshots.items()), sorted(flow.committed), sorted(model.reported.items()), model.done]
    return repr(parts)


def naive(scenario, n: int):
    """Every schedule of up to ``n`` attempts with every action of the schedule language, concrete states merged
    only when `exact` says they are the same: (signature -> successor sets of its concrete states, signatures)."""
    choices = Choices(scenario)
    cap = scenario.flink.max_consecutive_failures + 1
    level = {exact(m): m for m in [Model(scenario)]}
    successors: dict[tuple, list[frozenset]] = {}
    reached = {signature(m) for m in level.values()}
    for depth in range(n):
        nxt = {}
        for model in level.values():
            if model.done:  # a finished job has no next attempt
                successors.setdefault(signature(model), []).append(frozenset())
                continue
            out = set()
            for action in choices.actions(model.coord.graph, model.coord.regions, full=True,
                                          finished=frozenset(model.coord.finished)):
                succ = model.clone()
                step = succ.step(action.faults)
                if succ.awaiting_fallback:  # the search's rule: a fallback fault lands in its own attempt
                    continue
                out.add((action.entries, signature(succ), observed(step, cap)))
                nxt.setdefault(exact(succ), succ)
            successors.setdefault(signature(model), []).append(frozenset(out))
        level = nxt
        reached |= {signature(m) for m in level.values()}
    return successors, reached


@pytest.mark.parametrize("overrides, n", [
    ({"topology.parallelism": 2, "faults.timeout": 0.1}, 4),  # ack, decline, silent: tier 2 resets within 4
    # a failure at every instant (region failover; JobManager failover and a crash before the metadata commit)
    ({"topology.parallelism": 2, "faults.subtask_crash": 0.1, "faults.inside": 0.5}, 2),
    ({"topology.parallelism": 2, "faults.jobmanager_failover": 0.1, "faults.crash_before_metadata": 0.1,
      "faults.inside": 0.5}, 2),
    # bounded: region failovers rewind a region (a source finishes first, a failover restarts it), the final checkpoint
    ({**BOUNDED, "faults.subtask_crash": 0.1}, 3),
    pytest.param({**BOUNDED, "workload.records_per_split": 10, "faults.jobmanager_failover": 0.1,
                  "faults.crash_before_metadata": 0.1, "faults.inside": 0.5}, 3, marks=pytest.mark.slow),  # 9 s
], ids=["responses", "region-failover-inside", "jobmanager-inside", "bounded-region-failover",
        "bounded-jobmanager-inside"])
def test_naive_enumeration_reaches_the_same_signatures_and_each_has_one_future(overrides, n):
    scenario = load(TIER2, overrides=overrides)
    successors, reached = naive(scenario, n)
    graph = search(scenario, None, n, kinds=0)
    assert {node.sig for node in graph.nodes} == reached  # the same states, with the reduced actions (bounded: all)
    assert graph.full == scenario.workload.bounded
    split = {sig: len(set(futures)) for sig, futures in successors.items() if len(set(futures)) > 1}
    assert not split, f"signatures whose concrete states have different successors: {split}"
    assert max(len(futures) for futures in successors.values()) > 1  # the check compared something


AUDITED = {
    "tier 2, region failures inside": ({"topology.parallelism": 2, "faults.timeout": 0.1, "faults.subtask_crash": 0.1,
                                       "faults.inside": 0.5}, 3),
    "pr, JobManager failures inside": ({"topology.parallelism": 2, "execution.checkpointing.region.semantics": "pr",
                                       "faults.jobmanager_failover": 0.1, "faults.crash_before_metadata": 0.1,
                                       "faults.inside": 0.5}, 3),
    "tolerable 1, bound 1": ({"topology.parallelism": 2, "execution.checkpointing.tolerable-failed-checkpoints": 1,
                              "execution.checkpointing.region.max-consecutive-failures": 1,
                              "faults.jobmanager_failover": 0.1}, 6),
    "upscale under pr": ({"topology.parallelism": 2, "rescale": [{"after_checkpoint": 1, "parallelism": 3}],
                          "execution.checkpointing.region.semantics": "pr", "faults.jobmanager_failover": 0.1}, 3),
    "two concurrent": ({"topology.parallelism": 2, "execution.checkpointing.max-concurrent-checkpoints": 2,
                        "faults.timeout": 0.1}, 2),
    "bounded, TaskManager losses, an upscale": ({**BOUNDED, "faults.taskmanager_loss": 0.1,
                                                "execution.checkpointing.tolerable-failed-checkpoints": None,
                                                "rescale": [{"after_checkpoint": 1, "parallelism": 3}]}, 3),
    "bounded, region failures": ({**BOUNDED, "faults.subtask_crash": 0.1}, 4),
}
SLOW_AUDITS = {"bounded, region failures"}  # 8 s


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_AUDITS else n
                                  for n in sorted(AUDITED)])
def test_the_audit_finds_no_two_runs_of_one_state_with_different_futures(name):
    overrides, n = AUDITED[name]
    graph = search(load(TIER2, overrides=overrides), None, n, audit=n - 1, kinds=0)
    assert not graph.mismatches, graph.mismatches[:3]
    assert len(graph.nodes) > 3


# field -> (overrides, mutant, attempts): the smallest configuration found in which leaving the field out merges
# runs whose futures differ (tier 2's counter, the depth under a fallback to an aborted checkpoint, ...)
WITNESSES = {
    "counter": ({"topology.parallelism": 2, "execution.checkpointing.region.max-consecutive-failures": 1}, None, 4),
    "latest_depth": ({"topology.parallelism": 2}, "fallback-to-aborted", 6),
    "streak": ({"topology.parallelism": 2}, "fallback-to-aborted", 6),
    "fallback": ({"topology.parallelism": 2, "rescale": [{"after_checkpoint": 1, "parallelism": 3}],
                  "execution.checkpointing.region.semantics": "pr"}, None, 4),  # F11: no entry after an upscale
    "failures": ({"topology.parallelism": 2, "execution.checkpointing.region.max-consecutive-failures": 1,
                  "execution.checkpointing.tolerable-failed-checkpoints": 1}, "fallback-to-aborted", 5),
    "rescales": ({"topology.parallelism": 2, "rescale": [{"after_checkpoint": 2, "parallelism": 3}]}, None, 4),
    "inflight": ({"topology.parallelism": 2, "execution.checkpointing.max-concurrent-checkpoints": 2,
                  "faults.timeout": 0.1}, None, 3),
    # bounded. input: G | R against G | R | final ABORTED, the job restored from R with region 1 behind (the same
    # checkpoints; the next checkpoint is final for the first only); finished: a finished source against one a region
    # failover restarted; restore: G | R with region 0 or with region 1 on the older entry
    "input": (BOUNDED, None, 4),
    "finished": ({**BOUNDED, "faults.subtask_crash": 0.1}, None, 4),
    "restore": (BOUNDED, None, 3),
}
SLOW_WITNESSES = {"finished"}  # 10 s: the audit of 4 attempts with region failovers


def _first_depths(graph, leave_out: str) -> dict:
    i = FIELDS.index(leave_out)
    out: dict = {}
    for sig, depth in graph.reached.items():
        key = sig[:i] + sig[i + 1:]
        out[key] = min(out.get(key, depth), depth)
    return out


@pytest.mark.parametrize("field", [pytest.param(f, marks=pytest.mark.slow) if f in SLOW_WITNESSES else f
                                   for f in FIELDS])
def test_leaving_out_any_field_merges_runs_whose_futures_differ(field):
    """With ``field`` left out, the search either merges two runs whose successors differ (the audit) or reaches
    other states (on the remaining fields) or other violations than with the whole signature."""
    overrides, mutant, n = WITNESSES[field]
    scenario = load(TIER2, overrides=overrides)
    whole = search(scenario, mutant, n, kinds=0, audit=n - 1)
    assert not whole.mismatches  # the whole signature holds here
    cut = search(scenario, mutant, n, kinds=0, audit=n - 1, without=frozenset({field}))
    violations = lambda g: {r: len(g.path(t.parent)) for r, t in g.violations.items()}  # noqa: E731
    assert (cut.mismatches or _first_depths(cut, field) != _first_depths(whole, field)
            or violations(cut) != violations(whole)), f"leaving out {field} changed nothing within {n} attempts"


@pytest.mark.slow
def test_the_model_decides_as_the_emulator_on_every_representative():
    """Conformance: each representative's emulation takes the decisions and restores the model predicted, under
    both semantics, with failures inside checkpoints, a rescale, two concurrent checkpoints and the two mutants
    the model switches itself, and a bounded job's end of input, finished sources and end, with and without the
    mutant of the final checkpoint (the first 30 kinds of step each: every judged one is checked again when
    judged)."""
    cases = [({"topology.parallelism": 3, "faults.timeout": 0.1, **INSIDE}, None, 3),
             ({"topology.parallelism": 2, "execution.checkpointing.region.semantics": "pr", "faults.timeout": 0.1,
               **INSIDE}, None, 3),
             ({"topology.parallelism": 2, "rescale": [{"after_checkpoint": 1, "parallelism": 3}],
               "faults.jobmanager_failover": 0.1}, None, 3),
             ({"topology.parallelism": 2, "execution.checkpointing.max-concurrent-checkpoints": 2,
               "faults.timeout": 0.1}, None, 2),
             ({"topology.parallelism": 2, **INSIDE}, "failover-keeps-pending", 2),
             ({"topology.parallelism": 2, **INSIDE}, "metadata-before-state", 2),
             ({**BOUNDED, "faults.timeout": 0.1, "faults.subtask_crash": 0.1}, None, 4),
             ({**BOUNDED, **INSIDE, "execution.checkpointing.tolerable-failed-checkpoints": None}, None, 2),
             ({**BOUNDED, "faults.subtask_crash": 0.1}, "regional-final-checkpoint", 3)]
    checked = 0
    for overrides, mutant, n in cases:
        scenario = load(TIER2, overrides=overrides)
        for rep in representatives(search(scenario, mutant, n, kinds=30), scenario):
            result, _ = emulate_in_memory(rep.scenario, mutant, rows=False)
            assert conformance(rep.predicted, result.events) is None, (overrides, mutant, rep.describe())
            checked += 1
    assert checked > 100


def test_the_predicates_find_f1_and_keep_forcing_closes_without_breaking_them():
    """F1: G | R | R | forced ABORTED | R is the shortest schedule over flip_bounds' two claims; with keep-forcing
    the abstraction reaches a fixpoint with no transition breaking them."""
    tier2 = search(load(TIER2, overrides={"topology.parallelism": 3, "faults.timeout": 0.1}), None, 12, kinds=0)
    assert set(tier2.violations) == set(PREDICATES)
    for t in tier2.violations.values():
        path = [*tier2.path(t.parent), t.action]
        decided = [e[2] for e in [*tier2.log(t.parent), *t.step.log] if e[0] == "decided"]
        assert len(path) == 5 and decided == ["GLOBAL", "REGIONAL", "REGIONAL", "ABORTED", "REGIONAL"]
        assert t.step.completions[-1] == (3, 3)  # streak 3 and chain 5 -> 3 -> 2 -> 1, over the bound 2
    assert tier2.fixpoint is not None
    keep = search(load(TIER2, overrides={"topology.parallelism": 4, "faults.timeout": 0.1, **INSIDE,
                                         "execution.checkpointing.region.forced-global-failure": "keep-forcing"}),
                  None, 12, kinds=0)
    assert keep.fixpoint is not None and not keep.violations


@pytest.mark.parametrize("args, fields", [
    (["--scenario", "bounded-final"], ["workload.records_per_interval"]),  # bounded: a drawn number of records
    (["--scenario", "bounded-final", "--set", "workload.records_per_interval=[5, 5]", "--set",
      "execution.checkpointing.region.semantics=pr", "--set", "execution.checkpointing.unaligned.enabled=true",
      "--set", "workload.discovered_splits=1", "--set", "execution.checkpointing.max-concurrent-checkpoints=2"],
     ["execution.checkpointing.region.semantics", "execution.checkpointing.unaligned.enabled",
      "workload.discovered_splits", "execution.checkpointing.max-concurrent-checkpoints"]),
    (["--scenario", "smoke", "--set", "execution.checkpointing.region.timeout=1000"],
     ["execution.checkpointing.region.timeout"]),
    (["--scenario", "smoke", "--max-checkpoints", "13", "--set", "topology.parallelism=5", "--set",
      "faults.ack_loss=0.1"], ["--max-checkpoints", "topology.parallelism", "faults.ack_loss"]),
    (["--scenario", "smoke", "--set", "timing.fallback_ms=[0, 5]"], ["timing.fallback_ms"]),
    (["--scenario", "smoke", "--set", "faults.store_failure=0.1"], ["faults.store_failure"]),
    (["--scenario", "smoke", "--set", "execution.checkpointing.region.enabled=false", "--set", "faults.inside=0.5"],
     ["faults.inside"]),
])
def test_what_the_signature_does_not_cover_is_refused_naming_it(args, fields, capsys):
    assert main(["explore", *args]) == 2
    captured = capsys.readouterr()
    for name in fields:
        assert name in captured.out + captured.err, captured


def test_every_finding_and_mutant_has_an_exploration_the_explorer_accepts_or_a_reason():
    """`regionchaos.explore.cases`: each recorded finding is explored on a configuration the explorer accepts or
    named outside the explored actions with the reason; each public mutant has a configuration the explorer
    accepts, the mutant of bounded jobs' final checkpoint included."""
    assert set(FINDING_CASES) == {f.id for f in FINDINGS}
    assert set(MUTANT_CASES) == set(MUTANTS)
    refused = []
    for name, case in [*FINDING_CASES.items(), *MUTANT_CASES.items()]:
        if isinstance(case, str):
            assert len(case.split()) >= 8, name  # a reason, not a placeholder
            continue
        try:
            refuse(load(case.scenario, overrides=case.overrides), case.max_checkpoints)
        except ScenarioError as exc:
            refused.append((name, str(exc)))
    assert refused == []
    assert set(SHORTEST) <= {f for f, case in FINDING_CASES.items() if not isinstance(case, str)}


def test_a_bounded_jobs_final_checkpoint_is_explored_and_the_mutant_completes_it_regional():
    """`MUTANT_CASES["regional-final-checkpoint"]`: attempt 1 is the final checkpoint (the input ends, a checkpoint
    completed before it). With a region declining there the protocol aborts it and the job finishes on the next,
    GLOBAL; the mutant completes it REGIONAL and the job finishes on it: a state the search reaches within the
    case's N = 2, where every state the protocol's search ends in finished on a GLOBAL checkpoint."""
    case = MUTANT_CASES["regional-final-checkpoint"]
    scenario = load(case.scenario, overrides=case.overrides)
    refuse(scenario, case.max_checkpoints)

    def run(mutant, declining: list[list[int]]) -> list[tuple]:
        model, log = Model(scenario, mutant), []
        for i, subtasks in enumerate(declining):
            log += model.step([ScheduledFault(checkpoint=i, kind="decline", vertex="source", subtask=s)
                               for s in subtasks]).log
        assert model.done
        return [("decided", *e[2:4]) if e[0] == "decided" else e for e in log
                if e[0] in ("decided", "job_finished", "sources_exhausted")]

    assert run("regional-final-checkpoint", [[], [1]]) == [
        ("decided", "GLOBAL", None), ("sources_exhausted", True), ("decided", "REGIONAL", None), ("job_finished", 2)]
    assert run(None, [[], [1], []]) == [
        ("decided", "GLOBAL", None), ("sources_exhausted", True),
        ("decided", "ABORTED", "final-checkpoint-must-be-global"), ("decided", "GLOBAL", None), ("job_finished", 3)]

    def ends(mutant) -> set[str]:
        graph = search(scenario, mutant, case.max_checkpoints, kinds=0)
        return {[e for e in graph.log(node) if e[0] == "decided"][-1][2] for node in graph.ended}

    assert ends("regional-final-checkpoint") == {"GLOBAL", "REGIONAL"}
    assert ends(None) == {"GLOBAL"}
