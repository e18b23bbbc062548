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

Every fault kind is an entry of `regionchaos.faultkinds` (its target, stream, column, the
`AttemptFaults` field it lands in): this module only applies the registry to a run, plus the
correlated declines (``faults.correlated_regions``) and the tasks' upload times.
"""

from __future__ import annotations

from .faultkinds import (  # noqa: F401 - Stream, stream_rng, AttemptFaults, FAULT_KINDS: re-exported
    FAULT_KINDS,
    AttemptFaults,
    Stream,
    draw,
    draw_mix,
    land,
    schedule_entries,
    stream_rng,
    unlisted_when_off,
)
from .scenario import Faults, Scenario, schedule_dicts

RESPONSE_TAIL = 32  # upload time = u**32 of half the checkpoint timeout: most fast, a thin slow tail


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
        """Swarm testing: the seed's fault mix (`regionchaos.faultkinds.draw_mix`)."""
        return base.model_copy(update=draw_mix(self.seed, base))

    def drawn_parameters(self) -> dict:
        drawn = unlisted_when_off(self.faults.model_dump(mode="json"))
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
        present = {"task": set(tasks), "region": num_regions, "taskmanager": taskmanagers}
        return land(index, (self.schedule or {}).get(index, []), present)

    def _drawn(self, index: int, tasks: list[tuple[str, int]], region_of: dict, num_regions: int,
               taskmanagers: int) -> AttemptFaults:
        """Each kind drawn from its stream (`regionchaos.faultkinds.draw`); a declining region
        then drags ``correlated_regions - 1`` neighbours along (no draw of its own)."""
        f = self.faults
        targets = {"task": tasks, "region": list(range(num_regions)), "taskmanager": list(range(taskmanagers)),
                   "job": [None]}
        out = draw(self.seed, index, f, targets)
        declined_regions = {region_of[task] for task in out.declines}
        if f.correlated_regions > 1 and declined_regions:
            extra = {(r + k) % num_regions for r in declined_regions for k in range(1, f.correlated_regions)}
            for task in tasks:
                if region_of[task] in extra and task not in out.declines and task not in out.timeouts:
                    out.declines[task] = "CHECKPOINT_DECLINED"
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

