"""Bounded exhaustive exploration of a small scenario: every schedule of up to N checkpoint attempts, judged by GX.

In:  a scenario (catalogue name or file) with ``--set`` overrides, an optional mutant, N (``max_checkpoints``),
     and a Spark session for the judge (default: the process's).
Out: `explore(...) -> dict`: the summary (`regionchaos.explore.summary`): distinct states, the schedules they stand
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

from typing import Any

from ..scenario import check_mutant, load
from .judging import judge, representatives
from .scope import refuse
from .search import search
from .summary import summarize


def explore(scenario_ref: str, *, overrides: dict[str, Any] | None = None, mutant: str | None = None,
            max_checkpoints: int = 6, spark=None, progress=None) -> dict:
    """See the module docstring. ScenarioError (exit 2) before any work when the scenario is out of scope."""
    mutant = check_mutant(mutant)
    overrides = dict(overrides or {})
    scenario = load(scenario_ref, overrides=overrides or None)
    refuse(scenario, max_checkpoints)
    graph = search(scenario, mutant, max_checkpoints, progress=progress)
    if spark is None:
        from ..judge.engine import judging_session

        spark = judging_session()
    reps = representatives(graph, scenario)
    judged = judge(spark, reps, mutant)
    return summarize(scenario_ref, overrides, scenario, mutant, max_checkpoints, graph, judged)
