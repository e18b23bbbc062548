"""Shrinking: the smallest schedule that still fails the same invariant.

In:  a failing run (scenario with its seed and overrides, mutant) and the invariant to keep
     failing (default: the first invariant the run fails).
Out: `shrink(...) -> ShrinkResult`: the shrunk scenario (an explicit ``faults.schedule``,
     `regionchaos.schedule`) with fewer faults, checkpoints and subtasks, the rounds it took
     and the size at each, the invariants the shrunk run fails and the run's own outcome
     (`regionchaos.judge.policy`); `NothingToShrink` (bad input) when the run fails nothing,
     `NotJudged` when it could not be judged (unknown).

How: the run's drawn faults are pinned (`regionchaos.schedule.pin`); then, round after
round, every candidate reduction is emulated in memory (cheap: the swarm's in-memory store)
and all of a round's candidates are judged together by one pass of the same GX suites (the first
round's in the same pass as the run itself: `regionchaos.judge.runs.judge_rows`). Candidates of a
round: the schedule without each of its chunks at every granularity (halves, quarters, ... single faults: delta debugging's
complements, all at once since emulating is cheap and the judging pass is the fixed cost), each fault
placed inside a pending checkpoint moved out between checkpoints or one response earlier,
fewer fault-phase checkpoints (up to the last fault), and a lower parallelism (faults on
subtasks, regions or TaskManagers that no longer exist dropped). The smallest candidate that
still fails the invariant wins the round; shrinking stops when no candidate does. Every step
is a strict reduction of (faults, checkpoints, parallelism, faults inside checkpoints), so it terminates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from . import runner
from . import tables as tables_mod
from .judge import Judgement, RunOutcome, run_outcome
from .judge.engine import judging_session
from .judge.judgement import UNKNOWN
from .judge.runs import judge_rows
from .runner import emulate_in_memory
from .scenario import Scenario, ScenarioError, from_dict
from .schedule import pin


@dataclass
class ShrinkResult:
    original: Scenario
    shrunk: Scenario
    invariant: str
    failed: list[str]
    rounds: list[dict] = field(default_factory=list)
    judged: int = 0
    wall_seconds: float = 0.0
    complete: bool = True  # False when max_rounds stopped it before a round found nothing smaller
    outcome: RunOutcome | None = None  # the run's own, as the policy reads its judgement


def size(scenario: Scenario) -> tuple[int, int, int, int]:
    """(faults, fault-phase checkpoints, parallelism, how deep inside checkpoints its faults land): what
    shrinking reduces. The last counts, per fault placed inside a pending checkpoint (``at``), one, plus the
    responses it waits for (``after_acks``): a fault moved earlier, or out between checkpoints, is smaller."""
    inside = sum(1 + (f.after_acks or 0) for f in scenario.faults.schedule or () if f.at not in (None, "between"))
    return (len(scenario.faults.schedule or ()), scenario.checkpoints, scenario.topology.parallelism, inside)


def _moved(schedule: list[dict]) -> list[list[dict]]:
    """The schedule with one fault moved: out of its pending checkpoint (between checkpoints), or to land
    one response earlier."""
    out = []
    for i, entry in enumerate(schedule):
        if entry.get("at") in (None, "between"):
            continue
        between = {k: v for k, v in entry.items() if k not in ("at", "after_acks")}
        out.append(schedule[:i] + [between] + schedule[i + 1:])
        if entry.get("after_acks"):
            out.append(schedule[:i] + [{**entry, "after_acks": entry["after_acks"] - 1}] + schedule[i + 1:])
    return out


def _with(scenario: Scenario, *, schedule: list[dict] | None = None, checkpoints: int | None = None,
          parallelism: int | None = None) -> Scenario | None:
    """A candidate: ``scenario`` with these changes, or None if it is not a valid scenario."""
    data = scenario.to_dict()
    if schedule is not None:
        data["faults"]["schedule"] = schedule
    if checkpoints is not None:
        data["checkpoints"] = checkpoints
        data["rescale"] = [e for e in data["rescale"] if e["after_checkpoint"] < checkpoints]
        data["faults"]["schedule"] = [e for e in data["faults"]["schedule"] if e["checkpoint"] < checkpoints]
    if parallelism is not None:
        top = data["topology"]
        top["parallelism"] = parallelism
        top["taskmanagers"] = min(top["taskmanagers"], parallelism)
        data["faults"]["correlated_regions"] = min(data["faults"]["correlated_regions"], parallelism)
        most = max([parallelism] + [e["parallelism"] for e in data["rescale"]])
        regions = most if top["partitioning"] == "forward" else 1
        data["faults"]["schedule"] = [
            e for e in data["faults"]["schedule"]
            if e.get("subtask", 0) < most and e.get("region", 0) < regions and e.get("taskmanager", 0) < top["taskmanagers"]]
    try:
        return from_dict(data)
    except ScenarioError:
        return None


def candidates(scenario: Scenario) -> list[Scenario]:
    """Every reduction of one round (see the module docstring), smallest first, no duplicates."""
    schedule = scenario.to_dict()["faults"]["schedule"]
    out: list[Scenario | None] = []
    n = 2
    while schedule and n <= 2 * len(schedule):
        n = min(n, len(schedule))
        step = -(-len(schedule) // n)
        for i in range(0, len(schedule), step):
            out.append(_with(scenario, schedule=schedule[:i] + schedule[i + step:]))
        if n == len(schedule):
            break
        n *= 2
    out += [_with(scenario, schedule=moved) for moved in _moved(schedule)]
    last = max((e["checkpoint"] for e in schedule), default=-1)
    for checkpoints in sorted({last + 1, (scenario.checkpoints + last + 1) // 2, scenario.checkpoints - 1}):
        if 1 <= checkpoints < scenario.checkpoints:
            out.append(_with(scenario, checkpoints=checkpoints))
    p = scenario.topology.parallelism
    for parallelism in sorted({p // 2, p - 1}):
        if 1 <= parallelism < p:
            out.append(_with(scenario, parallelism=parallelism))
    seen, unique = set(), []
    for c in out:
        if c is not None and c.to_dict() != scenario.to_dict():
            key = runner.default_run_id(c, None)
            if key not in seen:
                seen.add(key)
                unique.append(c)
    return sorted(unique, key=size)


def judge(spark, scenarios: list[Scenario], mutant: str | None) -> list[Judgement]:
    """Emulate each scenario in memory and judge all of them in one GX pass: per scenario its `Judgement`
    (a candidate whose emulation raised is unknown, never "still failing")."""
    rows: dict[str, list[tuple]] = {name: [] for name in tables_mod.TABLES}
    records, of_run = [], {}
    for scenario in scenarios:
        record: dict[str, Any] = {"run_id": runner.default_run_id(scenario, mutant), "seed": scenario.seed}
        of_run[record["run_id"]] = scenario
        try:
            for name, table in emulate_in_memory(scenario, mutant)[1].items():
                rows[name].extend(table)
        except Exception as exc:  # noqa: BLE001 - a candidate that crashes is unknown, never "still failing"
            record["error"] = f"{type(exc).__name__}: {exc}"
        records.append(record)
    judged = judge_rows(spark, rows, records, scenario_of=lambda record: of_run[record["run_id"]], mutant=mutant)
    return [judged[record["run_id"]] for record in records]


class NothingToShrink(ScenarioError):
    """The run does not fail the invariant (bad input: ``--seed`` names a run that fails nothing)."""


class NotJudged(Exception):
    """The run could not be judged (its outcome is unknown): there is nothing sure to shrink."""

    def __init__(self, outcome: RunOutcome):
        super().__init__(outcome.sentence)
        self.outcome = outcome


def shrink(scenario: Scenario, mutant: str | None = None, invariant: str | None = None, *, spark=None,
           console=None, max_rounds: int = 30) -> ShrinkResult:
    """See the module docstring. ScenarioError (field ``--seed``) if the run does not fail."""
    say = console.print if console is not None else (lambda *a, **k: None)
    if spark is None:
        spark = judging_session()
    started = time.perf_counter()
    current, _ = pin(scenario, mutant)
    # the run itself and its first round's candidates in one pass: a pass's fixed cost is most of a
    # round's (a fresh driver's first pass most of all); a run that fails nothing wastes its candidates
    first_round = candidates(current)
    first, *first_verdicts = judge(spark, [current, *(first_round if max_rounds >= 1 else [])], mutant)
    outcome = run_outcome(first)
    if invariant not in (None, *first.failed) or not first.failed:
        if outcome.kind == UNKNOWN:  # it may fail the invariant, or not: nobody knows
            raise NotJudged(outcome)
        want = invariant or "any invariant"
        raise NothingToShrink([("--seed", f"{scenario.name} seed {scenario.seed} does not fail {want} "
                                          f"({outcome.sentence}): nothing to shrink")])
    invariant = invariant or first.failed[0]
    result = ShrinkResult(scenario, current, invariant, first.failed, judged=1, outcome=outcome)
    result.rounds.append({"round": 0, "size": size(current), "candidates": 1, "failed": first.failed})
    say(f"shrink: {scenario.name} seed {scenario.seed} fails {invariant}; start {_describe(current)}")
    for round_no in range(1, max_rounds + 2):
        cands = first_round if round_no == 1 else candidates(current)
        if not cands:
            break
        if round_no > max_rounds:
            result.complete = False
            say(f"  stopped after {max_rounds} rounds (max_rounds): a smaller schedule may still fail {invariant}")
            break
        verdicts = first_verdicts if round_no == 1 else judge(spark, cands, mutant)
        result.judged += len(cands)
        still = [(c, v) for c, v in zip(cands, verdicts) if invariant in v.failed]
        if not still:
            say(f"  round {round_no}: none of {len(cands)} smaller schedules fails {invariant}: done")
            break
        current, verdict = min(still, key=lambda cv: size(cv[0]))
        result.shrunk, result.failed = current, verdict.failed
        result.rounds.append({"round": round_no, "size": size(current), "candidates": len(cands),
                              "failed": verdict.failed})
        say(f"  round {round_no}: {len(still)} of {len(cands)} still fail {invariant}; now {_describe(current)}")
    result.wall_seconds = round(time.perf_counter() - started, 1)
    return result


def _describe(scenario: Scenario) -> str:
    faults, checkpoints, parallelism, inside = size(scenario)
    depth = f", {inside} deep inside pending checkpoints" if inside else ""
    return f"{faults} faults, {checkpoints} checkpoints, parallelism {parallelism}{depth}"
