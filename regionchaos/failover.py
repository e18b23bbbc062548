"""Failures after a checkpoint and the restarts they cause: the scheduler's side of a run.

In:  the `regionchaos.emulator.Emulation` being run (its coordinator, data flow, counters, log and
     storage) and the attempt's faults (`regionchaos.nemesis.AttemptFaults`).
Out: `Failover`: subtask crashes and TaskManager losses as region failovers (or global ones where
     the topology is not embarrassingly parallel or nothing completed yet), rescales, and
     JobManager failovers that rebuild the store, the counter and the next checkpoint id from
     storage alone; every restart restores state through the coordinator and hands it to the
     data flow (`regionchaos.workload.Dataflow.restore`).
"""

from __future__ import annotations

from typing import Any, Protocol

from .history import Kind
from .nemesis import AttemptFaults
from .outcomes import discard_unpinned
from .protocol.coordinator import CheckpointCoordinator, final_state_objects
from .protocol.rules import R_FAILOVER
from .protocol.assignment import States
from .protocol.state import OperatorSubtaskState
from .protocol.store import CompletedCheckpointStore
from .protocol.topology import Task
from .scenario import Partitioning, Scenario
from .workload.dataflow import Dataflow


class Run(Protocol):
    """What a failover reads and changes of the run (`regionchaos.emulator.Emulation` is one)."""

    sc: Scenario
    mutant: str | None
    tms: int
    coordinator: CheckpointCoordinator  # replaced by a JobManager failover
    flow: Dataflow
    stats: dict[str, Any]
    batch: Any  # the open `regionchaos.emulator.Batch`
    persistence: Any  # a `regionchaos.emulator.Persistence`
    parallelism: int
    attempt: int
    restore_seq: int
    discovery_plan: dict[int, list[int]]

    def log(self, kind: Kind, **fields: Any) -> dict: ...

    def flush_batch(self) -> None: ...

    def new_coordinator(self, store: CompletedCheckpointStore, next_id: int) -> CheckpointCoordinator: ...

    def assign_splits(self) -> None: ...


class Failover:
    """See the module docstring; one per run, which owns every piece of state it changes."""

    def __init__(self, em: Run):
        self.em = em

    def crash(self, faults: AttemptFaults) -> bool:
        """The subtask crashes, TaskManager losses and JobManager failover that land between
        checkpoints (`AttemptFaults.between`); True if any."""
        if faults.between("jobmanager_failover", faults.jobmanager_failover):
            self.jobmanager_failover("jobmanager failover")
            return True
        regions: list[int] = list(faults.between("subtask_crash", faults.region_crashes))
        for tm in faults.between("taskmanager_loss", faults.taskmanager_losses):
            regions += self._lost(tm)
        self._fail_regions(regions, faults.recovery_failures, "subtask crash")
        return bool(regions)

    def land(self, kind: str, target, cause: str, recovery_failures=()) -> None:
        """A fault placed inside a pending checkpoint lands now (`regionchaos.checkpointing`)."""
        if kind == "jobmanager_failover":
            self.jobmanager_failover(cause)
            return
        regions = self._lost(target) if kind == "taskmanager_loss" else [target]
        if all(r < self.em.coordinator.num_regions for r in regions):
            self._fail_regions(regions, recovery_failures, cause)
            self.em.assign_splits()

    def _lost(self, tm: int) -> list[int]:
        coord = self.em.coordinator
        lost = {coord.regions[t] for t in coord.graph.tasks() if t[1] % self.em.tms == tm}
        self.em.log(Kind.TASKMANAGER_LOST, taskmanager=tm, regions=sorted(lost))
        return sorted(lost)

    def _fail_regions(self, regions: list[int], recovery_failures, cause: str) -> None:
        coord = self.em.coordinator
        for region in dict.fromkeys(regions):
            if self.em.coordinator is not coord:
                return  # the JobManager died on the way (`region_failover`): the new one restarted every task
            self.region_failover(region, cause)
            if region in recovery_failures and self.em.coordinator is coord:
                # part of the recovered in-flight data is drained, then it fails again
                self.em.flow.advance(self.em.attempt)
                self.region_failover(region, "failure during recovery")

    def _abort_pending(self) -> None:
        """A failover aborts every pending checkpoint, not as a checkpoint failure
        (``SchedulerBase.restoreState``: ``abortPendingCheckpoints(new CheckpointException(JOB_FAILOVER_REGION))``,
        before a global and a regional restore alike, apache/flink eb0eaa329d613c0281d5dfe917ba9b2f2ac492bb)."""
        if self.em.coordinator.pending:
            self._count_pending()
            self.em.checkpointing.abort_all(R_FAILOVER)

    def _count_pending(self, jobmanager: bool = False) -> None:
        """The interleavings a failure now makes with the pending checkpoints."""
        phases = {p.phase for p in self.em.coordinator.pending.values()}
        self.em.interleaving("failover_while_pending")
        if "fallback" in phases:
            self.em.interleaving("failure_while_fallback_pending")
        if jobmanager and "finalizing" in phases:
            self.em.interleaving("jobmanager_crash_while_finalizing")

    def region_failover(self, region: int, cause: str) -> None:
        coord = self.em.coordinator
        if coord.store.latest() is None or not self._embarrassingly_parallel():
            self.global_restore(None, f"{cause} (global failover)")
            return
        self._abort_pending()
        if self.em.coordinator is not coord:  # a JobManager crash landed on the end of a checkpoint this failover
            return  # aborted (`regionchaos.instants`): the new JobManager restored the whole job from storage
        self.em.stats["region_failovers"] += 1
        pinned = final_state_objects(coord.finished)
        restored = coord.restore_region(region)
        self.em.log(Kind.REGION_FAILOVER, region=region, cause=cause, tasks=len(restored),
                    restore_from=coord.store.latest().checkpoint_id)
        self._apply_restore(restored, partial=True, pinned=pinned)

    def _embarrassingly_parallel(self) -> bool:
        t = self.em.sc.topology
        return (t.partitioning == Partitioning.FORWARD and t.exchange.value == "pipelined"
                and self.em.coordinator.num_regions > 1)

    def rescale(self, parallelism: int) -> None:
        if self.em.coordinator.store.latest() is None:
            self.em.log(Kind.RESCALE_SKIPPED, parallelism=parallelism, reason="no completed checkpoint")
            return
        self.em.stats["rescales"] += 1
        self.global_restore(parallelism, "rescale")

    def jobmanager_failover(self, cause: str) -> None:
        """The JobManager dies: everything in memory is gone; a new one rebuilds
        the store, the counter and the next checkpoint id from storage alone."""
        self.em.stats["jm_failovers"] += 1
        if self.em.coordinator.pending:
            self._count_pending(jobmanager=True)
        for cid in sorted(self.em.coordinator.pending):  # in memory only: never completed, never aborted
            self.em.log(Kind.CHECKPOINT_VOIDED, checkpoint_id=cid, status="pending")
        self.em.batch.counter = self.em.coordinator.next_checkpoint_id
        self.em.flush_batch()
        checkpoints, next_id = self.em.persistence.recover()
        store = CompletedCheckpointStore.recover(checkpoints, self.em.sc.flink.num_retained, mutant=self.em.mutant,
                                                 semantics=self.em.sc.flink.semantics)
        latest = store.latest()
        configured = self.em.parallelism  # the job graph's parallelism survives in the HA job graph store
        if latest is not None:
            self.em.parallelism = latest.parallelism["source"]
        self.em.coordinator = self.em.new_coordinator(store, next_id)
        live = store.live_objects()
        missing = self._missing_on_storage(live)
        orphans = self.em.persistence.delete_orphans(live)
        self.em.log(Kind.JOBMANAGER_FAILOVER, cause=cause, recovered=[c.checkpoint_id for c in store.retained],
                    next_checkpoint_id=next_id, counter=self.em.coordinator.counters.consecutive_regional,
                    orphans_deleted=len(orphans), orphan_keys=sorted(orphans), missing_objects=missing)
        if latest is None:
            self.restart_from_scratch(cause)
        else:
            self.global_restore(configured, cause, count=False)
        self.em.triggering.resume()  # what waited for a checkpoint of the dead JobManager to end waits no more

    def _missing_on_storage(self, live: set[str]) -> list[str] | None:
        """Objects named by the recovered checkpoints that the new JobManager does not
        find on storage: the state its restore would fail to read. None when the
        persistence cannot list (validation then cannot judge this point)."""
        lister = getattr(self.em.persistence, "list_objects", None)
        if lister is None:
            store = getattr(self.em.persistence, "store", None)
            lister = getattr(store, "list_keys", None)
        if lister is None:
            return None
        return sorted(live - set(lister("checkpoints/")))

    def global_restore(self, parallelism: int | None, cause: str, count: bool = True) -> None:
        coord = self.em.coordinator
        self._abort_pending()
        if self.em.coordinator is not coord:
            return  # the JobManager died while aborting (as in `region_failover`): the new one restored the job
        if coord.store.latest() is None:
            self.restart_from_scratch(cause)
            return
        if count and cause != "rescale":
            self.em.stats["global_failovers"] += 1
        old_p = self.em.parallelism
        new_p = parallelism or old_p
        latest = coord.store.latest()
        pinned = final_state_objects(coord.finished)
        restored = coord.restore_global(new_p)
        self._rediscover()  # the enumerator is back at the checkpoint's view of the source
        self.em.parallelism = new_p
        self.em.restore_seq += 1
        self.em.log(Kind.GLOBAL_RESTORE, cause=cause, restore_id=self.em.restore_seq,
                    restore_from=latest.checkpoint_id, old_parallelism=old_p, new_parallelism=new_p,
                    regions=coord.num_regions, restored=self._describe(restored))
        self._apply_restore(restored, partial=False, pinned=pinned)

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
        em = self.em
        enum = em.coordinator.enumerator
        known = set(enum.discovered)
        found = [*range(em.sc.workload.splits),
                 *(s for a in sorted(em.discovery_plan) if a <= em.attempt for s in em.discovery_plan[a])]
        enum.add_splits(s for s in found if s not in known)

    def restart_from_scratch(self, cause: str) -> None:
        """No completed checkpoint yet: the whole job starts over, and every record consumed
        so far is consumed again (replayed, as after a restore from checkpoint 0)."""
        self.em.stats["global_failovers"] += 1
        self.em.log(Kind.GLOBAL_RESTART_FROM_SCRATCH, cause=cause)
        enum = self.em.coordinator.enumerator
        self._rediscover()  # after a JobManager failover the enumerator is a new, empty one
        self.em.flow.restart_from_scratch()
        self.em.coordinator.source.gateways.reset_all()
        enum.owner = {}
        enum.unassigned = sorted(enum.discovered)
        self.em.coordinator.finished = {}
        self.em.assign_splits()

    def _apply_restore(self, restored: dict[Task, States], partial: bool, pinned: set[str]) -> None:
        """The restored tasks restart from their state (`Dataflow.restore`), the sink's restored pending transactions
        commit with the next batch, and what only restarted finished tasks' final states kept (``pinned``) goes."""
        em = self.em
        discard_unpinned(em, pinned)
        em.stats["restores"] += 1
        for task in restored:
            em.reported.pop(task, None)  # a restarted task is a new attempt: told of nothing yet
        txns = em.flow.restore(restored, partial, em.parallelism, em.coordinator.regions, em.attempt)
        if txns:
            em.batch.steps.append({"op": "commit", "checkpoint_id": None, "txns": txns})
