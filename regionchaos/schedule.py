"""Explicit fault schedules: pin the faults a seed draws, so a run can be edited and shrunk.

In:  a scenario (any seed, overrides, fault mix, ``faults.swarm`` included) and a mutant.
Out: `pin(...) -> (Scenario, stats)`: the same scenario with ``faults.schedule`` set to every
     fault the seed drew (checkpoint attempt, kind, target; `regionchaos.scenario.ScheduledFault`),
     ``faults.swarm`` off and the probabilities set to the mix that was drawn (they document the
     schedule's origin and keep the findings' applicability, `regionchaos.findings`, the same);
     plus the protocol stats of the emulation that recorded it. `to_yaml` writes it as a
     scenario file that `regionchaos run --scenario FILE` runs.

The pinned scenario keeps the seed: a schedule replaces only the fault draws (streams 2-5 of
`regionchaos.nemesis`), not the workload's record rates or the tasks' upload times, so the
pinned run is the drawn run, event for event (`tests/test_schedule.py`). Removing entries from
the schedule is how a reproducer shrinks.
"""

from __future__ import annotations

from typing import Any

import yaml

from . import runner
from .scenario import Scenario, from_dict
from .shape import shaped


def _emulate_in_memory(scenario: Scenario, mutant: str | None, record: bool):
    return runner.emulate_in_memory(scenario, mutant, record_schedule=record, rows=False)[0]


def pin(scenario: Scenario, mutant: str | None = None, *, name: str | None = None,
        note: str | None = None) -> tuple[Scenario, dict[str, Any]]:
    """``scenario`` with its drawn faults pinned as ``faults.schedule`` (see the module docstring)."""
    scenario = shaped(scenario)  # a swarm seed's drawn job shape stays in the pinned scenario
    result = _emulate_in_memory(scenario, mutant, record=True)
    data = scenario.to_dict()
    faults = {**result.drawn, "swarm": False, "schedule": result.schedule or []}
    data.update(faults=faults, name=name or f"{scenario.name}-s{scenario.seed}-pinned")
    data["description"] = (note or f"{scenario.name} seed {scenario.seed} with its drawn faults pinned "
                           f"({len(result.schedule or [])} faults)") + (
        "\n" + scenario.description.strip() if scenario.description.strip() else "")
    return from_dict(data), runner.protocol_stats(result.stats)


def protocol_stats_of(scenario: Scenario, mutant: str | None = None) -> dict[str, Any]:
    """The protocol stats of an in-memory emulation of ``scenario`` (no judging)."""
    return runner.protocol_stats(_emulate_in_memory(scenario, mutant, record=False).stats)


def to_yaml(scenario: Scenario) -> str:
    """A scenario file: the catalogue's layout (sections), the schedule one fault per line."""
    data = scenario.to_dict()
    schedule = data["faults"].pop("schedule", None)
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=100)
    if schedule is None:
        return text
    lines = ["  schedule:"] + ["  - " + yaml.safe_dump(e, default_flow_style=True, width=200).strip()
                               for e in schedule] if schedule else ["  schedule: []"]
    out, inserted = [], False
    for line in text.splitlines():
        out.append(line)
        if line == "faults:" and not inserted:
            out += lines
            inserted = True
    return "\n".join(out) + "\n"
