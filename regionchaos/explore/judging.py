"""The one judge of an exploration: its representatives run through the real emulator, judged in one GX pass.

In:  the search's `Graph`, the scenario it explored (with the reference and ``--set`` overrides that name it on the
     command line), the mutant, and a Spark session (the judge's).
Out: `representatives(...)`: one pinned schedule per distinct state (the first path that reached it), per explorer
     predicate its first violating transition, and per kind of step from each state (`Graph.kinds`: a wrong
     decision that lands in a state reached before is judged there); `judge_many(spark, [(reps, mutant), ...])
     -> [Judged]`: the representatives of one or more explorations, each emulated in memory
     (`regionchaos.runner.emulate_in_memory`, the swarm's fast path), the decisions and restores its history shows
     compared with the ones the model predicted (`conformance`), and all of them judged by ONE pass of the GX
     suites (`regionchaos.judge.runs.judge_rows`, the shrinker's way in): a `Judgement` each.

A representative is a scenario file as `regionchaos pin` writes one: the explored scenario with ``checkpoints`` =
the path's attempts and ``faults.schedule`` = its choices (each attempt's responses and fault as explicit
entries), so its replay line runs it again (`replay`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from .. import runner
from .. import tables as tables_mod
from ..history import Kind
from ..judge import Judgement, crashed
from ..judge.runs import judge_rows
from ..scenario import Scenario, from_dict
from .scope import Action
from .search import Graph, Transition

KINDS = ("state", "violation", "kind")  # why a schedule was judged, in the order a counterexample prefers


@dataclass
class Representative:
    kind: str
    node: int  # the state it reaches
    actions: list[Action]
    predicted: list[tuple]
    scenario: Scenario
    overrides: dict[str, Any]  # what the replay line adds to the explored scenario's own
    run_id: str = ""

    @property
    def checkpoints(self) -> int:
        return len(self.actions)

    @property
    def schedule(self) -> list[dict]:
        return [e for i, a in enumerate(self.actions) for e in a.schedule(i)]

    def describe(self) -> str:
        return " | ".join(f"{i}: {a.describe()}" for i, a in enumerate(self.actions))


@dataclass
class Judged:
    reps: list[Representative]
    results: dict[str, Judgement]  # run id -> its judgement
    drift: list[str] = field(default_factory=list)  # representatives whose emulation decided otherwise than the model
    interleavings: dict[str, int] = field(default_factory=dict)  # kind -> representatives in which it happened
    emulate_seconds: float = 0.0
    judge_seconds: float = 0.0


def representatives(graph: Graph, scenario: Scenario) -> list[Representative]:
    """The schedules to judge (see the module docstring), each once."""
    out: list[Representative] = []
    seen: set[tuple] = set()

    def add(kind: str, node: int, actions: list[Action], predicted: list[tuple]) -> None:
        schedule = [e for i, a in enumerate(actions) for e in a.schedule(i)]
        key = (len(actions), repr(schedule))
        if not actions or key in seen:
            return
        seen.add(key)
        overrides = {"checkpoints": len(actions), "faults.schedule": schedule}
        data = scenario.to_dict()
        data["checkpoints"] = len(actions)
        data["faults"]["schedule"] = schedule
        ahead = [e for e in data["rescale"] if e["after_checkpoint"] >= len(actions)]
        if ahead:  # a rescale after the path's last attempt is no part of it (the fault phase must hold it)
            data["rescale"] = [e for e in data["rescale"] if e not in ahead]
            overrides["rescale"] = data["rescale"]
        pinned = from_dict(data)
        out.append(Representative(kind, node, actions, predicted, pinned, overrides,
                                  runner.default_run_id(pinned, None)))

    for node in range(1, len(graph.nodes)):
        add("state", node, graph.path(node), graph.log(node))
    transitions: list[tuple[str, Transition]] = [("violation", t) for t in graph.violations.values()]
    transitions += [("kind", t) for t in graph.kinds]
    for kind, t in transitions:
        add(kind, t.into, [*graph.path(t.parent), t.action],
            [*graph.log(t.parent), *t.step.log])
    return out


def history_log(events: list[dict]) -> list[tuple]:
    """A run's decisions and restores in the model's terms (`regionchaos.explore.model.Model._log`); with bounded
    sources also the end of input (and its revocation), each source that finished and the job's end."""
    out = []
    for e in events:
        kind = e["kind"]
        if kind == Kind.CHECKPOINT_DECIDED:
            out.append(("decided", e["checkpoint_id"], e["status"], e["reason"], e["counter_before"], e["counter_after"]))
        elif kind == Kind.CHECKPOINT_VOIDED:
            out.append(("voided", e["checkpoint_id"]))
        elif kind == Kind.REGION_FAILOVER:
            out.append(("region_failover", e["region"], e["restore_from"]))
        elif kind == Kind.GLOBAL_RESTORE:
            out.append(("global_restore", e["restore_from"], e["new_parallelism"]))
        elif kind == Kind.GLOBAL_RESTART_FROM_SCRATCH:
            out.append(("restart_from_scratch",))
        elif kind == Kind.JOBMANAGER_FAILOVER:
            out.append(("jobmanager_failover", list(e["recovered"])))
        elif kind == Kind.RESCALE_SKIPPED:
            out.append(("rescale_skipped", e["parallelism"]))
        elif kind in (Kind.SOURCES_EXHAUSTED, Kind.END_OF_INPUT_REVOKED):  # bounded sources only
            out.append(("sources_exhausted", kind == Kind.SOURCES_EXHAUSTED))
        elif kind == Kind.TASK_FINISHED:
            out.append(("task_finished", e["subtask"], e["checkpoint_id"]))
        elif kind == Kind.JOB_FINISHED:
            out.append(("job_finished", e["checkpoint_id"]))
    return out


def conformance(predicted: list[tuple], events: list[dict]) -> str | None:
    """None when the emulation took the predicted decisions and restores, in order (it goes on past them: the heal
    phase); else the first difference."""
    actual = history_log(events)
    for i, (want, got) in enumerate(zip(predicted, actual)):
        if tuple(want) != tuple(got):
            return f"step {i}: the model predicted {want}, the emulation did {got}"
    if len(actual) < len(predicted):
        return f"the emulation stopped after {len(actual)} of {len(predicted)} predicted decisions and restores"
    return None


def checked(rep: Representative, result, drift: list[str], interleavings: dict[str, int]) -> None:
    """One representative's emulation (its `RunResult`) against the model: a difference goes to ``drift``; the
    interleavings it went through are counted."""
    why = conformance(rep.predicted, result.events)
    if why is not None:
        drift.append(f"{rep.kind} {rep.describe()}: {why}")
    for kind, n in result.stats.get("interleavings", {}).items():
        interleavings[kind] = interleavings.get(kind, 0) + (1 if n else 0)


def judge_many(spark, explorations: list[tuple[list[Representative], str | None]]) -> list[Judged]:
    """Several explorations' representatives (each with its mutant) emulated, checked against the model, and
    judged together in ONE GX pass; a `Judged` per exploration, each with the pass's wall seconds. A run that two
    explorations share (the same scenario, schedule and mutant) is emulated and judged once; a drift is counted
    where it was emulated. A judgement depends on the run's checks and scenario only: the mutant it ran is named
    on it afterwards."""
    rows: dict[str, list[tuple]] = {name: [] for name in tables_mod.TABLES}
    records: list[dict] = []
    scenario_of: dict[str, Scenario] = {}
    out = []
    for reps, mutant in explorations:
        started = time.perf_counter()
        drift: list[str] = []
        interleavings: dict[str, int] = {}
        for rep in reps:
            rep.run_id = runner.default_run_id(rep.scenario, mutant)
            if rep.run_id in scenario_of:  # the same run in another exploration: emulated and judged once
                continue
            scenario_of[rep.run_id] = rep.scenario
            record: dict[str, Any] = {"run_id": rep.run_id, "seed": rep.scenario.seed}
            try:
                result, table_rows = runner.emulate_in_memory(rep.scenario, mutant)
                for name, table in table_rows.items():
                    rows[name].extend(table)
                checked(rep, result, drift, interleavings)
            except Exception as exc:  # noqa: BLE001 - a representative that crashes is unknown, never valid
                record["error"] = f"emulate failed: {type(exc).__name__}: {exc}"
            records.append(record)
        out.append(Judged(reps, {}, drift, interleavings, emulate_seconds=round(time.perf_counter() - started, 2)))
    started = time.perf_counter()
    judged = judge_rows(spark, rows, records, scenario_of=lambda record: scenario_of[record["run_id"]],
                        mutant=None) if records else {}
    seconds = round(time.perf_counter() - started, 2)
    for done, (reps, mutant) in zip(out, explorations):
        done.results = collect(reps, {r.run_id: replace(judged[r.run_id], mutant=mutant) for r in reps
                                      if r.run_id in judged}, [], {}, mutant).results
        done.judge_seconds = seconds
    return out


def collect(reps: list[Representative], judged: dict[str, Judgement], drift: list[str], interleavings: dict[str, int],
            mutant: str | None) -> Judged:
    """The representatives' judgements from any one GX pass (run id -> `Judgement`); a run without one is unknown."""
    results = {rep.run_id: judged.get(rep.run_id) or crashed(rep.run_id, "no result", scenario=rep.scenario,
                                                              mutant=mutant) for rep in reps}
    return Judged(reps, results, drift, interleavings)


def declared(judgement: Judgement, invariant: str) -> list[str] | None:
    """The recorded findings that explain a run's failure of ``invariant`` (the judge's standing: no violation
    that no finding explains), or None when the run stands as a violation."""
    if judgement.standing == "violation":
        return None
    return sorted({f["id"] for f in judgement.findings_shown for r in f["rules"] if r.startswith(invariant + ".")})
