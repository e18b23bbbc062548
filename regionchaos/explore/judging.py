"""The one judge of an exploration: its representatives run through the real emulator, judged in one GX pass.

In:  the search's `Graph`, the scenario it explored (with the reference and ``--set`` overrides that name it on the
     command line), the mutant, and a Spark session (the judge's).
Out: `representatives(...)`: one pinned schedule per distinct state (the first path that reached it), per explorer
     predicate its first violating transition, and per probe (`Graph.probes`); `judge(...) -> Judged`: each one
     emulated in memory (`regionchaos.runner.emulate_in_memory`, the swarm's fast path), the decisions and restores
     its history shows compared with the ones the model predicted (`conformance`), and all of them judged by ONE
     pass of the GX suites (`regionchaos.swarm.judge_rows`, the swarm's and the shrinker's call).

A representative is a scenario file as `regionchaos pin` writes one: the explored scenario with ``checkpoints`` =
the path's attempts and ``faults.schedule`` = its choices (each attempt's responses and fault as explicit
entries), so its replay line runs it again (`replay`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .. import runner
from .. import tables as tables_mod
from ..findings import allowed_rules, applicable, outcome, unexplained
from ..history import Kind
from ..run import unknown_result
from ..scenario import INVARIANTS, Scenario, from_dict
from .scope import Action
from .search import Graph, Transition

KINDS = ("state", "violation", "probe")  # why a schedule was judged, in the order a counterexample prefers


@dataclass
class Representative:
    kind: str
    node: int  # the state it reaches (its parent's, for a violation or a probe that reached no new state)
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
    results: dict[str, dict]  # run id -> {"verdict", "failed", "failed_rules", "explained", "unknown", "error"?}
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
    transitions += [("probe", t) for t in graph.probes]
    for kind, t in transitions:
        add(kind, t.into if t.into is not None else t.parent, [*graph.path(t.parent), t.action],
            [*graph.log(t.parent), *t.step.log])
    return out


def history_log(events: list[dict]) -> list[tuple]:
    """A run's decisions and restores in the model's terms (`regionchaos.explore.model.Model._log`)."""
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


def judge(spark, reps: list[Representative], mutant: str | None) -> Judged:
    """Emulate every representative in memory, check it against the model, and judge all in ONE GX pass."""
    from ..swarm import judge_rows

    started = time.perf_counter()
    rows: dict[str, list[tuple]] = {name: [] for name in tables_mod.TABLES}
    records, drift, interleavings = [], [], {}
    for rep in reps:
        rep.run_id = runner.default_run_id(rep.scenario, mutant)
        record: dict[str, Any] = {"run_id": rep.run_id, "seed": rep.scenario.seed}
        try:
            result, table_rows = runner.emulate_in_memory(rep.scenario, mutant)
            for name, table in table_rows.items():
                rows[name].extend(table)
            checked(rep, result, drift, interleavings)
        except Exception as exc:  # noqa: BLE001 - a representative that crashes is unknown, never valid
            record["error"] = f"emulate failed: {type(exc).__name__}: {exc}"
        records.append(record)
    emulated = time.perf_counter()
    try:
        judged = judge_rows(spark, rows, records) if records else {}
    except Exception as exc:  # noqa: BLE001 - nothing judged: every representative unknown, never valid
        judged = {r["run_id"]: unknown_result(f"validate failed: {type(exc).__name__}: {exc}") for r in records}
    errors = {r["run_id"]: r["error"] for r in records if "error" in r}
    out = collect(reps, judged, drift, interleavings, errors)
    out.emulate_seconds, out.judge_seconds = round(emulated - started, 2), round(time.perf_counter() - emulated, 2)
    return out


def collect(reps: list[Representative], judged: dict[str, dict], drift: list[str], interleavings: dict[str, int],
            errors: dict[str, str] | None = None) -> Judged:
    """The judged results (run id -> {"checks", "verdict"}, from any one GX pass) of the representatives, as what
    each run shows (`regionchaos.findings.outcome`); a run without a result is unknown on every invariant."""
    results = {}
    for rep in reps:
        res = judged.get(rep.run_id) or unknown_result((errors or {}).get(rep.run_id, "no result"))
        results[rep.run_id] = {"verdict": res["verdict"], **outcome(res["checks"]),
                               **({"error": res["error"]} if res.get("error") else {})}
        if not res["checks"]:  # no check ran: every invariant unknown
            results[rep.run_id]["unknown"] = list(INVARIANTS)
    return Judged(reps, results, drift, interleavings)


def declared(rep: Representative, result: dict, invariant: str) -> list[str] | None:
    """The findings that explain ``rep``'s failure of ``invariant`` (every failed rule of it declared by a finding
    that applies and every violation explained by its mechanism, `regionchaos.findings`), or None if any is not."""
    rules = [r for r in result["failed_rules"] if r.split(".", 1)[0] == invariant]
    allowed = allowed_rules(rep.scenario)
    if not rules or any(r not in allowed or unexplained(rep.scenario, r, result.get("explained")) for r in rules):
        return None
    return sorted({f.id for f in applicable(rep.scenario) for r in rules if r in f.rules_for(rep.scenario)})
