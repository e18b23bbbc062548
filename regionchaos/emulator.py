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
from .checkpointing import Checkpointing
from .failover import Failover
from .history import Kind
from .instants import Instants
from .interleavings import INTERLEAVINGS
from .nemesis import AttemptFaults, Nemesis, Stream, stream_rng
from .outcomes import discard_at_finish
from .protocol.checkpoint import CompletedCheckpoint
from .protocol.coordinator import CheckpointCoordinator, CoordinatorSettings
from .protocol.enumerator import SplitEnumerator
from .protocol.store import CompletedCheckpointStore
from .protocol.rules import R_SHUTDOWN
from .protocol.topology import ALL_TO_ALL, POINTWISE, JobEdge, JobGraph, JobVertex
from .scenario import Partitioning, Scenario
from .timeline import Timeline
from .triggering import Triggering
from .workload.dataflow import OPERATOR_MODES, PROCESS, PROCESS_OPERATORS, SOURCE, SOURCE_OPERATORS, Dataflow



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
                      "records_replayed": 0, "records_committed": 0, "finished": False,
                      "interleavings": {kind: 0 for kind in INTERLEAVINGS}}
        self.clock = Timeline()
        self.flow = Dataflow(scenario, self.stats, self.log, mutant)
        self.failover = Failover(self)
        self.checkpointing = Checkpointing(self)
        self.triggering = Triggering(self)
        self.instants = Instants(self)
        self.attempt = 0
        self.restore_seq = 0
        self.reported: dict = {}  # task -> the newest checkpoint it was told completed
        self.finishing: tuple[int, set] | None = None  # the final checkpoint, and the tasks not yet told of it
        self.faults: dict[int, AttemptFaults] = {}
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
        event["time_ms"] = self.clock.now_ms
        self.events.append(event)
        self.batch.events.append(event)
        return event

    def interleaving(self, kind: str) -> None:
        """One more time an interleaving of this kind happened (the swarm's coverage, `INTERLEAVINGS`)."""
        self.stats["interleavings"][kind] += 1

    def assign_splits(self) -> None:
        enum = self.coordinator.enumerator
        running = [sub for sub in range(self.parallelism) if (SOURCE, sub) not in self.coordinator.finished]
        assigned = enum.assign_pending(running)
        if assigned and self.coordinator.pending:
            self.interleaving("assignment_between_trigger_and_decision")
        gateways = self.coordinator.source.gateways
        for sub, new in assigned.items():
            if gateways.blocked(sub):  # the reader does not get them (`regionchaos.protocol.gateway`)
                gateways.hold(sub, new)
                for split in new:
                    self.log(Kind.SPLIT_HELD, split=split, subtask=sub, closed_for=sorted(gateways.closed[sub]))
                continue
            for split in new:
                self.flow.assign(sub, split)
                self.log(Kind.SPLIT_ASSIGNED, split=split, subtask=sub)

    # -- running --------------------------------------------------------------------

    def run(self) -> RunResult:
        started = time.perf_counter()
        self.log(Kind.RUN_STARTED, scenario=self.sc.name, seed=self.sc.seed, mutant=self.mutant,
                 drawn=self.nemesis.drawn_parameters(), parallelism=self.parallelism,
                 regions=self.coordinator.num_regions, region_enabled=self.settings.region_enabled)
        self.clock.at(self.sc.flink.interval_ms // 2, self.interval, 0)
        while not self.stats["finished"] and self.clock.step():
            pass
        self.attempt = len(self.triggering.times)  # the attempts the run made
        if self.flow.length and not self.stats["finished"]:
            self.log(Kind.JOB_NOT_FINISHED, attempts=self.attempt)
        self.stats["records_in"] = self.flow.records_in()
        self.log(Kind.RUN_FINISHED, finished=self.stats["finished"])
        self.flush_batch()
        self.stats["wall_seconds_control_plane"] = round(time.perf_counter() - started, 3)
        return RunResult(self.events, self.stats, self.nemesis.drawn_parameters(),
                         list(self.nemesis.recorded) if self.nemesis.recording else None)

    def interval(self, index: int) -> None:
        """The middle of the interval before attempt ``index``'s trigger: partition discovery, split
        assignment, the records of the interval, and the faults that land between checkpoints. With one
        checkpoint at a time (Flink's default) it waits until the checkpoint before it ended."""
        if self.stats["finished"]:
            return
        if self.coordinator.pending and self.sc.flink.max_concurrent == 1:
            self.triggering.deferred = index
            return
        self.triggering.deferred = None
        self.attempt = index
        fault_attempts = self.sc.checkpoints
        healing = index >= fault_attempts
        if index == fault_attempts:
            self.log(Kind.HEAL_STARTED)
        if index in self.discovery_plan:
            self.coordinator.enumerator.add_splits(self.discovery_plan[index])
            self.log(Kind.SPLITS_DISCOVERED, splits=self.discovery_plan[index])
        self.assign_splits()
        self.flow.advance(index)
        tasks = self.coordinator.graph.tasks()
        faults = self.nemesis.attempt(index, tasks, self.coordinator.regions, self.coordinator.num_regions,
                                      self.tms, healing)
        self.faults[index] = faults
        if self.failover.crash(faults):  # failures in the middle of the interval: restore, replay
            self.assign_splits()
            self.flow.advance(index)
        self.triggering.after_interval(index)

    def job_finished(self, checkpoint_id: int, status: str) -> None:
        """Every task finished: the job is FINISHED and its checkpoint coordinator shuts down, aborting
        what is still pending (``CheckpointCoordinator.shutdown``: ``abortPendingAndQueuedCheckpoints`` with
        ``CHECKPOINT_COORDINATOR_SHUTDOWN``, uncounted) and discarding its state; what is still uploading for a
        checkpoint that ended is discarded (`regionchaos.outcomes.discard_at_finish`)."""
        self.stats["finished"] = True
        self.finishing = None
        self.log(Kind.JOB_FINISHED, checkpoint_id=checkpoint_id, type=status)
        if self.coordinator.pending:
            self.checkpointing.abort_all(R_SHUTDOWN, shutdown=True)
        discard_at_finish(self, self.checkpointing.attempts.values())

    def no_more_splits(self) -> bool:
        """The enumerator has signalled NoMoreSplits: nothing left to discover or assign."""
        discovery_left = any(a >= self.attempt for a in self.discovery_plan)
        return not discovery_left and not self.coordinator.enumerator.unassigned

    def check_end_of_input(self) -> None:
        """FLIP-147: the next checkpoint is the final one only while every split has been read
        to its end right now. A failover after the end of input rewinds a region, which then
        replays: the end of input is revoked until it has caught up again (never latched)."""
        if self.flow.length is None:
            return
        exhausted = self.no_more_splits() and self.flow.all_consumed()
        if exhausted != self.coordinator.sources_exhausted:
            self.coordinator.sources_exhausted = exhausted
            self.log(Kind.SOURCES_EXHAUSTED if exhausted else Kind.END_OF_INPUT_REVOKED)

    def next_commit_file(self) -> str:
        """The sink commit file the next commit step of the open batch goes to (`regionchaos.dataplane`)."""
        commits = sum(1 for s in self.batch.steps if s["op"] == "commit")
        return f"sink/commits/{self.batch.index:05d}-{commits:04d}.json"

    def flush_batch(self) -> None:
        self.batch.counter = self.coordinator.next_checkpoint_id
        logged = len(self.batch.events)
        self.persistence.flush(self.batch)
        self.events.extend(self.batch.events[logged:])  # data-plane events (storage faults): seq goes on after them
        self.batch = Batch(index=self.batch.index + 1)
