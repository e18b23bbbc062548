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
from regionchaos.scenario import MUTANTS, ScenarioError, load

TIER2 = "forced-global-tier2"  # max-consecutive-failures 2, max-failure-ratio 0.5, reset-counter, tolerable 0
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
            out = set()
            for action in choices.actions(model.coord.graph, model.coord.regions, full=True):
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
], ids=["responses", "region-failover-inside", "jobmanager-inside"])
def test_naive_enumeration_reaches_the_same_signatures_and_each_has_one_future(overrides, n):
    scenario = load(TIER2, overrides=overrides)
    successors, reached = naive(scenario, n)
    graph = search(scenario, None, n, kinds=0)
    assert {node.sig for node in graph.nodes} == reached  # the same states, with the reduced actions
    assert not graph.full
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
}


@pytest.mark.parametrize("name", sorted(AUDITED))
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
}


def _first_depths(graph, leave_out: str) -> dict:
    i = FIELDS.index(leave_out)
    out: dict = {}
    for sig, depth in graph.reached.items():
        key = sig[:i] + sig[i + 1:]
        out[key] = min(out.get(key, depth), depth)
    return out


@pytest.mark.parametrize("field", FIELDS)
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
    the model switches itself (the first 30 kinds of step each: every judged one is checked again when judged)."""
    cases = [({"topology.parallelism": 3, "faults.timeout": 0.1, **INSIDE}, None, 3),
             ({"topology.parallelism": 2, "execution.checkpointing.region.semantics": "pr", "faults.timeout": 0.1,
               **INSIDE}, None, 3),
             ({"topology.parallelism": 2, "rescale": [{"after_checkpoint": 1, "parallelism": 3}],
               "faults.jobmanager_failover": 0.1}, None, 3),
             ({"topology.parallelism": 2, "execution.checkpointing.max-concurrent-checkpoints": 2,
               "faults.timeout": 0.1}, None, 2),
             ({"topology.parallelism": 2, **INSIDE}, "failover-keeps-pending", 2),
             ({"topology.parallelism": 2, **INSIDE}, "metadata-before-state", 2)]
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
    (["--scenario", "bounded-final"], ["workload.bounded"]),
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
    named outside the explored actions with the reason; each public mutant has a configuration, and the only one
    refused is the mutant of bounded jobs (bounded sources are outside the signature)."""
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
            refused.append((name, "workload.bounded" in str(exc)))
    assert refused == [("regional-final-checkpoint", True)]
    assert set(SHORTEST) <= {f for f, case in FINDING_CASES.items() if not isinstance(case, str)}
