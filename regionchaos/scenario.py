"""Scenario configuration: what one chaos run emulates.

In:  a YAML file from the catalogue (``scenarios/*.yaml``), a path, or a dict
     (DAG params), plus ``--set KEY=VALUE`` overrides.
Out: a validated, immutable :class:`Scenario`, or a :class:`ScenarioError`
     that names every offending field and the reason.

A file is checked before it is read (`read_scenario_file`: a regular file of at most
`MAX_SCENARIO_BYTES`, UTF-8; a FIFO or /dev/zero never blocks) and parsed by `load_yaml`
(`StrictLoader`: at most `MAX_YAML_DEPTH` levels, no aliases, no duplicate keys); ``--set``
values go through the same loader. A scenario's ``name`` follows the run-id grammar
(`regionchaos.runid`): it starts every default run id.

Checkpoint settings use Flink's configuration key names verbatim (the
``flink`` mapping), so a scenario reads like a ``flink-conf.yaml`` next to the
job topology, the workload, the fault mix and the rescale plan.
Limitation rules of FLIP-600 (PROTOCOL.md section 7) are enforced here:
keyed state or the changelog backend with regional checkpoints is rejected;
BLOCKING / HYBRID edges disable regional checkpoints with a warning; NO_CLAIM
warns.
"""

from __future__ import annotations

import copy
import json
import os
import stat
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (BaseModel, ConfigDict, Field, Strict, ValidationError, create_model, field_validator,
                      model_validator)
from pydantic_core import PydanticCustomError

from .flink.spec import RealFlink
from .faultkinds import INSTANTS, MOVABLE, SCHEDULE_KINDS, SCHEDULE_TARGETS, probability_fields, unlisted_when_off
from .runid import NAME_MAX_CHARS, run_id_problem

CATALOGUE_DIR = Path(__file__).resolve().parent / "catalogue"

# Scalars are strict: YAML and JSON already give real types, so "yes", 1 for a flag or 8.0 for a
# count is a mistake to report, not to coerce (an int is still a valid probability).
Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]
Float = Annotated[float, Strict()]
MAX_TIMEOUT_MS = 7 * 24 * 3600 * 1000  # a week; Flink takes a Duration, nothing sane is longer
MAX_FIRST_CHECKPOINT_ID = 2**62  # a Java long, with room for every checkpoint a run triggers
# Records are counted as offsets in Java longs (int64 columns of the tables): at 10**6 records per
# interval, 101,000 checkpoint attempts (fault phase + heal) and 2,000,000 splits, every offset
# (about 10**11) and every sum of them (about 2 * 10**17) stays far below 2**63.
MAX_RECORDS_PER_INTERVAL = 1_000_000
MAX_SCENARIO_BYTES = 1 << 20  # 1 MiB: the catalogue's files are under 4 KiB; a pinned schedule of
# 100,000 faults is about 5 MiB, but no reproducer needs that many (shrink makes them smaller)
MAX_YAML_DEPTH = 64  # nesting of a scenario file or --set value (the deepest real one is 4)
# the invariants of PROTOCOL.md section 9, by suite name (expectations/suites/*.yaml; a test keeps them equal)
INVARIANTS = ("metadata_well_formed", "decisions_follow_rules", "flip_bounds", "storage_safety",
              "state_consistency", "reachable_global_state", "exactly_once_output", "redistribution",
              "notifications", "final_checkpoint", "inflight_data", "liveness")
BACKENDS = ("emulation", "flink")  # where a run's artifacts come from (validate.BACKENDS: the suites' applies_to)
# a Scenario's fields that only the emulation reads: refused for backend flink
EMULATION_ONLY = ("checkpoints", "first_checkpoint_id", "topology", "workload", "flink", "faults", "timing",
                  "rescale", "compare_regional_off")
_YAML11_BOOLS = {"yes", "no", "on", "off", "y", "n"}  # YAML 1.1 reads these as booleans; we do not

MUTANTS: dict[str, str] = {
    "cleaner-ignores-refs": "the cleaner deletes a subsumed checkpoint's files even if a retained checkpoint references them",
    "regional-final-checkpoint": "the final checkpoint of a bounded job may complete REGIONAL",
    "failed-region-commits": "failed regions are sent notifyCheckpointComplete and commit what N does not cover",
    "no-forced-global": "the consecutive-regional counter never forces a global checkpoint",
    "ignore-failure-ratio": "max-failure-ratio is not enforced",
    "enumerator-no-fallback": "the split enumerator snapshots its live assignment instead of a region-fallback state",
    "split-drops-remainder": "even-split redistribution drops the remainder elements",
    "union-as-split": "union state is redistributed like even-split state",
    "drop-recovered-inflight": "a checkpoint taken during recovery omits recovered in-flight records not yet drained",
    "metadata-before-state": "checkpoint metadata is committed before the state objects it names are uploaded",
    "fallback-to-aborted": "a failed region falls back to its state from the latest attempted (possibly aborted) checkpoint",
    # interleaving mutants: only a fault inside a pending checkpoint, concurrent checkpoints or a late message shows them
    "failover-keeps-pending": "a failover does not abort the pending checkpoints, which complete with the restarted "
                              "tasks' earlier acknowledgements",
    "late-ack-kept": "the JobManager keeps the state of an acknowledgement that arrives after its checkpoint ended "
                     "instead of discarding it",
    "forced-flag-at-trigger": "whether a checkpoint is forced global is fixed when it is triggered, not read when it "
                              "is decided",
    "subsumed-notification-commits": "a pending checkpoint subsumed by a newer one is notified complete, not aborted",
    "notify-before-metadata": "tasks are notified complete when a checkpoint is decided, before its metadata is "
                              "written",
}


class ScenarioError(ValueError):
    """Bad scenario input. ``errors`` is a list of (field, reason)."""

    def __init__(self, errors: list[tuple[str, str]], what: str = "scenario"):
        self.errors = errors
        lines = [f"{field}: {reason}" for field, reason in errors]
        super().__init__(f"invalid {what}:\n  " + "\n  ".join(lines))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


class Partitioning(str, Enum):
    FORWARD = "forward"  # POINTWISE one-to-one: region per subtask index
    REBALANCE = "rebalance"  # ALL_TO_ALL: joins every subtask into one region


class Exchange(str, Enum):
    PIPELINED = "pipelined"
    BLOCKING = "blocking"
    HYBRID = "hybrid"


class Topology(_Strict):
    """The job graph: source vertex -> process vertex (counter, union-state
    epoch, broadcast rules, two-phase-commit sink chained together)."""

    parallelism: Int = Field(4, ge=1, le=8192, description="subtasks per vertex")
    taskmanagers: Int = Field(2, ge=1, le=256, description="subtask s runs on TaskManager s % taskmanagers")
    partitioning: Partitioning = Field(Partitioning.FORWARD, description="source -> process edge")
    exchange: Exchange = Field(Exchange.PIPELINED, description="source -> process result partition type")
    keyed_state: Bool = Field(False, description="the process vertex uses keyed state")
    coordinator_fallback: Bool = Field(
        True, description="the split enumerator implements checkpointCoordinatorForRegionFallback"
    )


class Workload(_Strict):
    splits: Int = Field(8, ge=1, le=1_000_000, description="initial source splits")
    discovered_splits: Int = Field(0, ge=0, le=1_000_000, description="splits discovered while running")
    bounded: Bool = Field(False, description="splits are finite; the job finishes")
    records_per_split: Int = Field(1000, ge=1, le=10_000_000, description="split length when bounded")
    records_per_interval: tuple[Annotated[int, Strict(), Field(ge=0, le=MAX_RECORDS_PER_INTERVAL)],
                                Annotated[int, Strict(), Field(ge=0, le=MAX_RECORDS_PER_INTERVAL)]] = Field(
        (5, 20), description=f"[min, max] records a split advances between checkpoints (each 0 to "
                             f"{MAX_RECORDS_PER_INTERVAL:,}, so no offset overflows a Java long)"
    )
    inflight_max: Int = Field(
        8, ge=0, le=100_000, description="max records in flight per split edge (unaligned)"
    )
    drain_per_interval: Int = Field(
        4, ge=1, le=100_000, description="recovered in-flight records drained per interval"
    )

    @model_validator(mode="after")
    def _interval_range(self) -> Workload:
        lo, hi = self.records_per_interval
        if lo < 0 or hi < lo:
            raise ValueError("records_per_interval: must be [min, max] with 0 <= min <= max")
        return self


class FlinkConfig(_Strict):
    """Checkpoint settings under Flink's key names (PROTOCOL.md section 2)."""

    region_enabled: Bool = Field(False, alias="execution.checkpointing.region.enabled")
    max_failure_ratio: Float = Field(
        0.3, ge=0.0, le=1.0, alias="execution.checkpointing.region.max-failure-ratio",
        description="abort if failed regions / all regions exceeds this (Flink's default 0.3)"
    )
    max_consecutive_failures: Int = Field(
        2, ge=0, le=10_000, alias="execution.checkpointing.region.max-consecutive-failures",
        description="bound on consecutive regional checkpoints (Flink's default 2)"
    )
    timeout_ms: Int = Field(600_000, ge=1, le=MAX_TIMEOUT_MS, alias="execution.checkpointing.timeout")
    region_timeout_ms: Int | None = Field(
        None, ge=1, le=MAX_TIMEOUT_MS, alias="execution.checkpointing.region.timeout",
        description=("not a Flink key: the dev list's per-region timeout, under semantics flip only (FLIP-600's "
                     "docs: 'no per-region timeout configuration is introduced')"))
    tolerable_failed_checkpoints: Int | None = Field(
        0, ge=0, le=10_000, alias="execution.checkpointing.tolerable-failed-checkpoints",
        description=(
            "consecutive failed checkpoints Flink's CheckpointFailureManager tolerates before it fails "
            "the job (a global failover); Flink's default 0. null (not a Flink value): checkpoint "
            "failures never fail the job"
        ),
    )
    interval_ms: Int = Field(
        60_000, ge=1, le=MAX_TIMEOUT_MS, alias="execution.checkpointing.interval",
        description=("ms between periodic checkpoint triggers (Flink has no default: checkpointing is off until "
                     "it is set; the emulation's default is a minute)"))
    min_pause_ms: Int = Field(
        0, ge=0, le=MAX_TIMEOUT_MS, alias="execution.checkpointing.min-pause",
        description="ms from a checkpoint's end to the next trigger (Flink's default 0)")
    max_concurrent: Int = Field(
        1, ge=1, le=100, alias="execution.checkpointing.max-concurrent-checkpoints",
        description="checkpoints that may be pending at once (Flink's default 1)")
    unaligned: Bool = Field(False, alias="execution.checkpointing.unaligned.enabled")
    num_retained: Int = Field(1, ge=1, le=1000, alias="state.checkpoints.num-retained")
    backend_type: Literal["hashmap", "rocksdb"] = Field("hashmap", alias="state.backend.type")
    changelog: Bool = Field(False, alias="state.backend.changelog.enabled")
    file_merging: Bool = Field(True, alias="execution.checkpointing.file-merging.enabled")
    restore_mode: Literal["CLAIM", "NO_CLAIM"] = Field("CLAIM", alias="execution.state-recovery.claim-mode")
    forced_global_policy: Literal["reset-counter", "keep-forcing"] = Field(
        "reset-counter",
        alias="execution.checkpointing.region.forced-global-failure",
        description=(
            "not a Flink key: what a failed forced-global checkpoint does. 'reset-counter' is "
            "the FLIP's tier 2; 'keep-forcing' is the alternative raised on the dev list "
            "(the failed region may not fail the checkpoint again)"
        ),
    )
    semantics: Literal["flip", "pr"] = Field(
        "flip",
        alias="execution.checkpointing.region.semantics",
        description=(
            "not a Flink key: 'flip' decides as the FLIP-600 proposal; 'pr' as its implementation "
            "in apache/flink (RegionalCheckpointHandler): see FINDINGS.md for the differences"
        ),
    )


Delay = tuple[Annotated[int, Strict(), Field(ge=0, le=MAX_TIMEOUT_MS)],
              Annotated[int, Strict(), Field(ge=0, le=MAX_TIMEOUT_MS)]]


class Timing(_Strict):
    """How long the control plane's asynchronous steps take, in emulated ms: ``[min, max]``, each drawn
    uniformly from the seed (not Flink keys: the emulated cluster's speed). ``[0, 0]``, the default:
    the step is immediate, as one checkpoint at a time with faults between checkpoints has always been."""

    fallback_ms: Delay = Field((0, 0), description=(
        "a REGIONAL decision to its coordinators' region-fallback state (the holder's main-thread hop and "
        "the coordinator's own thread, OperatorCoordinatorHolder.checkpointCoordinatorForRegionFallback)"))
    metadata_ms: Delay = Field((0, 0), description="a decided checkpoint's _metadata write (its finalization)")
    notify_ms: Delay = Field((0, 0), description="a notification's way from the JobManager to a task")

    @model_validator(mode="after")
    def _ranges(self) -> Timing:
        for name in ("fallback_ms", "metadata_ms", "notify_ms"):
            lo, hi = getattr(self, name)
            if hi < lo:
                raise ValueError(f"{name}: must be [min, max] with min <= max")
        return self


def not_flink_keys() -> tuple[str, ...]:
    """The ``flink`` keys Flink does not have (the dev list's and the model's options): each says so in its
    description. `regionchaos scenarios`, the docs and the trigger form mark them."""
    return tuple(f.alias for f in FlinkConfig.model_fields.values()
                 if f.alias and (f.description or "").startswith("not a Flink key"))


def flink_settings(scenario: Scenario) -> list[tuple[str, Any, bool]]:
    """(key, value, is a Flink key) of every ``flink`` key the scenario sets, in its order."""
    marked = set(not_flink_keys())
    values = scenario.flink.model_dump(mode="json", by_alias=True)
    return [(f.alias, values[f.alias], f.alias not in marked)
            for name, f in FlinkConfig.model_fields.items() if name in scenario.flink.model_fields_set]


class ScheduledFault(_Strict):
    """One fault of an explicit schedule: at fault-phase checkpoint attempt ``checkpoint``
    (0-based), ``kind`` hits its target (`regionchaos.faultkinds.SCHEDULE_TARGETS`): a task
    (``vertex`` + ``subtask``), a ``region``, a ``taskmanager``, or nothing (the job)."""

    checkpoint: Int = Field(..., ge=0, description="fault-phase checkpoint attempt (0-based)")
    kind: Literal[SCHEDULE_KINDS]  # type: ignore[valid-type] - the registry's kinds, by target
    vertex: Literal["source", "process"] | None = None
    subtask: Int | None = Field(None, ge=0)
    region: Int | None = Field(None, ge=0)
    taskmanager: Int | None = Field(None, ge=0)
    at: Literal[INSTANTS] | None = Field(  # type: ignore[valid-type]
        None, description="where a region, TaskManager or JobManager fault lands: between checkpoints (the "
                          "default), or inside the attempt's checkpoint: pending (after after_acks of its "
                          "responses), fallback (while the next region fallback, of this checkpoint or a later one, "
                          "is pending), finalize (its metadata being written)")
    after_acks: Int | None = Field(None, ge=0, description="with at: pending, the responses that arrive before it")

    @model_validator(mode="after")
    def _target(self) -> ScheduledFault:
        needed = SCHEDULE_TARGETS[self.kind]
        missing = [f for f in needed if getattr(self, f) is None]
        extra = [f for f in ("vertex", "subtask", "region", "taskmanager") if f not in needed and getattr(self, f) is not None]
        names = f"it names {' and '.join(needed)}" if needed else "it names no target"
        problems = [f"{f}: missing, a {self.kind} fault names {' and '.join(needed)}" for f in missing]
        problems += [f"{f}: a {self.kind} fault takes no {f} ({names})" for f in extra]
        if self.at is not None and self.kind not in MOVABLE:
            problems.append(f"at: a {self.kind} fault lands where its kind does (only {', '.join(MOVABLE)} take at)")
        if self.after_acks is not None and self.at != "pending":
            problems.append("after_acks: only a fault at: pending counts the responses before it")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def schedule_dicts(entries: list[dict] | None) -> list[dict] | None:
    """Dumped schedule entries with their target fields only (None: no schedule)."""
    return None if entries is None else [{k: v for k, v in e.items() if v is not None} for e in entries]


# one probability field per fault kind, and each kind's own parameters (regionchaos.faultkinds)
FaultProbabilities = create_model("FaultProbabilities", __base__=_Strict, **probability_fields(Float))


class Faults(FaultProbabilities):  # type: ignore[misc, valid-type]
    """Fault mix: probabilities per checkpoint (per subtask, region, TM or job), one per kind of
    `regionchaos.faultkinds`, or an explicit ``schedule`` of faults that replaces the draws (the
    probabilities then only document the mix the schedule came from)."""

    correlated_regions: Int = Field(
        1, ge=1, le=8192, description="a declining region drags this many neighbours with it"
    )
    heal_checkpoints: Int = Field(3, ge=1, le=1000, description="fault-free checkpoints at the end")
    inside: Float = Field(0.0, ge=0.0, le=1.0, description=(
        "the chance that a drawn region, TaskManager or JobManager fault lands inside its attempt's pending "
        "checkpoint (after some of its responses, while its region fallback is pending, or while its metadata "
        "is written) instead of between checkpoints"))
    swarm: Bool = Field(False, description="the seed also draws which fault kinds are on, and the job's shape")
    swarm_shaped: Bool = Field(False, description="the job's shape was drawn already (regionchaos.shape): the "
                                                  "scenario as a swarm seed ran it")
    schedule: tuple[ScheduledFault, ...] | None = Field(
        None, description="an explicit fault schedule: when set, no fault is drawn (the seed still draws "
                          "record rates and upload times)")


class RescaleEvent(_Strict):
    after_checkpoint: Int = Field(..., ge=0, description="index (0-based) of the checkpoint after which to rescale")
    parallelism: Int = Field(..., ge=1, le=8192)


class Expect(_Strict):
    verdict: Literal["valid", "invalid"] = "valid"
    invariant: str | None = None
    why: str | None = None


class Scenario(_Strict):
    name: str = Field(..., min_length=1)
    description: str = ""
    seed: Int = Field(1, ge=0, le=2**63 - 1)
    checkpoints: Int = Field(10, ge=1, le=100_000, description="checkpoints triggered in the fault phase")
    first_checkpoint_id: Int = Field(1, ge=1, le=MAX_FIRST_CHECKPOINT_ID,
                                     description="the first checkpoint id (a Java long, with room to count up)")
    topology: Topology = Topology()
    workload: Workload = Workload()
    flink: FlinkConfig = FlinkConfig()
    faults: Faults = Faults()
    timing: Timing = Timing()
    rescale: tuple[RescaleEvent, ...] = ()
    expect: Expect = Expect()
    compare_regional_off: Bool = Field(
        False, description="A/B: also run the same seed with regional checkpoints off and compare"
    )
    backend: Literal[BACKENDS] = Field(  # type: ignore[valid-type]
        "emulation", description="where the run's artifacts come from: the emulated protocol, or a real Flink "
                                 "cluster on loopback (regionchaos.flink; the job and its faults in real_flink)")
    real_flink: RealFlink | None = Field(
        None, description="backend flink only: the real job's shape and faults (regionchaos.flink.spec.RealFlink)")
    warnings_: tuple[str, ...] = Field((), alias="warnings", exclude=True)

    @field_validator("name")
    @classmethod
    def _name_is_an_id(cls, name: str) -> str:
        """The name starts every default run id, and pin / shrink name files after it: one
        path segment of safe characters (`regionchaos.runid`)."""
        problem = run_id_problem(name, NAME_MAX_CHARS)
        if problem is not None:
            raise PydanticCustomError("scenario_name", "{problem}", {"problem": problem})
        return name

    @model_validator(mode="after")
    def _limitations(self) -> Scenario:
        errors: list[str] = self._backend_errors()
        if self.flink.region_enabled and self.topology.keyed_state:
            errors.append(
                "topology.keyed_state: keyed state is not supported with regional checkpoints "
                "(execution.checkpointing.region.enabled=true); the job is rejected at submission"
            )
        if self.flink.region_enabled and self.flink.changelog:
            errors.append(
                "flink.state.backend.changelog.enabled: the changelog state backend is not supported "
                "with regional checkpoints; the job is rejected at submission"
            )
        if self.flink.semantics == "pr" and self.flink.forced_global_policy == "keep-forcing":
            # the PR's handler has one tier 2 (RegionalCheckpointHandler: its forced-global abort resets the
            # counter and the force flag, protocol.rules.after_abort); the run would follow it while the
            # checks expect the key's 'keep-forcing', a false alarm on counter_follows_decisions
            errors.append(
                "flink.execution.checkpointing.region.forced-global-failure: 'keep-forcing' has no effect under "
                "execution.checkpointing.region.semantics=pr (the PR's handler always resets the counter and "
                "the force flag when it aborts a forced checkpoint); use it with semantics flip, or leave it unset"
            )
        if self.flink.semantics == "pr" and self.flink.region_timeout_ms is not None:
            errors.append(
                "flink.execution.checkpointing.region.timeout: not a Flink key, and the PR has no per-region timeout "
                "(FLIP-600's docs: 'no per-region timeout configuration is introduced', the checkpoint timeout "
                "applies to every region): under execution.checkpointing.region.semantics=pr it would be ignored, "
                "so it is refused. Use it with semantics flip, or leave it unset"
            )
        if self.flink.region_timeout_ms is not None and self.flink.region_timeout_ms > self.flink.timeout_ms:
            errors.append(
                "flink.execution.checkpointing.region.timeout: must not exceed execution.checkpointing.timeout"
            )
        last = -1
        for i, event in enumerate(self.rescale):
            if event.after_checkpoint <= last:
                errors.append(f"rescale.{i}.after_checkpoint: rescale events must be in increasing order")
            if event.after_checkpoint >= self.checkpoints:
                errors.append(
                    f"rescale.{i}.after_checkpoint: {event.after_checkpoint} is beyond the "
                    f"{self.checkpoints} checkpoints of the fault phase"
                )
            last = event.after_checkpoint
        if self.expect.verdict == "invalid" and not self.expect.invariant:
            errors.append("expect.invariant: a scenario expected to be invalid must name the invariant it breaks")
        if self.expect.invariant is not None and self.expect.invariant not in INVARIANTS:
            errors.append(f"expect.invariant: {self.expect.invariant!r} is not an invariant; "
                          f"known: {', '.join(INVARIANTS)}")
        p = self.topology.parallelism
        if self.topology.taskmanagers > p:
            errors.append(f"topology.taskmanagers: {self.topology.taskmanagers} TaskManagers for {p} subtasks, "
                          "at most one TaskManager per subtask")
        regions = p if self.topology.partitioning == Partitioning.FORWARD else 1
        if self.faults.correlated_regions > regions:
            errors.append(f"faults.correlated_regions: {self.faults.correlated_regions} is more than the "
                          f"{regions} pipeline region(s) of the job")
        errors += self._schedule_errors()
        if errors:
            raise ValueError("; ".join(errors))
        return self

    def _backend_errors(self) -> list[str]:
        """Fields given that the scenario's backend never reads: the emulation's for ``backend: flink``
        (named down to the key given), ``real_flink`` for the emulation."""
        if self.backend == "emulation":
            return ["real_flink: only a real Flink run reads it, and this scenario's backend is emulation "
                    "(set backend: flink)"] if "real_flink" in self.model_fields_set else []
        errors = []
        for name in sorted(set(EMULATION_ONLY) & self.model_fields_set):
            value = getattr(self, name)
            keys = ([f"{name}.{value.model_fields[f].alias or f}" for f in sorted(value.model_fields_set)]
                    if isinstance(value, BaseModel) and value.model_fields_set else [name])
            errors += [f"{key}: only the emulation reads it (backend flink runs a real cluster, whose job and "
                       "faults are the fields of real_flink)" for key in keys]
        return errors

    @property
    def flink_run_spec(self):
        """backend flink: the real run this scenario asks for (`regionchaos.flink.spec.FlinkRunSpec`)."""
        return (self.real_flink or RealFlink()).with_seed(self.seed)

    def _schedule_errors(self) -> list[str]:
        """A pinned schedule must fit the job: its checkpoints within the fault phase, its
        subtasks, regions and TaskManagers within the largest the job ever has."""
        if self.faults.schedule is None:
            return []
        errors = []
        if self.faults.swarm:
            errors.append("faults.schedule: a pinned schedule cannot be combined with faults.swarm (which draws one)")
        p = max([self.topology.parallelism] + [e.parallelism for e in self.rescale])
        regions = p if self.topology.partitioning == Partitioning.FORWARD else 1
        limits = {"subtask": (p, "subtasks"), "region": (regions, "pipeline regions"),
                  "taskmanager": (self.topology.taskmanagers, "TaskManagers")}
        for i, fault in enumerate(self.faults.schedule):
            if fault.checkpoint >= self.checkpoints:
                errors.append(f"faults.schedule.{i}.checkpoint: {fault.checkpoint} is beyond the "
                              f"{self.checkpoints} checkpoints of the fault phase")
            for name, (limit, what) in limits.items():
                value = getattr(fault, name)
                if value is not None and value >= limit:
                    errors.append(f"faults.schedule.{i}.{name}: {value} is out of range, the job has at most "
                                  f"{limit} {what} (0 to {limit - 1})")
        return errors

    # -- derived views -------------------------------------------------------

    @property
    def region_enabled_effective(self) -> bool:
        """Regional checkpoints as they run: BLOCKING/HYBRID edges disable them."""
        return self.flink.region_enabled and self.topology.exchange == Exchange.PIPELINED

    @property
    def warnings(self) -> list[str]:
        out: list[str] = []
        if self.flink.region_enabled and self.topology.exchange != Exchange.PIPELINED:
            out.append(
                f"topology.exchange={self.topology.exchange.value}: BLOCKING/HYBRID edges between "
                "regions; regional checkpoints are disabled at runtime, checkpoints are global only"
            )
        if self.flink.region_enabled and self.flink.restore_mode == "NO_CLAIM":
            out.append(
                "execution.state-recovery.claim-mode=NO_CLAIM: after restoring, only a later global "
                "checkpoint frees the restored snapshot"
            )
        if self.flink.region_enabled and self.topology.partitioning == Partitioning.REBALANCE:
            out.append(
                "topology.partitioning=rebalance: an ALL_TO_ALL pipelined edge joins every subtask "
                "into one pipeline region; regional checkpoints cannot complete"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        if self.backend != "emulation":  # the fields it reads (the emulation's would be refused by from_dict)
            out = self.model_dump(mode="json", by_alias=True, include={"name", "description", "seed", "expect"})
            real = (self.real_flink or RealFlink()).model_dump(mode="json")
            return {**out, "backend": self.backend, "real_flink": real}
        # an emulated scenario's dict (and so its default run id) as before backends existed
        out = self.model_dump(mode="json", by_alias=True, exclude={"warnings_", "backend", "real_flink"})
        out["faults"] = unlisted_when_off(out["faults"])  # a kind added later, off: the dict as before it
        if self.faults.schedule is None:  # a drawn schedule: the dict (and the run id) as before schedules existed
            del out["faults"]["schedule"]
        else:
            out["faults"]["schedule"] = schedule_dicts(out["faults"]["schedule"])
        return out


# -- loading ------------------------------------------------------------------

_SECTIONS = {"topology", "workload", "flink", "faults", "timing", "expect", "real_flink"}


def _errors_from(exc: ValidationError) -> list[tuple[str, str]]:
    out = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (not a field of this section)"
        if msg.startswith("Value error, "):
            # model-level validators name their fields inside the message
            for part in msg[len("Value error, ") :].split("; "):
                field, _, reason = part.partition(": ")
                out.append((".".join(loc + [field]) if loc else field, reason or part))
            continue
        out.append((".".join(loc) or "scenario", msg if err["type"] == "extra_forbidden" else pydantic_sentence(err)))
    return out


_BOUNDS = {"ge": "at least", "le": "at most", "gt": "more than", "lt": "less than"}


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str) \
        if isinstance(value, (bool, type(None), int, float, list, dict)) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def pydantic_sentence(err: dict[str, Any]) -> str:
    """One pydantic error as a sentence about the value, as a person reads it: "must be at least
    1, got 0", "must be a whole number, got 'yes'", never "Input should be greater than or equal
    to 1". The field is named by the caller (the error's location)."""
    ctx, kind, value = err.get("ctx") or {}, err.get("type", ""), err.get("input")
    shown = "input" in err and (not isinstance(value, (dict, list, tuple)) or len(value) <= 5)
    got = f", got {_shown(value)}" if shown else ""
    for key, word in _BOUNDS.items():
        if key in ctx and kind.startswith(("greater_than", "less_than")):
            return f"must be {word} {ctx[key]}{got}"
    if kind == "missing":
        return "is required"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number{got}"
    if kind in ("float_type", "float_parsing"):
        return f"must be a number{got}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false{got}"
    if kind in ("tuple_type", "list_type"):
        return f"must be a list{got}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"must be a mapping of fields{got}"
    if kind in ("string_type",):
        return f"must be text{got}"
    msg = str(err.get("msg", ""))
    if msg.startswith("Input should be "):  # enums, literals and the rest: "must be 'forward' or ...", got ...
        return "must be " + msg[len("Input should be "):] + got
    return msg + got if got and "got" not in msg else msg


class _YamlRefused(yaml.YAMLError):
    """A scenario's YAML is well formed but refused (too deep, an alias, a duplicate key)."""

    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field, self.reason = field, reason


class StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses what a scenario never needs and an attacker uses: nesting
    deeper than `MAX_YAML_DEPTH` (the composer recurses: 5,000 levels exhaust Python's stack)
    and aliases (``*a``: a few lines can expand to billions of nodes). Duplicate keys are found
    by `load_yaml` on the composed tree, with their path."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _YamlRefused("", f"YAML aliases (*{event.anchor}, line {event.start_mark.line + 1}) are not "
                                   "supported in a scenario; write the value out")
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark
                raise _YamlRefused("", f"nested deeper than {MAX_YAML_DEPTH} levels (line {mark.line + 1})")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _duplicate_keys(root: yaml.Node) -> list[tuple[str, str]]:
    """(dotted path, reason) of every key that appears twice in one mapping."""
    out, stack = [], [(root, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                if name is not None and name != "<<":
                    line = key.start_mark.line + 1
                    if name in seen:
                        out.append((path + name, f"duplicate key (lines {seen[name]} and {line}); "
                                                 "each key may appear once"))
                    else:
                        seen[name] = line
                stack.append((value, f"{path}{name if name is not None else '?'}."))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((value, f"{path}{i}.") for i, value in enumerate(node.value))
    return sorted(out)


def load_yaml(text: str, field: str = "scenario", source: str | None = None) -> Any:
    """``text`` as YAML through `StrictLoader`, duplicate keys refused: the document, or a
    ScenarioError naming ``field`` (and, for a duplicate, the key's path under it)."""
    where = f"{source}" if source else "the value"
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        dups = _duplicate_keys(node)
        if dups:
            prefix = "" if field == "scenario" else f"{field}."
            raise ScenarioError([(prefix + path, reason) for path, reason in dups])
        return loader.construct_document(node)
    except _YamlRefused as exc:
        raise ScenarioError([(field, f"{where} is refused: {exc.reason}")]) from None
    except RecursionError:
        raise ScenarioError([(field, f"{where} is nested too deeply to read")]) from None
    finally:
        loader.dispose()


def parse_value(text: str, key: str = "--set") -> Any:
    """Parse a ``--set`` value with YAML rules (``true``, ``0.5``, ``[1, 2]``); text YAML
    cannot read stays text. Too deep, aliased or duplicate-keyed values: a ScenarioError
    naming ``key``."""
    if text.strip().lower() in _YAML11_BOOLS:
        return text
    try:
        return load_yaml(text, field=key)
    except yaml.YAMLError:
        return text


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Apply ``KEY=VALUE`` overrides. A key whose first segment is a section
    (``faults.decline``) is a path into it; any other dotted key is a Flink
    configuration key (``execution.checkpointing.region.enabled``)."""
    data = copy.deepcopy(data)
    for key, value in overrides.items():
        head, _, rest = key.partition(".")
        if head in _SECTIONS and rest:
            if head == "flink":
                data.setdefault("flink", {})[rest] = value
                continue
            node = data.setdefault(head, {})
            parts = rest.split(".")
            for i, part in enumerate(parts[:-1]):
                node = node.setdefault(part, {}) if isinstance(node, dict) else None
                if not isinstance(node, dict):
                    raise ScenarioError([(key, f"{head}.{'.'.join(parts[:i + 1])} is not a section, "
                                               "it has no field " + repr(parts[i + 1]))])
            if not isinstance(node, dict):
                raise ScenarioError([(key, f"{head} is not a section")])
            node[parts[-1]] = value
        elif "." in key:
            data.setdefault("flink", {})[key] = value
        else:
            data[key] = value
    return data


def from_dict(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError([("scenario", "must be a mapping of fields")])
    if overrides:
        data = apply_overrides(data, overrides)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(_errors_from(exc)) from None


def catalogue(backend: str | None = None) -> dict[str, Path]:
    """Scenario name -> YAML file, for every scenario in the catalogue (``backend``: only those whose
    ``backend`` is this one: what emulates every scenario asks for ``"emulation"``)."""
    entries = {p.stem: p for p in sorted(CATALOGUE_DIR.glob("*.yaml"))}
    if backend is None:
        return entries
    return {name: path for name, path in entries.items() if backend_of(path) == backend}


def backend_of(path: Path) -> str:
    """A scenario file's ``backend`` (read, not validated: `load` validates)."""
    data = load_yaml(read_scenario_file(path), source=str(path))
    return data.get("backend", "emulation") if isinstance(data, dict) else "emulation"


def require_emulation(scenario: Scenario, command: str) -> Scenario:
    """``scenario`` if the emulation runs it; a ScenarioError naming ``scenario`` (exit 2) for a real-Flink
    one: ``command`` (swarm, shrink, pin, ...) emulates the protocol and has nothing to emulate."""
    if scenario.backend != "emulation":
        raise ScenarioError([("scenario", f"{scenario.name} runs on real Flink (backend: {scenario.backend}), and "
                                          f"{command} only emulates the protocol: run it with `regionchaos run "
                                          f"--scenario {scenario.name}`")], what="input")
    return scenario


def read_scenario_file(path: Path | str) -> str:
    """The text of a scenario file, checked before it is read: a regular file (a directory, a
    FIFO or a device such as /dev/zero is refused without blocking or reading), at most
    `MAX_SCENARIO_BYTES`, UTF-8. Anything else is a ScenarioError naming ``scenario``."""
    try:  # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ScenarioError([("scenario", f"cannot open {path}: {exc.strerror or exc}")]) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise ScenarioError([("scenario", f"{path} is {kind}, not a regular file")])
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(MAX_SCENARIO_BYTES + 1)
        except OSError as exc:
            raise ScenarioError([("scenario", f"cannot read {path}: {exc.strerror or exc}")]) from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError([("scenario", f"{path} is larger than {MAX_SCENARIO_BYTES:,} bytes (1 MiB), the "
                                          "largest scenario file read")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError([("scenario", f"{path} is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})")]) \
            from None


def load(name_or_path: str, overrides: dict[str, Any] | None = None, seed: int | None = None) -> Scenario:
    """Load a catalogue scenario by name, or a YAML file by path."""
    path = Path(name_or_path)
    entries = catalogue()
    if name_or_path in entries:
        path = entries[name_or_path]
    elif not (path.suffix in (".yaml", ".yml") and path.exists()):
        known = ", ".join(entries)
        raise ScenarioError([("scenario", f"unknown scenario {name_or_path!r}; known: {known}")])
    text = read_scenario_file(path)
    try:
        data = load_yaml(text, source=str(path))
    except yaml.YAMLError as exc:
        raise ScenarioError([("scenario", f"{path} is not valid YAML: {exc}")]) from None
    if seed is not None:
        overrides = {**(overrides or {}), "seed": seed}
    return from_dict(data, overrides)


def check_mutant(name: str | None) -> str | None:
    if name in (None, "", "none"):
        return None
    if name not in MUTANTS:
        raise ScenarioError([("mutant", f"unknown mutant {name!r}; known: {', '.join(MUTANTS)}")])
    return name
