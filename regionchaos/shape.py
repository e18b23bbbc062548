"""Swarm testing draws the cluster too: a swarm seed's job shape, concurrency and timing.

In:  a scenario with ``faults.swarm`` on (its values are the bounds' scale) and its seed.
Out: `shaped(scenario)`: the scenario the seed runs, with these drawn from ``Stream.SHAPE`` (one
     stream, its own: no other draw moves), each on with probability 1/2, as VOPR draws its cluster:
     - the splits: ``[max(1, S/2), 2 S]`` for the scenario's S, odd counts and remainders included
       (8 splits over 4, 2 and 1 subtasks leave no remainder, 7 do);
     - splits discovered while running: up to half the splits;
     - the parallelism: ``[max(2, P/2), P]`` (TaskManagers and correlated regions capped to fit);
     - ``execution.checkpointing.max-concurrent-checkpoints``: 2 to 4;
     - the control plane's delays (``timing``): each up to twice the checkpoint interval.
     A scenario without ``faults.swarm``, or with an explicit schedule, is returned as it is.

Every run applies it once, before anything is written (`regionchaos.runner.start`), so a swarm seed,
its replay as a deep run and its pinned schedule run the same job; ``scenario.json`` records the
scenario as run.
"""

from __future__ import annotations

from typing import Any

from .faultkinds import Stream, stream_rng
from .scenario import Partitioning, Scenario, from_dict


def shaped(scenario: Scenario) -> Scenario:
    if (not scenario.faults.swarm or scenario.faults.swarm_shaped or scenario.faults.schedule is not None
            or scenario.backend != "emulation"):
        return scenario
    data = scenario.to_dict()
    updates = draw(scenario)
    for section, values in updates.items():
        data[section] = {**data.get(section, {}), **values}
    data["faults"]["swarm_shaped"] = True
    return from_dict(data)


def draw(scenario: Scenario) -> dict[str, dict[str, Any]]:
    """The drawn fields, by section (a section's field is left out when its switch is off)."""
    rng = stream_rng(scenario.seed, Stream.SHAPE)
    u = rng.random(12)
    w, t, f = scenario.workload, scenario.topology, scenario.flink
    out: dict[str, dict[str, Any]] = {"workload": {}, "topology": {}, "flink": {}, "timing": {}, "faults": {}}
    if u[0] < 0.5:
        lo, hi = max(1, w.splits // 2), 2 * w.splits
        out["workload"]["splits"] = lo + int(u[1] * (hi - lo + 1))
    splits = out["workload"].get("splits", w.splits)
    if u[2] < 0.5 and w.discovered_splits == 0:
        out["workload"]["discovered_splits"] = int(u[3] * (splits // 2 + 1))
    if u[4] < 0.5 and t.partitioning == Partitioning.FORWARD:
        lo = min(t.parallelism, max(2, t.parallelism // 2))
        p = lo + int(u[5] * (t.parallelism - lo + 1))
        out["topology"]["parallelism"] = p
        out["topology"]["taskmanagers"] = min(t.taskmanagers, p)
        out["faults"]["correlated_regions"] = min(scenario.faults.correlated_regions, p)
    if u[6] < 0.5:
        out["flink"]["execution.checkpointing.max-concurrent-checkpoints"] = 2 + int(u[7] * 3)
    for i, name in enumerate(("fallback_ms", "metadata_ms", "notify_ms")):
        if u[8 + i] < 0.5:
            hi = int(rng.random() * 2 * f.interval_ms)
            out["timing"][name] = [0, hi]
    return {k: v for k, v in out.items() if v}
