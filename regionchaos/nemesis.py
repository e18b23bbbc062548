"""Nemesis / generator: the fault schedule of a run, drawn from its seed.

In:  a Scenario (fault mix, seed) and, per checkpoint attempt, the shape of
     the job at that moment (tasks, regions, TaskManagers).
Out: the faults of that attempt: which tasks decline or stay silent, region
     crashes, TaskManager loss, JobManager failover, storage faults, failures
     during recovery. Nothing depends on wall time or on earlier draws: attempt
     ``i`` always draws from ``default_rng([seed, STREAM, i])``, so a seed
     replays bit for bit (TigerBeetle VOPR style). In swarm mode the seed also
     draws which fault kinds are on and how likely each is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .scenario import Faults, Scenario

_SWARM, _TASKS, _REGIONS, _TMS, _JOB = 1, 2, 3, 4, 5
_RESPONSES = 8  # streams 6 and 7 are the workload's (emulator.py)
RESPONSE_TAIL = 32  # upload time = u**32 of half the checkpoint timeout: most fast, a thin slow tail

FAULT_KINDS = (
    "decline",
    "timeout",
    "subtask_crash",
    "taskmanager_loss",
    "jobmanager_failover",
    "put_failure",
    "slow_put",
    "crash_before_metadata",
    "recovery_failure",
)


@dataclass
class AttemptFaults:
    declines: dict[tuple[str, int], str] = field(default_factory=dict)
    timeouts: set[tuple[str, int]] = field(default_factory=set)
    put_failures: set[int] = field(default_factory=set)  # TaskManagers whose state PUT fails
    slow_puts: set[int] = field(default_factory=set)  # TaskManagers whose PUT outlasts the timeout
    crash_before_metadata: bool = False
    region_crashes: list[int] = field(default_factory=list)  # after the checkpoint
    taskmanager_losses: list[int] = field(default_factory=list)
    jobmanager_failover: bool = False
    recovery_failures: list[int] = field(default_factory=list)  # regions failing again while recovering
    healing: bool = False  # the heal phase: no faults, every task on time

    def any(self) -> bool:
        return bool(
            self.declines or self.timeouts or self.put_failures or self.slow_puts or self.crash_before_metadata
            or self.region_crashes or self.taskmanager_losses or self.jobmanager_failover or self.recovery_failures
        )


class Nemesis:
    def __init__(self, scenario: Scenario):
        self.seed = scenario.seed
        self.faults = self._draw_mix(scenario.faults) if scenario.faults.swarm else scenario.faults

    def _draw_mix(self, base: Faults) -> Faults:
        """Swarm testing: each fault kind is on with probability 1/2, at a
        probability up to twice the scenario's (or a small default)."""
        rng = np.random.default_rng([self.seed, _SWARM])
        updates = {}
        for kind in FAULT_KINDS:
            on = rng.random() < 0.5
            scale = getattr(base, kind) or 0.05
            updates[kind] = float(min(1.0, rng.random() * 2 * scale)) if on else 0.0
        updates["correlated_regions"] = int(rng.integers(1, max(2, base.correlated_regions + 1)))
        return base.model_copy(update=updates)

    def drawn_parameters(self) -> dict:
        return self.faults.model_dump(mode="json")

    def attempt(self, index: int, tasks: list[tuple[str, int]], region_of: dict, num_regions: int,
                taskmanagers: int, healing: bool) -> AttemptFaults:
        out = AttemptFaults(healing=healing)
        if healing:
            return out
        f = self.faults
        rng = np.random.default_rng([self.seed, _TASKS, index])
        draws = rng.random((len(tasks), 2))
        declined_regions: set[int] = set()
        for (task, (d, t)) in zip(tasks, draws):
            if d < f.decline:
                out.declines[task] = "CHECKPOINT_DECLINED"
                declined_regions.add(region_of[task])
            elif t < f.timeout:
                out.timeouts.add(task)
        if f.correlated_regions > 1 and declined_regions:
            extra = {(r + k) % num_regions for r in declined_regions for k in range(1, f.correlated_regions)}
            for task in tasks:
                if region_of[task] in extra and task not in out.declines and task not in out.timeouts:
                    out.declines[task] = "CHECKPOINT_DECLINED"
        rng = np.random.default_rng([self.seed, _TMS, index])
        tm_draws = rng.random((taskmanagers, 3))
        out.put_failures = {tm for tm in range(taskmanagers) if tm_draws[tm, 0] < f.put_failure}
        out.slow_puts = {tm for tm in range(taskmanagers) if tm_draws[tm, 1] < f.slow_put} - out.put_failures
        out.taskmanager_losses = [tm for tm in range(taskmanagers) if tm_draws[tm, 2] < f.taskmanager_loss]
        rng = np.random.default_rng([self.seed, _REGIONS, index])
        reg = rng.random((num_regions, 2))
        out.region_crashes = [r for r in range(num_regions) if reg[r, 0] < f.subtask_crash]
        out.recovery_failures = [r for r in range(num_regions) if reg[r, 1] < f.recovery_failure]
        rng = np.random.default_rng([self.seed, _JOB, index])
        job = rng.random(2)
        out.crash_before_metadata = bool(job[0] < f.crash_before_metadata)
        out.jobmanager_failover = bool(job[1] < f.jobmanager_failover)
        return out

    def upload_times(self, index: int, tasks: list[tuple[str, int]], limit_ms: int) -> dict[tuple[str, int], int]:
        """Each task's snapshot upload time in emulated ms after the trigger of attempt ``index``:
        ``u**32 * limit/2`` for u uniform in [0, 1). With ``limit`` = the checkpoint timeout no
        task outlasts it unless a fault says so, and a per-region timeout R < timeout/2 catches a
        tail of ``1 - (2R/timeout)**(1/32)`` of the tasks (R = timeout/4: 2.1 %, timeout/10:
        4.9 %); the heal phase passes the deadline as ``limit`` (a healthy cluster is on time).
        Its own stream: the other draws of the attempt do not move."""
        u = np.random.default_rng([self.seed, _RESPONSES, index]).random(len(tasks))
        return {task: int(x ** RESPONSE_TAIL * limit_ms / 2) for task, x in zip(tasks, u)}
