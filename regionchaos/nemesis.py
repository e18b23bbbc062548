"""Nemesis / generator: the fault schedule of a run, drawn from its seed.

In:  a Scenario (fault mix, seed) and, per checkpoint attempt, the shape of
     the job at that moment (tasks, regions, TaskManagers).
Out: the faults of that attempt: which tasks decline or stay silent, region
     crashes, TaskManager loss, JobManager failover, storage faults, failures
     during recovery. Nothing depends on wall time or on earlier draws: attempt
     ``i`` always draws from its own streams (``Stream``, all of a seed in one table), so a seed
     replays bit for bit (TigerBeetle VOPR style). In swarm mode the seed also
     draws which fault kinds are on and how likely each is. A scenario with an
     explicit ``faults.schedule`` draws no fault: each attempt gets the schedule's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, unique

import numpy as np

from .scenario import Faults, Scenario, schedule_dicts


@unique
class Stream(IntEnum):
    """Every random stream of a seed, in one table: a draw is ``stream_rng(seed, Stream.X[, attempt])``,
    so no two kinds of draw share a stream and adding a draw never moves another's numbers."""

    SWARM = 1  # the seed's fault mix in swarm mode: which kinds are on, how likely (once per seed)
    TASKS = 2  # per attempt: declines and silent (timed-out) tasks
    REGIONS = 3  # per attempt: region crashes and failures during recovery
    TMS = 4  # per attempt: TaskManager loss, failed and slow PUTs
    JOB = 5  # per attempt: JobManager failover, crash between state upload and metadata commit
    RATES = 6  # per attempt, the workload: records per interval and in-flight lag of each split
    DISCOVERY = 7  # once per seed, the workload: the attempts before which new splits are discovered
    RESPONSES = 8  # per attempt: upload time of each task's snapshot


def stream_rng(seed: int, stream: Stream, *index: int) -> np.random.Generator:
    return np.random.default_rng([seed, int(stream), *index])


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
    """The faults of each attempt: drawn from the seed, or read from the scenario's explicit
    ``faults.schedule``. ``recorded`` lists every fault handed out, as schedule entries
    (`ScheduledFault` fields) while ``recording``, so a drawn run can be pinned
    (`regionchaos.schedule.pin`)."""

    def __init__(self, scenario: Scenario):
        self.seed = scenario.seed
        self.faults = self._draw_mix(scenario.faults) if scenario.faults.swarm else scenario.faults
        self.schedule: dict[int, list] | None = None
        if scenario.faults.schedule is not None:
            self.schedule = {}
            for fault in scenario.faults.schedule:
                self.schedule.setdefault(fault.checkpoint, []).append(fault)
        self.recording = False  # set by `regionchaos.schedule.pin` (a drawn run's faults, to pin them)
        self.recorded: list[dict] = []

    def _draw_mix(self, base: Faults) -> Faults:
        """Swarm testing: each fault kind is on with probability 1/2, at a
        probability up to twice the scenario's (or a small default)."""
        rng = stream_rng(self.seed, Stream.SWARM)
        updates = {}
        for kind in FAULT_KINDS:
            on = rng.random() < 0.5
            scale = getattr(base, kind) or 0.05
            updates[kind] = float(min(1.0, rng.random() * 2 * scale)) if on else 0.0
        updates["correlated_regions"] = int(rng.integers(1, max(2, base.correlated_regions + 1)))
        return base.model_copy(update=updates)

    def drawn_parameters(self) -> dict:
        drawn = self.faults.model_dump(mode="json")
        if drawn["schedule"] is None:  # drawn faults: the record as before explicit schedules existed
            del drawn["schedule"]
        else:
            drawn["schedule"] = schedule_dicts(drawn["schedule"])
        return drawn

    def attempt(self, index: int, tasks: list[tuple[str, int]], region_of: dict, num_regions: int,
                taskmanagers: int, healing: bool) -> AttemptFaults:
        out = AttemptFaults(healing=healing)
        if healing:
            return out
        if self.schedule is not None:
            out = self._pinned(index, tasks, num_regions, taskmanagers)
        else:
            out = self._drawn(index, tasks, region_of, num_regions, taskmanagers)
        if self.recording:
            self.recorded += schedule_entries(index, out)
        return out

    def _pinned(self, index: int, tasks: list[tuple[str, int]], num_regions: int, taskmanagers: int) -> AttemptFaults:
        """The schedule's faults of attempt ``index``; a task, region or TaskManager the job does
        not have at that moment (after a rescale) is not hit, as a drawn fault could not hit it."""
        out = AttemptFaults()
        present = set(tasks)
        for fault in (self.schedule or {}).get(index, []):
            if fault.kind in ("decline", "timeout"):
                task = (fault.vertex, fault.subtask)
                if task in present and task not in out.declines and task not in out.timeouts:
                    if fault.kind == "decline":
                        out.declines[task] = "CHECKPOINT_DECLINED"
                    else:
                        out.timeouts.add(task)
            elif fault.region is not None:
                if fault.region < num_regions:
                    (out.region_crashes if fault.kind == "subtask_crash" else out.recovery_failures).append(fault.region)
            elif fault.taskmanager is not None:
                if fault.taskmanager < taskmanagers:
                    if fault.kind == "taskmanager_loss":
                        out.taskmanager_losses.append(fault.taskmanager)
                    else:
                        (out.put_failures if fault.kind == "put_failure" else out.slow_puts).add(fault.taskmanager)
            else:
                setattr(out, fault.kind, True)
        out.slow_puts -= out.put_failures
        out.region_crashes = sorted(set(out.region_crashes))
        out.recovery_failures = sorted(set(out.recovery_failures))
        out.taskmanager_losses = sorted(set(out.taskmanager_losses))
        return out

    def _drawn(self, index: int, tasks: list[tuple[str, int]], region_of: dict, num_regions: int,
               taskmanagers: int) -> AttemptFaults:
        out = AttemptFaults()
        f = self.faults
        rng = stream_rng(self.seed, Stream.TASKS, index)
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
        rng = stream_rng(self.seed, Stream.TMS, index)
        tm_draws = rng.random((taskmanagers, 3))
        out.put_failures = {tm for tm in range(taskmanagers) if tm_draws[tm, 0] < f.put_failure}
        out.slow_puts = {tm for tm in range(taskmanagers) if tm_draws[tm, 1] < f.slow_put} - out.put_failures
        out.taskmanager_losses = [tm for tm in range(taskmanagers) if tm_draws[tm, 2] < f.taskmanager_loss]
        rng = stream_rng(self.seed, Stream.REGIONS, index)
        reg = rng.random((num_regions, 2))
        out.region_crashes = [r for r in range(num_regions) if reg[r, 0] < f.subtask_crash]
        out.recovery_failures = [r for r in range(num_regions) if reg[r, 1] < f.recovery_failure]
        rng = stream_rng(self.seed, Stream.JOB, index)
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
        u = stream_rng(self.seed, Stream.RESPONSES, index).random(len(tasks))
        return {task: int(x ** RESPONSE_TAIL * limit_ms / 2) for task, x in zip(tasks, u)}


def schedule_entries(index: int, out: AttemptFaults) -> list[dict]:
    """An attempt's faults as explicit-schedule entries (`regionchaos.scenario.ScheduledFault`)."""
    entries: list[dict] = []
    for (vertex, subtask) in sorted(out.declines):
        entries.append({"checkpoint": index, "kind": "decline", "vertex": vertex, "subtask": subtask})
    for (vertex, subtask) in sorted(out.timeouts):
        entries.append({"checkpoint": index, "kind": "timeout", "vertex": vertex, "subtask": subtask})
    for kind, regions in (("subtask_crash", out.region_crashes), ("recovery_failure", out.recovery_failures)):
        entries += [{"checkpoint": index, "kind": kind, "region": r} for r in regions]
    for kind, tms in (("taskmanager_loss", out.taskmanager_losses), ("put_failure", sorted(out.put_failures)),
                      ("slow_put", sorted(out.slow_puts))):
        entries += [{"checkpoint": index, "kind": kind, "taskmanager": tm} for tm in tms]
    for kind in ("jobmanager_failover", "crash_before_metadata"):
        if getattr(out, kind):
            entries.append({"checkpoint": index, "kind": kind})
    return entries
