"""The control plane of a run: the job, driven through the CheckpointCoordinator.

In:  a Scenario, an optional mutant, and a Persistence (where checkpoint
     metadata, state rows, sink commits and history go: `regionchaos.dataplane.S3Persistence`,
     on S3 in deep runs, on an in-memory `ObjectStore` in the swarm's fast path and the tests).
Out: a :class:`RunResult` with the history (one event per protocol step) and
     counters. Everything is deterministic from the scenario's seed.

The rooms around it: the job itself (source, operators, two-phase-commit sink) is
`regionchaos.workload.dataflow`; failures and the restarts they cause (region and global failovers,
rescales, JobManager lives) are `regionchaos.failover`; the faults are drawn by `regionchaos.nemesis`;
events are `regionchaos.history`'s; each subtask's response to a trigger and to a notification is
`regionchaos.task_side`'s. This module runs the attempts: triggers, the coordinator's decisions and
notifications, and what goes to storage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import history
from .failover import Failover
from .history import Kind
from .nemesis import AttemptFaults, Nemesis, Stream, stream_rng
from .protocol.checkpoint import CompletedCheckpoint
from .protocol.coordinator import (
    ABORTED,
    CheckpointCoordinator,
    CheckpointOutcome,
    CoordinatorSettings,
)
from .protocol.enumerator import SplitEnumerator
from .protocol.store import CompletedCheckpointStore
from .protocol.topology import ALL_TO_ALL, POINTWISE, JobEdge, JobGraph, JobVertex
from .scenario import Partitioning, Scenario
from .task_side import notify, respond
from .workload.dataflow import OPERATOR_MODES, PROCESS, PROCESS_OPERATORS, SOURCE, SOURCE_OPERATORS, Dataflow

MAX_EXTRA_ATTEMPTS = 2000  # bounded jobs: attempts after the heal phase before liveness gives up


def job_graph(scenario: Scenario, parallelism: int | None = None) -> JobGraph:
    p = parallelism or scenario.topology.parallelism
    t = scenario.topology
    edge = JobEdge(
        SOURCE,
        PROCESS,
        POINTWISE if t.partitioning == Partitioning.FORWARD else ALL_TO_ALL,
        pipelined=t.exchange.value == "pipelined",
    )
    return JobGraph((JobVertex(SOURCE, p, SOURCE_OPERATORS), JobVertex(PROCESS, p, PROCESS_OPERATORS)), (edge,))


class Persistence(Protocol):
    def flush(self, batch: "Batch") -> None:
        """Write a batch: state objects, then (in order) metadata commits,
        cleaner deletes and sink commits, then the history and the HA counter."""

    def recover(self) -> tuple[list[CompletedCheckpoint], int]:
        """Completed checkpoints whose metadata is on storage, and the next checkpoint id."""

    def delete_orphans(self, live: set[str]) -> list[str]:
        """Delete state objects no retained checkpoint references (a new JobManager's clean-up)."""


@dataclass
class Batch:
    """What the control plane hands to storage between two JobManager lives."""

    index: int
    state_rows: list[tuple] = field(default_factory=list)  # (checkpoint, tm, object key, compact row): one per
    # (checkpoint, task, operator, split), the compact rows of `regionchaos.dataplane`
    steps: list[dict] = field(default_factory=list)  # ordered: metadata commits, deletes, sink commits
    events: list[dict] = field(default_factory=list)
    crash_before_metadata: int | None = None  # checkpoint whose metadata is never written
    put_failures: set[tuple[int, int]] = field(default_factory=set)  # (checkpoint, tm)
    slow_puts: set[tuple[int, int]] = field(default_factory=set)
    counter: int = 0  # next checkpoint id (HA checkpoint id counter)


@dataclass
class RunResult:
    events: list[dict]
    stats: dict[str, Any]
    drawn: dict[str, Any]
    schedule: list[dict] | None = None  # the faults handed out, as explicit-schedule entries (if recorded)


class Emulation:
    def __init__(self, scenario: Scenario, persistence: Persistence, *, mutant: str | None = None,
                 progress=None):
        self.sc = scenario
        self.mutant = mutant
        self.persistence = persistence
        self.progress = progress
        self.nemesis = Nemesis(scenario)
        self.tms = scenario.topology.taskmanagers
        self.parallelism = scenario.topology.parallelism
        self.settings = CoordinatorSettings(
            region_enabled=scenario.region_enabled_effective,
            max_failure_ratio=scenario.flink.max_failure_ratio,
            max_consecutive_failures=scenario.flink.max_consecutive_failures,
            forced_global_policy=scenario.flink.forced_global_policy,
            semantics=scenario.flink.semantics,
            timeout_ms=scenario.flink.timeout_ms,
            region_timeout_ms=scenario.flink.region_timeout_ms,
            tolerable_failed_checkpoints=scenario.flink.tolerable_failed_checkpoints,
        )
        w = scenario.workload
        self.events: list[dict] = []
        self.batch = Batch(index=0)
        self.stats = {"triggered": 0, "global": 0, "regional": 0, "aborted": 0, "region_failovers": 0,
                      "global_failovers": 0, "jm_failovers": 0, "rescales": 0, "restores": 0,
                      "records_replayed": 0, "records_committed": 0, "finished": False}
        self.flow = Dataflow(scenario, self.stats, self.log, mutant)
        self.failover = Failover(self)
        self.attempt = 0
        self.restore_seq = 0
        self.discovery_plan = self._discovery_plan()
        self.coordinator = self.new_coordinator(CompletedCheckpointStore(scenario.flink.num_retained, mutant=mutant,
                                                                          semantics=scenario.flink.semantics),
                                                 scenario.first_checkpoint_id)
        self.coordinator.enumerator.add_splits(range(w.splits))
        self.assign_splits()

    # -- set-up ------------------------------------------------------------------

    def new_coordinator(self, store: CompletedCheckpointStore, next_id: int) -> CheckpointCoordinator:
        enumerator = SplitEnumerator(self.parallelism, supports_region_fallback=self.sc.topology.coordinator_fallback,
                                     mutant=self.mutant)
        return CheckpointCoordinator(job_graph(self.sc, self.parallelism), self.settings, store,
                                     operator_modes=OPERATOR_MODES, enumerator=enumerator,
                                     next_checkpoint_id=next_id, mutant=self.mutant)

    def _discovery_plan(self) -> dict[int, list[int]]:
        """Attempt index -> splits discovered before it (partition discovery)."""
        w = self.sc.workload
        plan: dict[int, list[int]] = {}
        if w.discovered_splits:
            draw = stream_rng(self.sc.seed, Stream.DISCOVERY)
            at = draw.integers(1, max(2, self.sc.checkpoints), size=w.discovered_splits)
            for i, a in enumerate(sorted(int(x) for x in at)):
                plan.setdefault(a, []).append(w.splits + i)
        return plan

    def log(self, kind: Kind, **fields) -> dict:
        event = history.event(len(self.events), self.attempt, kind, **fields)
        self.events.append(event)
        self.batch.events.append(event)
        return event

    def assign_splits(self) -> None:
        enum = self.coordinator.enumerator
        running = [sub for sub in range(self.parallelism) if (SOURCE, sub) not in self.coordinator.finished]
        for sub, new in enum.assign_pending(running).items():
            for split in new:
                self.flow.assign(sub, split)
                self.log(Kind.SPLIT_ASSIGNED, split=split, subtask=sub)

    # -- running --------------------------------------------------------------------

    def run(self) -> RunResult:
        started = time.perf_counter()
        self.log(Kind.RUN_STARTED, scenario=self.sc.name, seed=self.sc.seed, mutant=self.mutant,
                 drawn=self.nemesis.drawn_parameters(), parallelism=self.parallelism,
                 regions=self.coordinator.num_regions, region_enabled=self.settings.region_enabled)
        fault_attempts, heal = self.sc.checkpoints, self.sc.faults.heal_checkpoints
        limit = fault_attempts + heal + (MAX_EXTRA_ATTEMPTS if self.flow.length else 0)
        rescales = {e.after_checkpoint: e.parallelism for e in self.sc.rescale}
        while self.attempt < limit and not self.stats["finished"]:
            healing = self.attempt >= fault_attempts
            if self.attempt == fault_attempts:
                self.log(Kind.HEAL_STARTED)
            if self.attempt in self.discovery_plan:
                self.coordinator.enumerator.add_splits(self.discovery_plan[self.attempt])
                self.log(Kind.SPLITS_DISCOVERED, splits=self.discovery_plan[self.attempt])
            self.assign_splits()
            self.flow.advance(self.attempt)
            tasks = self.coordinator.graph.tasks()
            faults = self.nemesis.attempt(self.attempt, tasks, self.coordinator.regions,
                                          self.coordinator.num_regions, self.tms, healing)
            if self.failover.crash(faults):  # failures in the middle of the interval: restore, replay
                self.assign_splits()
                self.flow.advance(self.attempt)
            self._check_end_of_input()
            outcome = self._checkpoint(faults)
            if self.progress:
                self.progress(self.attempt, limit, outcome)
            if outcome is None:  # JobManager crashed before the metadata commit
                self.failover.jobmanager_failover("crash between state upload and metadata commit")
            else:
                if outcome.job_failed:  # CheckpointFailureManager: tolerable-failed-checkpoints exceeded
                    self.failover.global_restore(None, "checkpoint tolerable failure threshold exceeded")
                if self.attempt in rescales and not self.stats["finished"]:
                    self.failover.rescale(rescales[self.attempt])
            self.attempt += 1
            if healing and not self.flow.length and self.attempt >= fault_attempts + heal:
                break
        if self.flow.length and not self.stats["finished"]:
            self.log(Kind.JOB_NOT_FINISHED, attempts=self.attempt)
        self.stats["records_in"] = self.flow.records_in()
        self.log(Kind.RUN_FINISHED, finished=self.stats["finished"])
        self.flush_batch()
        self.stats["wall_seconds_control_plane"] = round(time.perf_counter() - started, 3)
        return RunResult(self.events, self.stats, self.nemesis.drawn_parameters(),
                         list(self.nemesis.recorded) if self.nemesis.recording else None)

    def _no_more_splits(self) -> bool:
        """The enumerator has signalled NoMoreSplits: nothing left to discover or assign."""
        discovery_left = any(a >= self.attempt for a in self.discovery_plan)
        return not discovery_left and not self.coordinator.enumerator.unassigned

    def _check_end_of_input(self) -> None:
        """FLIP-147: the next checkpoint is the final one only while every split has been read
        to its end right now. A failover after the end of input rewinds a region, which then
        replays: the end of input is revoked until it has caught up again (never latched)."""
        if self.flow.length is None:
            return
        exhausted = self._no_more_splits() and self.flow.all_consumed()
        if exhausted != self.coordinator.sources_exhausted:
            self.coordinator.sources_exhausted = exhausted
            self.log(Kind.SOURCES_EXHAUSTED if exhausted else Kind.END_OF_INPUT_REVOKED)

    # -- checkpointing --------------------------------------------------------------

    def _checkpoint(self, faults: AttemptFaults) -> CheckpointOutcome | None:
        coord = self.coordinator
        pending = coord.trigger_checkpoint()
        cid = pending.checkpoint_id
        self.stats["triggered"] += 1
        self.log(Kind.CHECKPOINT_TRIGGERED, checkpoint_id=cid, forced_global=pending.forced_global,
                 final=pending.final, triggered=len(pending.triggered), expected=len(pending.expected),
                 counter=coord.counters.consecutive_regional)
        responses, written = respond(self, pending, faults)
        self.log(Kind.TASK_RESPONSES, checkpoint_id=cid, tasks=responses)
        outcome = coord.complete_pending_checkpoint(pending)
        if faults.crash_before_metadata:
            # the JobManager dies after the state upload, before the metadata commit;
            # with metadata-before-state the order is reversed and the metadata is out
            self.batch.crash_before_metadata = cid
            persisted = outcome.completed and self.mutant == "metadata-before-state"
            self._log_outcome(outcome, faults, persisted=persisted)
            if persisted:
                self.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": outcome.checkpoint.to_bytes()})
            self.log(Kind.JOBMANAGER_CRASHED, checkpoint_id=cid, phase="between state upload and metadata commit")
            return None
        # snapshot state N does not use is discarded: late acknowledgements (Flink's
        # discardSubtaskState) and the acks of failed-region tasks replaced by their fallback
        stray = written - coord.store.live_objects()
        if stray:
            outcome.objects_to_delete = frozenset(outcome.objects_to_delete | stray)
        self._log_outcome(outcome, faults)
        if outcome.completed:
            self.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": outcome.checkpoint.to_bytes()})
        if outcome.objects_to_delete or outcome.subsumed:
            self.batch.steps.append({"op": "delete", "checkpoint_id": cid, "keys": sorted(outcome.objects_to_delete),
                                     "subsumed": list(outcome.subsumed)})
        notify(self, outcome, self._no_more_splits)
        return outcome

    def _log_outcome(self, o: CheckpointOutcome, faults: AttemptFaults, persisted: bool = True) -> None:
        if not persisted:
            self.log(Kind.CHECKPOINT_VOIDED, checkpoint_id=o.checkpoint_id, status=o.status)
            return
        self.stats[{"GLOBAL": "global", "REGIONAL": "regional", ABORTED: "aborted"}[o.status]] += 1
        region_of = self.coordinator.regions
        self.log(Kind.CHECKPOINT_DECIDED, checkpoint_id=o.checkpoint_id, status=o.status, reason=o.reason,
                 forced_global=o.forced_global, final=o.final, failed_regions=list(o.failed_regions),
                 num_regions=o.num_regions or self.coordinator.num_regions,
                 declined=[[t[0], t[1], region_of[t], r] for t, r in sorted(o.declined.items())],
                 timed_out=[[t[0], t[1], region_of[t]] for t in o.timed_out],
                 counter_before=o.counter_before, counter_after=o.counter_after,
                 max_failure_ratio=self.settings.max_failure_ratio,
                 max_consecutive_failures=self.settings.max_consecutive_failures,
                 region_enabled=self.settings.region_enabled,
                 subsumed=list(o.subsumed), deleted=len(o.objects_to_delete),
                 deleted_keys=sorted(o.objects_to_delete),
                 put_failures=sorted(faults.put_failures), slow_puts=sorted(faults.slow_puts))
        if o.checkpoint is not None:
            self.log(Kind.CHECKPOINT_COMPLETED, checkpoint_id=o.checkpoint_id, type=o.status,
                     metadata=o.checkpoint.to_json())

    def flush_batch(self) -> None:
        self.batch.counter = self.coordinator.next_checkpoint_id
        logged = len(self.batch.events)
        self.persistence.flush(self.batch)
        self.events.extend(self.batch.events[logged:])  # data-plane events (storage faults): seq goes on after them
        self.batch = Batch(index=self.batch.index + 1)
