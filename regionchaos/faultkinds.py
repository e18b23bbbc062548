"""The fault kinds, one entry each: what a kind hits, how a seed draws it, where it lands.

In:  nothing but this table (`KINDS`) and the seed's streams (`Stream`).
Out: everything else derives from the table:
     - the scenario's probability fields of ``faults`` (`probability_fields`: one per kind, its
       description and bounds, plus a kind's own parameters), and the schedule's kinds with the
       target each names (`SCHEDULE_KINDS`, `SCHEDULE_TARGETS`; `regionchaos.scenario`);
     - the swarm mix (`draw_mix`: which kinds a swarm seed turns on, and how likely each is);
     - an attempt's faults (`AttemptFaults`), drawn from the seed (`draw`) or landed from an
       explicit schedule (`land`), and back as schedule entries (`schedule_entries`);
     - the storage vocabulary (`STORAGE_PLANS`: the `regionchaos.storage.FaultPlan` field a kind
       fills, and the name the storage wrapper records a fired fault under: the kind's own).

Adding a kind: a `Stream` for its draws (never an existing one, so no other draw moves), its
`AttemptFaults` field, its `FaultKind` entry (``since_identity=False``: off, it is left out of a
scenario's dict and the run id stays the same), and its effect where the attempt runs (the task
side, the failover or the data plane). Nothing here depends on wall time or on earlier draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import IntEnum, unique
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, Strict

Target = Literal["task", "region", "taskmanager", "job"]
TARGET_FIELDS: dict[str, tuple[str, ...]] = {  # the fields of a schedule entry that name each target
    "task": ("vertex", "subtask"), "region": ("region",), "taskmanager": ("taskmanager",), "job": ()}
DECLINED = "CHECKPOINT_DECLINED"  # the reason of a drawn or pinned decline (Flink's failure reason)


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
    ACKS = 9  # per attempt: TaskManagers whose acknowledgements start being lost (ack_loss)
    RECORDS = 10  # per split, the workload: the key of its record values (`regionchaos.workload.records`)
    REAL_FLINK = 11  # once per seed, a real-Flink run (`regionchaos.flink.run.draw_faults`): kill times, victims
    INSTANTS = 12  # per attempt: where each region, TaskManager or JobManager fault lands (between or inside)
    TIMING = 13  # per attempt: the control plane's delays (fallback, metadata write, notifications)
    SHAPE = 14  # once per seed in swarm mode: the job's shape, concurrency and timing (`regionchaos.shape`)
    STORE = 15  # per attempt: the completed checkpoint store refuses the checkpoint (store_failure)


def stream_rng(seed: int, stream: Stream, *index: int) -> np.random.Generator:
    return np.random.default_rng([seed, int(stream), *index])


@dataclass
class AttemptFaults:
    """The faults of one checkpoint attempt: one field per kind (`FaultKind.lands`)."""

    declines: dict[tuple[str, int], str] = field(default_factory=dict)
    timeouts: set[tuple[str, int]] = field(default_factory=set)
    put_failures: set[int] = field(default_factory=set)  # TaskManagers whose state PUT fails
    slow_puts: set[int] = field(default_factory=set)  # TaskManagers whose PUT outlasts the timeout
    crash_before_metadata: bool = False
    region_crashes: list[int] = field(default_factory=list)  # after the checkpoint
    taskmanager_losses: list[int] = field(default_factory=list)
    jobmanager_failover: bool = False
    recovery_failures: list[int] = field(default_factory=list)  # regions failing again while recovering
    ack_losses: set[int] = field(default_factory=set)  # TaskManagers whose acks never reach the JobManager
    store_failure: bool = False  # the completed checkpoint store refuses the attempt's checkpoint
    healing: bool = False  # the heal phase: no faults, every task on time
    # (kind, target) -> where it lands inside the attempt's checkpoint: (instant, responses before it);
    # a region, TaskManager or JobManager fault not listed lands between checkpoints (`INSIDE`)
    inside: dict[tuple[str, Any], tuple[str, int]] = field(default_factory=dict)

    def any(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self) if f.name not in ("healing", "inside"))

    def between(self, kind: str, targets: Any) -> Any:
        """The targets of ``kind`` (a list, or the job's bool) that land between checkpoints."""
        if isinstance(targets, bool):
            return targets and (kind, None) not in self.inside
        return [t for t in targets if (kind, t) not in self.inside]

    def landing(self, instant: str) -> list[tuple[str, Any, int]]:
        """(kind, target, responses before it) of the faults landing at ``instant`` inside the checkpoint."""
        return sorted((k, t, n) for (k, t), (at, n) in self.inside.items() if at == instant)


@dataclass(frozen=True)
class FaultKind:
    """One fault kind. ``probability``: the ``faults.<name>`` field's description (a probability
    per target and attempt, 0 to 1). Drawn: target ``i`` of attempt ``a`` is hit when
    ``stream_rng(seed, stream, a).random((targets, width))[i, column] < probability`` (width:
    the stream's columns), unless a kind of ``yields_to`` hit it; ``lasts`` names a parameter
    (in ``params``) of how many attempts a hit lasts. ``swarm_stream``: None draws the swarm
    switch from the shared SWARM stream in table order (the first nine kinds); a later kind
    draws it from ``stream_rng(seed, SWARM, swarm_stream)``. ``storage``: the FaultPlan field
    the data plane fills for a hit (None: no storage fault)."""

    name: str
    target: Target
    probability: str
    stream: Stream
    column: int
    lands: str
    yields_to: tuple[str, ...] = ()
    storage: str | None = None
    swarm_stream: int | None = None
    since_identity: bool = True  # listed in every scenario dict, even off (the first nine kinds)
    params: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # extra faults fields: (type, Field)
    lasts: str | None = None
    # when it lands, relative to the attempt's checkpoint N: ``response`` (it is a task's response to N, at
    # the task's drawn upload time), ``recovery`` (while a region restarted by a crash recovers), or any of
    # `INSTANTS` (between checkpoints, or inside N: after some responses, while its region fallback is
    # pending, while its metadata is written)
    instants: tuple[str, ...] = ("response",)


Int = Annotated[int, Strict()]
BETWEEN = "between"  # in the interval before N's trigger, no checkpoint pending (one at a time)
INSIDE = ("pending", "fallback", "finalize")  # inside N: after ``after_acks`` responses; the next region fallback
# (of N or a later checkpoint); N's metadata write
INSTANTS = (BETWEEN, *INSIDE)

KINDS: dict[str, FaultKind] = {k.name: k for k in (
    FaultKind("decline", "task", "a subtask declines", Stream.TASKS, 0, "declines"),
    FaultKind("timeout", "task", "a subtask neither acks nor declines", Stream.TASKS, 1, "timeouts",
              yields_to=("decline",)),
    FaultKind("subtask_crash", "region", "a region fails over (per region)", Stream.REGIONS, 0, "region_crashes",
              instants=INSTANTS),
    FaultKind("taskmanager_loss", "taskmanager", "a TaskManager is lost (per TM)", Stream.TMS, 2,
              "taskmanager_losses", instants=INSTANTS),
    FaultKind("jobmanager_failover", "job", "the JobManager fails over", Stream.JOB, 1, "jobmanager_failover",
              instants=INSTANTS),
    FaultKind("put_failure", "taskmanager", "a state file PUT fails (per TM)", Stream.TMS, 0, "put_failures",
              storage="failed_put_keys"),
    FaultKind("slow_put", "taskmanager", "a state file PUT is too slow (per TM)", Stream.TMS, 1, "slow_puts",
              yields_to=("put_failure",), storage="slow_put_ms"),
    FaultKind("crash_before_metadata", "job", "JM crashes between state upload and metadata commit", Stream.JOB,
              0, "crash_before_metadata", storage="crash_before_key", instants=("finalize",)),
    FaultKind("recovery_failure", "region", "a restarted region fails again during recovery", Stream.REGIONS, 1,
              "recovery_failures", instants=("recovery",)),
    FaultKind("ack_loss", "taskmanager", "the acknowledgements of a TaskManager's tasks stop reaching the "
              "JobManager for ack_loss_checkpoints attempts (per TM)", Stream.ACKS, 0, "ack_losses",
              swarm_stream=int(Stream.ACKS), since_identity=False, lasts="ack_loss_checkpoints",
              params={"ack_loss_checkpoints": (Int, Field(1, ge=1, le=1000, description=(
                  "attempts an ack_loss lasts: the TaskManager's acks are lost from the drawn attempt on")))}),
    FaultKind("store_failure", "job", "the completed checkpoint store refuses the attempt's checkpoint once its "
              "metadata is written (FINALIZE_CHECKPOINT_FAILURE)", Stream.STORE, 0, "store_failure",
              swarm_stream=int(Stream.STORE), since_identity=False, instants=("finalize",)),
)}
FAULT_KINDS = tuple(KINDS)  # the kinds, in the table's order (the swarm mix's, the scenario fields')
_TARGET_ORDER = ("task", "region", "taskmanager", "job")
SCHEDULE_KINDS = tuple(sorted(KINDS, key=lambda n: (_TARGET_ORDER.index(KINDS[n].target), FAULT_KINDS.index(n))))
SCHEDULE_TARGETS: dict[str, tuple[str, ...]] = {n: TARGET_FIELDS[KINDS[n].target] for n in SCHEDULE_KINDS}
MOVABLE = tuple(n for n in SCHEDULE_KINDS if KINDS[n].instants == INSTANTS)  # kinds a schedule may place (``at``)
STORAGE_PLANS: dict[str, str] = {k.storage: k.name for k in KINDS.values() if k.storage}  # FaultPlan field -> kind


def probability_fields(number: Any) -> dict[str, tuple[Any, Any]]:
    """The ``faults`` section's fields of the kinds: ``name: (number, Field)``, then each kind's params."""
    out: dict[str, tuple[Any, Any]] = {}
    for k in KINDS.values():
        out[k.name] = (number, Field(0.0, ge=0.0, le=1.0, description=k.probability))
    for k in KINDS.values():
        out.update(k.params)
    return out


def unlisted_when_off(faults: dict) -> dict:
    """A dumped ``faults`` section without the kinds added since the first nine while they are
    off (and their params): a scenario that does not use them keeps its dict and run id."""
    out = dict(faults)
    for k in KINDS.values():
        if not k.since_identity and not out.get(k.name):
            out.pop(k.name, None)
            for name in k.params:
                out.pop(name, None)
    return out


def draw_mix(seed: int, base: Any) -> dict[str, Any]:
    """Swarm testing: each kind is on with probability 1/2, at a probability up to twice the
    scenario's (or a small default); the number of correlated regions too. The updates of ``base``."""
    rng = stream_rng(seed, Stream.SWARM)
    updates: dict[str, Any] = {}
    for k in KINDS.values():
        if k.swarm_stream is None:
            updates[k.name] = _switch(rng, getattr(base, k.name))
    updates["correlated_regions"] = int(rng.integers(1, max(2, base.correlated_regions + 1)))
    for k in KINDS.values():
        if k.swarm_stream is not None:
            updates[k.name] = _switch(stream_rng(seed, Stream.SWARM, k.swarm_stream), getattr(base, k.name))
    updates["inside"] = _switch(stream_rng(seed, Stream.SWARM, int(Stream.INSTANTS)), base.inside or 0.5)
    return {name: updates[name] for name in (*FAULT_KINDS, "correlated_regions", "inside")}


def _switch(rng: np.random.Generator, scale: float) -> float:
    on = rng.random() < 0.5
    return float(min(1.0, rng.random() * 2 * (scale or 0.05))) if on else 0.0


def draw(seed: int, index: int, faults: Any, targets: dict[str, list]) -> AttemptFaults:
    """The faults drawn for attempt ``index``; ``targets``: target kind -> the targets at that
    moment (tasks, region numbers, TaskManager numbers, ``[None]`` for the job)."""
    out = AttemptFaults()
    for stream in dict.fromkeys(k.stream for k in KINDS.values()):
        kinds = [k for k in KINDS.values() if k.stream == stream]
        if not any(getattr(faults, k.name) for k in kinds):
            continue  # nothing to hit: the stream's numbers would move nothing
        width = max(k.column for k in kinds) + 1
        items = targets[kinds[0].target]
        window = max(getattr(faults, k.lasts) if k.lasts else 1 for k in kinds)
        draws = [stream_rng(seed, stream, a).random((len(items), width)) for a in range(index, index - window, -1)
                 if a >= 0]
        for k in sorted(kinds, key=lambda k: k.column):
            span = getattr(faults, k.lasts) if k.lasts else 1
            p = getattr(faults, k.name)
            hit = [t for i, t in enumerate(items) if any(d[i, k.column] < p for d in draws[:span])]
            _put(out, k, [t for t in hit if not any(_has(out, KINDS[y], t) for y in k.yields_to)])
    if faults.inside:
        place(out, stream_rng(seed, Stream.INSTANTS, index), faults.inside, len(targets["task"]))
    return out


def place(out: AttemptFaults, rng: np.random.Generator, inside: float, tasks: int) -> None:
    """Where each region, TaskManager and JobManager fault of ``out`` lands: inside the attempt's
    checkpoint with probability ``inside`` (uniformly after 0 .. ``tasks - 1`` of its responses, while
    the next region fallback, of this checkpoint or a later one, is pending, or while its metadata is
    written), else between checkpoints. One row of draws per hit, in `MOVABLE` order, then target order."""
    hits = [(name, t) for name in MOVABLE for t in _targets(out, KINDS[name])]
    if not hits:
        return
    u = rng.random((len(hits), 3))
    for (name, target), (p, phase, n) in zip(hits, u):
        if p < inside:
            at = INSIDE[min(int(phase * len(INSIDE)), len(INSIDE) - 1)]
            out.inside[(name, target)] = (at, min(int(n * max(tasks, 1)), max(tasks - 1, 0)) if at == "pending" else 0)


def _targets(out: AttemptFaults, k: FaultKind) -> list:
    value = getattr(out, k.lands)
    return ([None] if value else []) if k.target == "job" else sorted(value)


def land(index: int, schedule: list, present: dict[str, Any]) -> AttemptFaults:
    """The schedule's faults of attempt ``index`` (entries with ``kind`` and their target fields).
    A target the job does not have at that moment (after a rescale) is not hit; a task already hit
    by an earlier entry is not hit again; then ``yields_to`` applies as when drawn."""
    out = AttemptFaults()
    for fault in schedule:
        k = KINDS[fault.kind]
        target = _target(fault, k)
        if k.target == "task":
            if target not in present["task"] or any(_has(out, t, target) for t in KINDS.values() if t.target == "task"):
                continue
        elif k.target != "job" and target >= present[k.target]:
            continue
        _put(out, k, [target])
        at = getattr(fault, "at", None)
        if at not in (None, BETWEEN):
            out.inside[(k.name, target)] = (at, getattr(fault, "after_acks", None) or 0)
    for k in KINDS.values():
        for y in k.yields_to:
            value = getattr(out, k.lands)
            setattr(out, k.lands, type(value)(t for t in value if not _has(out, KINDS[y], t)))
        if isinstance(getattr(out, k.lands), list):
            setattr(out, k.lands, sorted(set(getattr(out, k.lands))))
    return out


def schedule_entries(index: int, out: AttemptFaults) -> list[dict]:
    """An attempt's faults as explicit-schedule entries (`regionchaos.scenario.ScheduledFault`)."""
    entries: list[dict] = []
    for name in SCHEDULE_KINDS:
        k = KINDS[name]
        value = getattr(out, k.lands)
        if k.target == "job":
            entries += [{"checkpoint": index, "kind": name, **_at(out, name, None)}] if value else []
            continue
        for target in sorted(value):
            names = TARGET_FIELDS[k.target]
            entries.append({"checkpoint": index, "kind": name,
                            **dict(zip(names, target if k.target == "task" else (target,))), **_at(out, name, target)})
    return entries


def _at(out: AttemptFaults, name: str, target: Any) -> dict:
    """A schedule entry's instant fields: none between checkpoints (the entry as before instants existed)."""
    if (name, target) not in out.inside:
        return {}
    at, n = out.inside[(name, target)]
    return {"at": at, "after_acks": n} if at == "pending" else {"at": at}


def _target(fault: Any, k: FaultKind) -> Any:
    names = TARGET_FIELDS[k.target]
    return tuple(getattr(fault, n) for n in names) if len(names) > 1 else getattr(fault, names[0]) if names else None


def _has(out: AttemptFaults, k: FaultKind, target: Any) -> bool:
    value = getattr(out, k.lands)
    return bool(value) if k.target == "job" else target in value


def _put(out: AttemptFaults, k: FaultKind, hits: list) -> None:
    value = getattr(out, k.lands)
    if isinstance(value, bool):
        setattr(out, k.lands, value or bool(hits))
    elif isinstance(value, dict):
        value.update({t: DECLINED for t in hits if t not in value})
    elif isinstance(value, set):
        value.update(hits)
    else:
        value.extend(hits)
