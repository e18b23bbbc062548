"""An exploration's summary: what it searched, what the suites said, and what that proves.

In:  the explored scenario (its reference, ``--set`` overrides, mutant), the search's `Graph` and the one judging
     pass's `Judged`.
Out: `summarize(...) -> dict` (what ``--json`` prints): ``states``, ``schedules``, ``verdicts`` (invariant ->
     valid / invalid / unknown), ``representative_verdicts`` (how many representatives judged each way),
     ``counterexamples`` (invariant -> the shortest failing representative: ``checkpoints``, ``replay``,
     ``schedule``, ``findings``), ``findings`` (finding id -> the shortest representative that shows it),
     ``proof`` (invariant -> ``every N``, ``up to N``, ``representatives``, ``counterexample`` or ``unknown``),
     ``assumptions``, ``outcome`` and ``exit_code`` (the policy's, `regionchaos.judge.policy`: the
     representatives' judgements as a swarm's seeds, with a model that drifted from the emulation or a
     contradicted predicate unknown) and the rest; `render(summary,
     console)`: the same for a reader.

What each proof value claims:
- ``every N``: an invariant the signature decides (flip_bounds: the explorer's predicates read only the signature's
  fields); the abstraction reached a fixpoint (no new state after some depth), no transition of the search broke
  the predicate, every representative was judged valid on it by the suites, and every representative's emulation
  took the decisions the model predicted. Under the assumptions listed, it holds for schedules of any length.
- ``up to N``: the same without the fixpoint: for every schedule of up to N checkpoint attempts.
- ``representatives``: an invariant the signature does not decide (state contents, storage, output): judged valid
  on every representative schedule, which is evidence, not a proof for every schedule.
- ``counterexample``: the suites failed it on a representative (``counterexamples`` has the shortest).
- ``unknown``: a representative could not be judged on it, or the model and the emulation disagreed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.markup import escape

from .. import runner
from ..judge import Judgement, RunOutcome, swarm_outcome
from ..judge.judgement import FINDING_GONE, VIOLATION
from ..judge.policy import infrastructure, worst_of
from ..run import Verdict
from ..scenario import INVARIANTS, Scenario
from .judging import KINDS, Judged, Representative, declared
from .scope import FAULTS_PER_ATTEMPT, Choices
from .search import PREDICATES, Graph
from .signature import FIELDS

DECIDED = {rule.split(".", 1)[0] for rule in PREDICATES}  # invariants whose verdict the signature decides


def summarize(scenario_ref: str, overrides: dict, scenario: Scenario, mutant: str | None, max_checkpoints: int,
              graph: Graph, judged: Judged) -> dict[str, Any]:
    results, reps = judged.results, judged.reps
    verdicts, counterexamples, proof = {}, {}, {}
    broken = {rule.split(".", 1)[0] for rule in graph.violations}
    for inv in INVARIANTS:
        failing = [r for r in reps if inv in results[r.run_id].failed]
        verdicts[inv] = Verdict.merge(_verdict(results[r.run_id], inv) for r in reps)
        if failing:
            best = min(failing, key=lambda r: (r.checkpoints, len(r.schedule), KINDS.index(r.kind)))
            counterexamples[inv] = _counterexample(scenario_ref, overrides, mutant, best, results[best.run_id], inv)
            proof[inv] = "counterexample"
        elif verdicts[inv] != Verdict.VALID or (inv in DECIDED and (judged.drift or inv in broken)):
            proof[inv] = "unknown"
        elif inv in DECIDED:
            proof[inv] = "every N" if graph.fixpoint is not None else "up to N"
        else:
            proof[inv] = "representatives"
    contradictions = [f"the model's predicate {rule} broke ({_transition(graph, t)}) but the suites passed "
                      f"{rule.split('.', 1)[0]} on every representative" for rule, t in graph.violations.items()
                      if verdicts[rule.split(".", 1)[0]] == Verdict.VALID]
    unknown = [inv for inv, v in verdicts.items() if v == Verdict.UNKNOWN]
    outcome = exploration_outcome(scenario_ref, overrides, mutant, judged, contradictions)
    counts = {k: sum(r.kind == k for r in reps) for k in KINDS}
    return {
        "scenario": scenario_ref, "overrides": overrides, "mutant": mutant, "seed": scenario.seed,
        "max_checkpoints": max_checkpoints, "parallelism": scenario.topology.parallelism,
        "states": len(graph.nodes), "schedules": int(round(graph.schedules())), "transitions": graph.transitions,
        "discarded": graph.discarded, "fixpoint": graph.fixpoint, "actions": "full" if graph.full else "reduced",
        "representatives": {**counts, "judged": len(reps)},
        "representative_verdicts": {v.value: sum(results[r.run_id].verdict == v for r in reps) for v in Verdict},
        "verdicts": verdicts, "counterexamples": counterexamples, "proof": proof,
        "proof_statement": statement(scenario, graph, verdicts, proof, max_checkpoints),
        "assumptions": assumptions(scenario, graph),
        "predicates": {rule: {"broken": rule in graph.violations,
                              **({"checkpoints": len(graph.path(t.parent)) + 1, "schedule": _transition(graph, t)}
                                 if rule in graph.violations else {})}
                       for rule, t in [(r, graph.violations.get(r)) for r in PREDICATES]},
        "conformance": {"checked": len(reps), "drift": judged.drift},
        "findings": shown_findings(scenario_ref, overrides, mutant, judged),
        "contradictions": contradictions,
        "unexplained": sorted(r.run_id for r in reps if results[r.run_id].standing in (VIOLATION, FINDING_GONE)),
        "unknown": unknown, "interleavings": judged.interleavings,
        "walls": {"search": graph.wall_seconds, "emulate": judged.emulate_seconds, "judge": judged.judge_seconds},
        "outcome": outcome.as_dict(), "exit_code": outcome.exit_code,
    }


def _verdict(judgement: Judgement, inv: str) -> str:
    """One run's verdict on one invariant, as its judgement says."""
    if inv in judgement.failed:
        return Verdict.INVALID.value
    return Verdict.UNKNOWN.value if inv in judgement.unknown or judgement.error else Verdict.VALID.value


def exploration_outcome(scenario_ref: str, overrides: dict, mutant: str | None, judged: Judged,
                        contradictions: list[str]) -> RunOutcome:
    """The exploration's outcome, from the policy as a swarm's: its representatives are its seeds
    (`regionchaos.judge.policy.swarm_outcome`: the worst of theirs; with a mutant, caught if any caught it); a
    model that drifted from the emulation, or a predicate the suites contradicted, is unknown beside it."""
    records = [{**judged.results[r.run_id].fields(), "seed": r.scenario.seed, "run_id": r.run_id,
                "replay": replay(scenario_ref, overrides, mutant, r)}
               for r in judged.reps]
    swarm = swarm_outcome(records, mutant=mutant, seeds=len(records))
    outcomes = [replace(swarm, sentence=swarm.sentence.replace(f"swarm of {len(records)} seed(s)",
                                                               f"{len(records)} representative schedules", 1))]
    if judged.drift:
        outcomes.append(infrastructure(f"{len(judged.drift)} representatives' emulations decided otherwise than "
                                       f"the model: {judged.drift[0]}"))
    outcomes += [infrastructure(line) for line in contradictions]
    return worst_of(outcomes)


def _transition(graph: Graph, t) -> str:
    actions = [*graph.path(t.parent), t.action]
    return " | ".join(f"{i}: {a.describe()}" for i, a in enumerate(actions))


def replay(scenario_ref: str, overrides: dict, mutant: str | None, rep: Representative) -> str:
    """The command that runs ``rep`` again: the explored scenario with its pinned schedule."""
    return runner.replay_line(scenario_ref, rep.scenario.seed, {**overrides, **rep.overrides}, mutant)


def _counterexample(scenario_ref: str, overrides: dict, mutant: str | None, rep: Representative,
                    result: Judgement, inv: str) -> dict:
    findings = declared(result, inv)
    return {"checkpoints": rep.checkpoints, "kind": rep.kind,
            "replay": replay(scenario_ref, overrides, mutant, rep),
            "schedule": rep.schedule, "describe": rep.describe(),
            "rules": [r for r in result.failed_rules if r.startswith(inv + ".")], "standing": result.standing,
            "findings": findings or [], "declared": findings is not None, "run_id": rep.run_id}


def shown_findings(scenario_ref: str, overrides: dict, mutant: str | None, judged: Judged) -> dict[str, dict]:
    """Per recorded finding that a representative's judgement shows (`Judgement.findings_shown`), the shortest such
    representative: ``checkpoints``, ``describe``, ``replay``, ``rules``."""
    out: dict[str, dict] = {}
    order = sorted(judged.reps, key=lambda r: (r.checkpoints, len(r.schedule), KINDS.index(r.kind)))
    for rep in order:
        for finding in judged.results[rep.run_id].findings_shown:
            out.setdefault(finding["id"], {
                "checkpoints": rep.checkpoints, "describe": rep.describe(), "rules": finding["rules"],
                "replay": replay(scenario_ref, overrides, mutant, rep)})
    return out


def assumptions(scenario: Scenario, graph: Graph) -> list[str]:
    f, t = scenario.flink, scenario.topology
    choices = Choices(scenario)
    kinds = ", ".join(choices.failures + (("crash_before_metadata",) if choices.crash_before_metadata else ()))
    where = ("between checkpoints and inside the pending checkpoint (after any number of its responses, at its "
             "region fallback, while its metadata is written)" if choices.inside else "between checkpoints")
    out = [
        f"seed {scenario.seed}: the tasks' upload times (the order responses arrive in) and the records as it draws them",
        f"parallelism {t.parallelism} ({', '.join(f'{e.parallelism} after attempt {e.after_checkpoint}' for e in scenario.rescale) or 'no rescale'}), "
        f"{t.taskmanagers} TaskManagers, {t.partitioning.value} {t.exchange.value} edges",
        f"per attempt each region's source subtask {' / '.join(choices.responses)} (the region's other tasks ack"
        + ("; once the source finished, the region's first running task" if scenario.workload.bounded else "") + ")"
        + (f", and at most {FAULTS_PER_ATTEMPT} of: {kinds}, {where}" if kinds else ""),
        "a fault placed at a region fallback lands in its own attempt",
        *([f"bounded sources: {scenario.workload.splits} splits of {scenario.workload.records_per_split} records, "
           f"{scenario.workload.records_per_interval[0]} read per split and interval; a run ends when the job "
           f"finishes"] if scenario.workload.bounded else []),
        f"semantics {f.semantics}, tier 2 {f.forced_global_policy}, max-consecutive-failures {f.max_consecutive_failures}, "
        f"max-failure-ratio {f.max_failure_ratio}, tolerable-failed-checkpoints {f.tolerable_failed_checkpoints}, "
        f"max-concurrent-checkpoints {f.max_concurrent}, zero control-plane delays",
        f"the state signature ({', '.join(FIELDS)}) is sound for these actions (regionchaos/explore/signature.py)"
        + ("" if graph.full else "; the actions it tried stand for every action of the schedule language "
                                 "(regionchaos/explore/scope.py, Choices._reduced)"),
    ]
    return out


def statement(scenario: Scenario, graph: Graph, verdicts: dict, proof: dict, n: int) -> str:
    parts = []
    for inv in sorted(DECIDED):
        p = proof[inv]
        if p == "every N":
            parts.append(f"{inv} holds for every N: the capped abstraction reached a fixpoint after {graph.fixpoint} "
                         f"checkpoints ({len(graph.nodes)} states), under the assumptions listed")
        elif p == "up to N":
            parts.append(f"{inv} holds up to N = {n} checkpoints (no fixpoint within {n}), under the assumptions listed")
        elif p == "counterexample":
            parts.append(f"{inv} fails (counterexample below)")
        else:
            parts.append(f"{inv}: unknown")
    rest = [inv for inv in INVARIANTS if proof[inv] == "representatives"]
    if rest:
        parts.append(f"{len(rest)} more invariants held on every representative (evidence, not a proof for every "
                     f"schedule: their verdict reads more than the signature holds)")
    return "; ".join(parts)


def render(summary: dict, console) -> None:
    s = summary
    say = lambda text: console.print(text, highlight=False, soft_wrap=True)  # noqa: E731
    fix = f"fixpoint after {s['fixpoint']} checkpoints" if s["fixpoint"] is not None else f"no fixpoint within {s['max_checkpoints']}"
    say(f"explore {escape(s['scenario'])} (seed {s['seed']}, parallelism {s['parallelism']}, up to "
        f"{s['max_checkpoints']} checkpoints{', mutant ' + escape(s['mutant']) if s['mutant'] else ''}): "
        f"{s['states']} distinct states stand for {s['schedules']:.3g} schedules ({s['transitions']:,} transitions, "
        f"{s['actions']} actions, {s['walls']['search']} s); {fix}")
    reps = s["representatives"]
    agree = ("the model and the emulation agree on every one" if not s["conformance"]["drift"]
             else f"[red]{len(s['conformance']['drift'])} disagree with the model[/red]")
    say(f"judged {reps['judged']} representatives ({reps['state']} states, {reps['violation']} predicate violations, "
        f"{reps['kind']} other kinds of step) in one GX pass (emulate {s['walls']['emulate']} s, judge {s['walls']['judge']} s); {agree}")
    for line in s["conformance"]["drift"][:5]:
        say(f"  [red]drift[/red] {escape(line)}")
    for inv in INVARIANTS:
        verdict, p = s["verdicts"][inv], s["proof"][inv]
        colour = {"valid": "green", "invalid": "red", "unknown": "yellow"}[verdict]
        cx = s["counterexamples"].get(inv)
        note = ""
        if cx:
            note = f" {cx['checkpoints']} checkpoints" + (f" ({', '.join(cx['findings'])})" if cx["declared"] else
                                                          " [red](no finding explains it)[/red]")
        say(f"  {inv:24} [{colour}]{verdict:8}[/{colour}] {p}{note}")
        if cx:
            say(f"      schedule: {escape(cx['describe'])}")
            say(f"      replay: {escape(cx['replay'])}")
    say(f"proof: {escape(s['proof_statement'])}")
    say(f"outcome: {escape(s['outcome']['sentence'])}")
    say("assumptions: " + "; ".join(escape(a) for a in s["assumptions"]))
    for line in s["contradictions"]:
        say(f"[yellow]{escape(line)}[/yellow]")
    reached = [k for k, n in sorted(s["interleavings"].items()) if n]
    if reached:
        say(f"interleavings the judged runs went through: {', '.join(reached)}")
    if s.get("report"):
        say(f"report: {escape(s.get('local_report') or s['report'])}")
