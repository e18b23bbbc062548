"""The control plane of a run: the job, driven through the CheckpointCoordinator.

In:  a Scenario, an optional mutant, and a Persistence (where checkpoint
     metadata, state rows, sink commits and history go: memory in unit tests,
     S3 through the Spark data plane in real runs).
Out: a :class:`RunResult` with the history (one event per protocol step) and
     counters. Everything is deterministic from the scenario's seed.

The job itself (source, operators, two-phase-commit sink) is `regionchaos.workload.dataflow`;
this module is the control plane around it: triggers, task responses and faults, the coordinator's
decisions and notifications, failovers, restores and JobManager lives, and what goes to storage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import history
from .history import Kind
from .nemesis import AttemptFaults, Nemesis, Stream, stream_rng
from .protocol.checkpoint import CompletedCheckpoint
from .protocol.coordinator import (
    ABORTED,
    N_COMPLETE,
    N_REGIONAL_COMPLETE,
    CheckpointCoordinator,
    CheckpointOutcome,
    CoordinatorSettings,
)
from .protocol.enumerator import SplitEnumerator
from .protocol.state import OperatorSubtaskState
from .protocol.store import CompletedCheckpointStore
from .protocol.topology import ALL_TO_ALL, POINTWISE, JobEdge, JobGraph, JobVertex, Task
from .scenario import Partitioning, Scenario
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


def object_key(checkpoint_id: int, task: Task, taskmanagers: int, file_merging: bool) -> str:
    """Where a task's snapshot for a checkpoint lives (FLIP-306 file merging:
    one physical file per TaskManager and checkpoint)."""
    if file_merging:
        return f"checkpoints/chk-{checkpoint_id}/tm-{task[1] % taskmanagers}.state"
    return f"checkpoints/chk-{checkpoint_id}/{task[0]}-{task[1]}.state"


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
    state_rows: list[dict] = field(default_factory=list)  # one per (checkpoint, task, operator, split)
    steps: list[dict] = field(default_factory=list)  # ordered: metadata commits, deletes, sink commits
    events: list[dict] = field(default_factory=list)
    crash_before_metadata: int | None = None  # checkpoint whose metadata is never written
    put_failures: set[tuple[int, int]] = field(default_factory=set)  # (checkpoint, tm)
    slow_puts: set[tuple[int, int]] = field(default_factory=set)
    counter: int = 0  # next checkpoint id (HA checkpoint id counter)


class MemoryPersistence:
    """Persistence for unit tests: keeps metadata and objects in dicts."""

    def __init__(self, mutant: str | None = None):
        self.mutant = mutant
        self.metadata: dict[int, bytes] = {}
        self.objects: set[str] = set()
        self.counter = 1
        self.batches: list[Batch] = []
        self.commits: list[dict] = []

    def flush(self, batch: Batch) -> None:
        self.batches.append(batch)
        written = {(r["checkpoint_id"], r["object_key"]) for r in batch.state_rows}
        failed = batch.put_failures
        for cid, key in written:
            if (cid, int(key.rsplit("tm-", 1)[-1].split(".")[0]) if "tm-" in key else -1) not in failed:
                if not (self.mutant == "metadata-before-state" and cid == batch.crash_before_metadata):
                    self.objects.add(key)
        for step in batch.steps:
            if step["op"] == "metadata":
                self.metadata[step["checkpoint_id"]] = step["body"]
            elif step["op"] == "delete":
                self.objects -= set(step["keys"])
                for old in step["subsumed"]:
                    self.metadata.pop(old, None)
            elif step["op"] == "commit":
                self.commits.extend(step["txns"])
        self.counter = batch.counter

    def recover(self) -> tuple[list[CompletedCheckpoint], int]:
        return [CompletedCheckpoint.from_bytes(b) for b in self.metadata.values()], self.counter

    def list_objects(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))

    def delete_orphans(self, live: set[str]) -> list[str]:
        orphans = sorted(self.objects - live)
        self.objects -= set(orphans)
        return orphans


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
        )
        w = scenario.workload
        self.length = w.records_per_split if w.bounded else None
        self.events: list[dict] = []
        self.batch = Batch(index=0)
        self.stats = {"triggered": 0, "global": 0, "regional": 0, "aborted": 0, "region_failovers": 0,
                      "global_failovers": 0, "jm_failovers": 0, "rescales": 0, "restores": 0,
                      "records_replayed": 0, "records_committed": 0, "finished": False}
        self.flow = Dataflow(scenario, self.stats, self.log, mutant)
        self.attempt = 0
        self.restore_seq = 0
        self.discovery_plan = self._discovery_plan()
        self.coordinator = self._new_coordinator(CompletedCheckpointStore(scenario.flink.num_retained, mutant=mutant),
                                                 scenario.first_checkpoint_id)
        self.coordinator.enumerator.add_splits(range(w.splits))
        self._assign_splits()

    # -- set-up ------------------------------------------------------------------

    def _new_coordinator(self, store: CompletedCheckpointStore, next_id: int) -> CheckpointCoordinator:
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

    def _assign_splits(self) -> None:
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
        limit = fault_attempts + heal + (MAX_EXTRA_ATTEMPTS if self.length else 0)
        rescales = {e.after_checkpoint: e.parallelism for e in self.sc.rescale}
        while self.attempt < limit and not self.stats["finished"]:
            healing = self.attempt >= fault_attempts
            if self.attempt == fault_attempts:
                self.log(Kind.HEAL_STARTED)
            if self.attempt in self.discovery_plan:
                self.coordinator.enumerator.add_splits(self.discovery_plan[self.attempt])
                self.log(Kind.SPLITS_DISCOVERED, splits=self.discovery_plan[self.attempt])
            self._assign_splits()
            self.flow.advance(self.attempt)
            tasks = self.coordinator.graph.tasks()
            faults = self.nemesis.attempt(self.attempt, tasks, self.coordinator.regions,
                                          self.coordinator.num_regions, self.tms, healing)
            if self._crash(faults):  # failures in the middle of the interval: restore, replay
                self._assign_splits()
                self.flow.advance(self.attempt)
            self._check_end_of_input()
            outcome = self._checkpoint(faults)
            if self.progress:
                self.progress(self.attempt, limit, outcome)
            if outcome is None:  # JobManager crashed before the metadata commit
                self._jobmanager_failover("crash between state upload and metadata commit")
            elif self.attempt in rescales and not self.stats["finished"]:
                self._rescale(rescales[self.attempt])
            self.attempt += 1
            if healing and not self.length and self.attempt >= fault_attempts + heal:
                break
        if self.length and not self.stats["finished"]:
            self.log(Kind.JOB_NOT_FINISHED, attempts=self.attempt)
        self.stats["records_in"] = self.flow.records_in()
        self.log(Kind.RUN_FINISHED, finished=self.stats["finished"])
        self._flush()
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
        if self.length is None:
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
                 counter=coord.consecutive_regional)
        merging = self.sc.flink.file_merging
        written: set[str] = set()  # objects holding this checkpoint's snapshots
        timeout = self.sc.flink.timeout_ms
        expected = sorted(pending.expected)
        limit = min(timeout, self.settings.deadline_ms or timeout) if faults.healing else timeout
        upload = self.nemesis.upload_times(self.attempt, expected, limit)
        responses = []  # the task side's own record: [vertex, subtask, response, at_ms, upload_ms, reason]
        for task in expected:
            tm = task[1] % self.tms
            lat = upload[task]
            if task in faults.declines:
                responses.append([task[0], task[1], "decline", lat, None, faults.declines[task]])
                coord.receive_decline(pending, task, faults.declines[task])
                continue
            if tm in faults.put_failures and merging:
                self.batch.put_failures.add((cid, tm))
                reason = "CHECKPOINT_DECLINED_STATE_UPLOAD_FAILED"
                responses.append([task[0], task[1], "decline", lat, None, reason])
                coord.receive_decline(pending, task, reason)
                continue
            key = object_key(cid, task, self.tms, merging)
            states = self.flow.snapshot(cid, task, key, task[1] % self.tms, self.batch.state_rows)
            written.add(key)
            slow = tm in faults.slow_puts and merging
            if (slow or task in faults.timeouts) and tm in faults.slow_puts:
                self.batch.slow_puts.add((cid, tm))
            # a silent task's ack, and a slow PUT's, arrive after the checkpoint timeout
            done = timeout + 1 + lat if slow else lat
            at = timeout + 1 + lat if task in faults.timeouts or slow else lat
            responses.append([task[0], task[1], "ack", at, done, None])
            coord.receive_acknowledge(pending, task, states, at_ms=at)
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
        self._notify(outcome)
        return outcome

    def _log_outcome(self, o: CheckpointOutcome, faults: AttemptFaults, persisted: bool = True) -> None:
        if not persisted:
            self.log(Kind.CHECKPOINT_VOIDED, checkpoint_id=o.checkpoint_id, status=o.status)
            return
        self.stats[{"GLOBAL": "global", "REGIONAL": "regional", ABORTED: "aborted"}[o.status]] += 1
        region_of = self.coordinator.regions
        self.log(Kind.CHECKPOINT_DECIDED, checkpoint_id=o.checkpoint_id, status=o.status, reason=o.reason,
                 forced_global=o.forced_global, final=o.final, failed_regions=list(o.failed_regions),
                 num_regions=self.coordinator.num_regions,
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

    def _notify(self, outcome: CheckpointOutcome) -> None:
        """notifyCheckpointComplete / regional-complete / fallback / aborted."""
        if not outcome.completed:
            return
        cid = outcome.checkpoint_id
        txns = []
        for task, kind in outcome.notifications.items():
            if task[0] != PROCESS or kind not in (N_COMPLETE, N_REGIONAL_COMPLETE):
                continue
            txns += self.flow.notified(task[1], self.coordinator.regions[task], cid, self.attempt)
        if txns:
            self.batch.steps.append({"op": "commit", "checkpoint_id": cid, "txns": txns})
        if outcome.final:
            self.stats["finished"] = True
            self.log(Kind.JOB_FINISHED, checkpoint_id=cid, type=outcome.status)
        elif outcome.status == "GLOBAL":
            self._finish_tasks(outcome)

    def _finish_tasks(self, outcome: CheckpointOutcome) -> None:
        """FLIP-147: a task finishes after notifyCheckpointComplete of a
        checkpoint taken after its input ended; the job ends on the final one."""
        coord = self.coordinator
        if self.length is None or not self._no_more_splits():
            return
        for sub in list(self.flow.owned):
            task = (SOURCE, sub)
            if task in coord.finished:
                continue
            if self.flow.source_done(sub):
                coord.task_finished(task, {op: outcome.checkpoint.operator_states[(op, sub)] for op in SOURCE_OPERATORS})
                self.log(Kind.TASK_FINISHED, vertex=SOURCE, subtask=sub, checkpoint_id=outcome.checkpoint_id)

    # -- faults after the checkpoint -------------------------------------------------

    def _crash(self, faults: AttemptFaults) -> bool:
        """Subtask crashes, TaskManager loss and JobManager failover; True if any."""
        coord = self.coordinator
        if faults.jobmanager_failover:
            self._jobmanager_failover("jobmanager failover")
            return True
        regions: list[int] = list(faults.region_crashes)
        for tm in faults.taskmanager_losses:
            lost = {coord.regions[t] for t in coord.graph.tasks() if t[1] % self.tms == tm}
            self.log(Kind.TASKMANAGER_LOST, taskmanager=tm, regions=sorted(lost))
            regions += sorted(lost)
        for region in dict.fromkeys(regions):
            self._region_failover(region, "subtask crash")
            if region in faults.recovery_failures:
                self.flow.advance(self.attempt)  # part of the recovered in-flight data is drained, then it fails again
                self._region_failover(region, "failure during recovery")
        return bool(regions)

    def _region_failover(self, region: int, cause: str) -> None:
        coord = self.coordinator
        if coord.store.latest() is None or not self._embarrassingly_parallel():
            self._global_restore(None, f"{cause} (global failover)")
            return
        self.stats["region_failovers"] += 1
        restored = coord.restore_region(region)
        self.log(Kind.REGION_FAILOVER, region=region, cause=cause, tasks=len(restored),
                 restore_from=coord.store.latest().checkpoint_id)
        self._apply_restore(restored, partial=True)

    def _embarrassingly_parallel(self) -> bool:
        t = self.sc.topology
        return t.partitioning == Partitioning.FORWARD and t.exchange.value == "pipelined" and self.coordinator.num_regions > 1

    def _rescale(self, parallelism: int) -> None:
        if self.coordinator.store.latest() is None:
            self.log(Kind.RESCALE_SKIPPED, parallelism=parallelism, reason="no completed checkpoint")
            return
        self.stats["rescales"] += 1
        self._global_restore(parallelism, "rescale")

    def _jobmanager_failover(self, cause: str) -> None:
        """The JobManager dies: everything in memory is gone; a new one rebuilds
        the store, the counter and the next checkpoint id from storage alone."""
        self.stats["jm_failovers"] += 1
        self.batch.counter = self.coordinator.next_checkpoint_id
        self._flush()
        checkpoints, next_id = self.persistence.recover()
        store = CompletedCheckpointStore.recover(checkpoints, self.sc.flink.num_retained, mutant=self.mutant)
        latest = store.latest()
        configured = self.parallelism  # the job graph's parallelism survives in the HA job graph store
        if latest is not None:
            self.parallelism = latest.parallelism["source"]
        self.coordinator = self._new_coordinator(store, next_id)
        live = store.live_objects()
        missing = self._missing_on_storage(live)
        orphans = self.persistence.delete_orphans(live)
        self.log(Kind.JOBMANAGER_FAILOVER, cause=cause, recovered=[c.checkpoint_id for c in store.retained],
                 next_checkpoint_id=next_id, counter=self.coordinator.consecutive_regional,
                 orphans_deleted=len(orphans), orphan_keys=sorted(orphans), missing_objects=missing)
        if latest is None:
            self._restart_from_scratch(cause)
        else:
            self._global_restore(configured, cause, count=False)

    def _missing_on_storage(self, live: set[str]) -> list[str] | None:
        """Objects named by the recovered checkpoints that the new JobManager does not
        find on storage: the state its restore would fail to read. None when the
        persistence cannot list (validation then cannot judge this point)."""
        lister = getattr(self.persistence, "list_objects", None)
        if lister is None:
            store = getattr(self.persistence, "store", None)
            lister = getattr(store, "list_keys", None)
        if lister is None:
            return None
        return sorted(live - set(lister("checkpoints/")))

    def _global_restore(self, parallelism: int | None, cause: str, count: bool = True) -> None:
        coord = self.coordinator
        if coord.store.latest() is None:
            self._restart_from_scratch(cause)
            return
        if count and cause != "rescale":
            self.stats["global_failovers"] += 1
        old_p = self.parallelism
        new_p = parallelism or old_p
        latest = coord.store.latest()
        restored = coord.restore_global(new_p)
        self._rediscover()  # the enumerator is back at the checkpoint's view of the source
        self.parallelism = new_p
        self.restore_seq += 1
        self.log(Kind.GLOBAL_RESTORE, cause=cause, restore_id=self.restore_seq, restore_from=latest.checkpoint_id,
                 old_parallelism=old_p, new_parallelism=new_p, regions=coord.num_regions,
                 restored=self._describe(restored))
        self._apply_restore(restored, partial=False)

    def _describe(self, restored: dict[Task, dict[str, OperatorSubtaskState]]) -> list:
        out = []
        for (vertex, sub), states in sorted(restored.items()):
            for op, st in sorted(states.items()):
                out.append([op, sub, [list(e) if isinstance(e, tuple) else e for e in st.elements],
                            [[c.channel, c.records[0], c.records[1]] for c in st.channel_state]])
        return out

    def _rediscover(self) -> None:
        """Partition discovery after a restart: the enumerator learns again every split the
        source has by now (the initial ones and those discovered so far) that its state does
        not know, e.g. splits discovered after the checkpoint it was restored from. Without
        this they would never be read (``split_assignment_consistent`` finds them forgotten)."""
        enum = self.coordinator.enumerator
        known = set(enum.discovered)
        found = [*range(self.sc.workload.splits),
                 *(s for a in sorted(self.discovery_plan) if a <= self.attempt for s in self.discovery_plan[a])]
        enum.add_splits(s for s in found if s not in known)

    def _restart_from_scratch(self, cause: str) -> None:
        """No completed checkpoint yet: the whole job starts over, and every record consumed
        so far is consumed again (replayed, as after a restore from checkpoint 0)."""
        self.stats["global_failovers"] += 1
        self.log(Kind.GLOBAL_RESTART_FROM_SCRATCH, cause=cause)
        enum = self.coordinator.enumerator
        self._rediscover()  # after a JobManager failover the enumerator is a new, empty one
        self.flow.restart_from_scratch()
        enum.owner = {}
        enum.unassigned = sorted(enum.discovered)
        self.coordinator.finished = {}
        self._assign_splits()

    def _apply_restore(self, restored: dict[Task, dict[str, OperatorSubtaskState]], partial: bool) -> None:
        """The restored tasks restart from their state (`Dataflow.restore`); the sink's commits
        of restored pending transactions go to storage with the next batch."""
        self.stats["restores"] += 1
        txns = self.flow.restore(restored, partial, self.parallelism, self.coordinator.regions, self.attempt)
        if txns:
            self.batch.steps.append({"op": "commit", "checkpoint_id": None, "txns": txns})

    def _flush(self) -> None:
        self.batch.counter = self.coordinator.next_checkpoint_id
        logged = len(self.batch.events)
        self.persistence.flush(self.batch)
        self.events.extend(self.batch.events[logged:])  # data-plane events (storage faults): seq goes on after them
        self.batch = Batch(index=self.batch.index + 1)
