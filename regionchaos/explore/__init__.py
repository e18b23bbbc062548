"""Bounded exhaustive exploration of a small scenario: every schedule of up to N checkpoint attempts, judged by GX.

In:  a scenario (catalogue name or file) with ``--set`` overrides, an optional mutant, N (``max_checkpoints``),
     and a Spark session for the judge (default: the process's).
Out: `explore(...) -> dict` (`explore_many(cases) -> [dict]`: several, judged in one pass): the summary (`regionchaos.explore.summary`): distinct states, the schedules they stand
     for, each invariant's verdict, the shortest counterexample per failing invariant (a replay line and its
     schedule), and a proof statement per invariant the signature decides.

The rooms:
- `scope`: what is explored (the choices at each attempt) and what is refused (exit 2, naming the field);
- `model`: the control plane of a run without its data plane, driving the real CheckpointCoordinator;
- `signature`: what two runs must agree on to be one state, argued field by field;
- `search`: breadth first over the states, with the explorer's own predicates (flip_bounds);
- `judging`: the representatives as pinned schedules, run through the real emulator, judged in ONE GX pass;
- `summary`: verdicts, counterexamples and the proof statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..judge.engine import judging_session
from ..scenario import check_mutant, load
from .judging import judge_many, representatives
from .scope import refuse
from .search import search
from .summary import summarize


def explore(scenario_ref: str, *, overrides: dict[str, Any] | None = None, mutant: str | None = None,
            max_checkpoints: int = 6, spark=None, progress=None) -> dict:
    """See the module docstring. ScenarioError (exit 2) before any work when the scenario is out of scope."""
    return explore_many([Case(scenario_ref, overrides or {}, mutant, max_checkpoints)], spark=spark,
                        progress=progress)[0]


@dataclass(frozen=True)
class Case:
    """One exploration of `explore_many`: a scenario reference, its ``--set`` overrides, a mutant and N."""

    scenario: str
    overrides: dict
    mutant: str | None = None
    max_checkpoints: int = 6


def explore_many(cases: list[Case], *, spark=None, progress=None) -> list[dict]:
    """Several explorations, their representatives judged together in ONE GX pass (`judging.judge_many`): a summary
    each, in order. Every case is checked first: ScenarioError (exit 2) before any work if one is out of scope."""
    loaded = []
    for case in cases:
        mutant = check_mutant(case.mutant)
        scenario = load(case.scenario, overrides=dict(case.overrides) or None)
        refuse(scenario, case.max_checkpoints)
        loaded.append((case, scenario, mutant))
    graphs = [search(scenario, mutant, case.max_checkpoints, progress=progress) for case, scenario, mutant in loaded]
    if spark is None:
        spark = judging_session()
    reps = [representatives(graph, scenario) for graph, (_, scenario, _) in zip(graphs, loaded)]
    judged = judge_many(spark, [(r, mutant) for r, (_, _, mutant) in zip(reps, loaded)])
    return [summarize(case.scenario, dict(case.overrides), scenario, mutant, case.max_checkpoints, graph, j)
            for (case, scenario, mutant), graph, j in zip(loaded, graphs, judged)]
