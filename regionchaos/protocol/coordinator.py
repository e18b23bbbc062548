"""The CheckpointCoordinator of FLIP-600 (PROTOCOL.md sections 3, 5, 6).

In:  a job graph, settings (Flink keys), the CompletedCheckpointStore, the
     source's OperatorCoordinator, and per checkpoint the subtasks' acks
     (with their OperatorSubtaskStates), declines and silences.
Out: for each checkpoint a :class:`CheckpointOutcome`: GLOBAL, REGIONAL or
     ABORTED with the reason, the pre-merged CompletedCheckpoint, the
     notifications each task gets, and the objects the cleaner may delete.
     Restores (region failover, global failover, rescale) return the state
     each task starts from.

Savepoints (``trigger_savepoint``) take the non-regional path: one decline aborts them, they are
not added to the store, and under ``pr`` a completed one resets the counter and the forced flag.
With regional checkpoints off (and for a savepoint) a decline aborts at once:
``receive_decline`` returns the decision. The failure accounting of Flink's
CheckpointFailureManager (``execution.checkpointing.tolerable-failed-checkpoints``) marks an
outcome ``job_failed``; the caller restarts the job (a global failover).

The coordinator owns the protocol's state (the counter, the forced flag, the fallback table, the
consecutive failed checkpoints) and the order of events; its rooms hold the rest: the abort rules, the counter rules and the
settings they read (`rules`), the merged checkpoint's entries and notifications (`merge`), and
the state each task restores (`assignment`, Flink's StateAssignmentOperation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .assignment import States, assign_all, empty_states, fallback_table, source_splits, union_lists
from .checkpoint import GLOBAL, REGIONAL, CompletedCheckpoint
from .enumerator import SplitEnumerator
from .merge import N_ABORTED, N_COMPLETE, N_FALLBACK, N_REGIONAL_COMPLETE, merge_entries  # noqa: F401 - C.N_...
from .rules import (  # noqa: F401 - the reasons are the coordinator's vocabulary: C.R_... in tests and callers
    FLIP,
    PR,
    R_ALL_FAILED,
    R_EXPIRED,
    R_FAILURE_RATIO,
    R_FINAL,
    R_FORCED_GLOBAL,
    R_NO_COORDINATOR_FALLBACK,
    R_NO_PREVIOUS,
    R_REGIONAL_OFF,
    R_SAVEPOINT_DECLINED,
    R_SINGLE_REGION,
    CoordinatorSettings,
    after_abort,
    after_complete,
    after_failure_count,
    counts_as_failed_checkpoint,
    flip_abort_reason,
    pr_abort_reason,
    trigger_forced,
)
from .store import CompletedCheckpointStore
from .topology import JobGraph, Task, pipeline_regions, tasks_to_trigger

ABORTED = "ABORTED"


@dataclass
class PendingCheckpoint:
    checkpoint_id: int
    forced_global: bool
    final: bool
    triggered: set[Task]
    expected: set[Task]
    coordinator_snapshot: dict | None
    acks: dict[Task, States] = field(default_factory=dict)
    declines: dict[Task, str] = field(default_factory=dict)
    late: dict[Task, int] = field(default_factory=dict)  # acks that arrived after the deadline (ms)
    savepoint: bool = False
    decided: CheckpointOutcome | None = None  # aborted at a decline, before every task responded

    def acknowledge(self, task: Task, states: States, at_ms: int | None, deadline_ms: int | None) -> None:
        """An ack after the deadline is discarded (Flink's late acknowledgement): the task timed out."""
        self._check_response(task)
        if at_ms is not None and deadline_ms is not None and at_ms > deadline_ms:
            self.late[task] = at_ms
            return
        self.acks[task] = states

    def decline(self, task: Task, reason: str) -> None:
        self._check_response(task)
        self.declines[task] = reason

    def _check_response(self, task: Task) -> None:
        if task not in self.expected:
            raise ValueError(f"checkpoint {self.checkpoint_id}: {task} was not asked")
        if task in self.acks or task in self.declines or task in self.late:
            raise ValueError(f"checkpoint {self.checkpoint_id}: {task} already responded")


@dataclass
class CheckpointOutcome:
    checkpoint_id: int
    status: str  # GLOBAL, REGIONAL or ABORTED
    reason: str | None
    forced_global: bool
    final: bool
    failed_regions: tuple[int, ...]
    declined: dict[Task, str]
    timed_out: tuple[Task, ...]
    counter_before: int
    counter_after: int
    num_regions: int = 0  # the regions the decision counted (PR: of the running tasks only)
    savepoint: bool = False
    job_failed: bool = False  # more consecutive failed checkpoints than tolerable-failed-checkpoints
    failures_after: int = 0  # consecutive failed checkpoints after this decision
    checkpoint: CompletedCheckpoint | None = None
    notifications: dict[Task, str] = field(default_factory=dict)
    subsumed: tuple[int, ...] = ()
    objects_to_delete: frozenset[str] = frozenset()

    @classmethod
    def undecided(cls, pending: PendingCheckpoint, failed_regions: tuple[int, ...], timed_out: tuple[Task, ...],
                  counter: int, num_regions: int = 0, failures: int = 0) -> CheckpointOutcome:
        """Checkpoint N before its decision: ABORTED with no reason, the counter unchanged."""
        return cls(checkpoint_id=pending.checkpoint_id, status=ABORTED, reason=None,
                   forced_global=pending.forced_global, final=pending.final, failed_regions=failed_regions,
                   declined=dict(pending.declines), timed_out=timed_out, counter_before=counter,
                   counter_after=counter, num_regions=num_regions, savepoint=pending.savepoint,
                   failures_after=failures)

    @property
    def completed(self) -> bool:
        return self.status != ABORTED


class CheckpointCoordinator:
    def __init__(
        self,
        graph: JobGraph,
        settings: CoordinatorSettings,
        store: CompletedCheckpointStore,
        *,
        operator_modes: dict[str, str],
        enumerator: SplitEnumerator | None = None,
        source_operator: str = "source",
        next_checkpoint_id: int = 1,
        mutant: str | None = None,
    ):
        self.settings = settings
        self.store = store
        self.operator_modes = operator_modes
        self.enumerator = enumerator
        self.source_operator = source_operator
        self.mutant = mutant
        self.next_checkpoint_id = next_checkpoint_id
        self._set_graph(graph)
        latest = store.latest()
        pr = settings.semantics == PR
        # FLIP: a new JobManager rebuilds the counter from storage; PR: it lives in memory only
        self.consecutive_regional = latest.consecutive_regional if latest and not pr else 0
        self.force_global_next = False  # PR's forceGlobalNextCheckpoint flag
        # CheckpointFailureManager's continuousFailureCounter: in memory, a new JobManager starts at 0
        self.failed_checkpoints = 0
        self.finished: dict[Task, States] = {}
        self.sources_exhausted = False
        # what each task falls back to in a regional checkpoint: (states, ref id)
        self.fallback: dict[Task, tuple[States, int]] = {}
        if latest is not None:
            self._fallback_from(latest)

    # -- topology -------------------------------------------------------------------

    def _set_graph(self, graph: JobGraph) -> None:
        self.graph = graph
        self.regions = pipeline_regions(graph)
        self.num_regions = len(set(self.regions.values()))
        self.vertex_of = {op: v for v, op in graph.operators()}

    def region_tasks(self, region: int) -> list[Task]:
        return [t for t, r in self.regions.items() if r == region]

    def _fallback_from(self, cp: CompletedCheckpoint) -> None:
        self.fallback = fallback_table(self.graph, cp, gaps_allowed=self.settings.semantics == PR)

    # -- triggering -------------------------------------------------------------------

    def task_finished(self, task: Task, final_states: States) -> None:
        """FLIP-147: a finished task is no longer triggered; its final state is reused."""
        self.finished[task] = final_states

    def trigger_checkpoint(self) -> PendingCheckpoint:
        forced, self.force_global_next = trigger_forced(
            self.settings, counter=self.consecutive_regional, force_next=self.force_global_next,
            sources_exhausted=self.sources_exhausted, mutant=self.mutant)
        return self._pending(forced=forced, final=self.sources_exhausted, savepoint=False)

    def trigger_savepoint(self) -> PendingCheckpoint:
        """A savepoint: never forced, never final, and it leaves the forced flag alone
        (``RegionalCheckpointHandler.checkAllSourcesFinishedAndForceGlobal`` skips
        ``props.isSavepoint()``, apache/flink 4e120137). It takes the next checkpoint id."""
        return self._pending(forced=False, final=False, savepoint=True)

    def _pending(self, *, forced: bool, final: bool, savepoint: bool) -> PendingCheckpoint:
        cid = self.next_checkpoint_id
        self.next_checkpoint_id += 1
        running = set(self.graph.tasks()) - set(self.finished)
        snapshot = self.enumerator.checkpoint_coordinator(cid) if self.enumerator else None
        pending = PendingCheckpoint(
            checkpoint_id=cid,
            forced_global=forced,
            final=final,
            triggered=tasks_to_trigger(self.graph, running),
            expected=running,
            coordinator_snapshot=snapshot,
            savepoint=savepoint,
        )
        for task, states in self.finished.items():
            pending.acks[task] = states
        return pending

    def receive_acknowledge(self, pending: PendingCheckpoint, task: Task, states: States,
                            at_ms: int | None = None) -> None:
        """``at_ms``: when the ack arrived, in ms after the trigger; past the deadline it is
        discarded (Flink's late acknowledgement) and the task counts as timed out. An ack for
        a checkpoint already aborted is recorded for the task record only (Flink discards it)."""
        pending.acknowledge(task, states, at_ms, self.settings.deadline_ms)

    def receive_decline(self, pending: PendingCheckpoint, task: Task, reason: str) -> CheckpointOutcome | None:
        """Record a decline. With regional checkpoints off, or for a savepoint, the first decline
        aborts the checkpoint at once and the decision is returned (raoraoxiong/flink fada049,
        ``CheckpointCoordinator.receiveDeclineMessage``: the decline is buffered only
        ``if (regionalCheckpointEnabled && !checkpoint.getProps().isSavepoint())``, else
        ``abortPendingCheckpoint``). Otherwise None: the decision waits for every response."""
        pending.decline(task, reason)
        if pending.decided is not None:
            return None
        if self.settings.region_enabled and not pending.savepoint:
            return None
        timed_out, failed_regions, num_regions = self._failures(pending, settled=False)
        outcome = CheckpointOutcome.undecided(pending, failed_regions, timed_out, self.consecutive_regional,
                                              num_regions, self.failed_checkpoints)
        pending.decided = self._abort(pending, outcome, R_SAVEPOINT_DECLINED if pending.savepoint else R_REGIONAL_OFF)
        return pending.decided

    # -- completing -------------------------------------------------------------------

    def _failures(self, pending: PendingCheckpoint, *, settled: bool):
        """(timed-out tasks, failed regions, regions counted). ``settled``: every task responded
        or the timeout fired, so a task without a timely ack timed out (PR: the canceller marks
        it declined, ``PendingCheckpoint.markUnacknowledgedTasksAsDeclined``). The regions
        counted: PR, those of the running tasks (``tryCompleteRegionalCheckpoint`` groups the
        plan's tasksToWaitFor, which holds no finished task); FLIP, every region of the job."""
        answered = set(pending.acks) | set(pending.declines)
        timed_out = tuple(sorted(pending.expected - answered)) if settled else ()
        failed_tasks = set(pending.declines) | set(timed_out)
        failed_regions = tuple(sorted({self.regions[t] for t in failed_tasks}))
        if self.settings.semantics == PR:
            num_regions = len({self.regions[t] for t in pending.expected})
        else:
            num_regions = self.num_regions
        return timed_out, failed_regions, num_regions

    def complete_pending_checkpoint(self, pending: PendingCheckpoint) -> CheckpointOutcome:
        """Decide checkpoint N once every task responded or timed out (section 3). A checkpoint
        already aborted at a decline keeps that decision; its record of responses is completed."""
        timed_out, failed_regions, num_regions = self._failures(pending, settled=True)
        if pending.decided is not None:
            decided = pending.decided
            decided.declined, decided.timed_out, decided.failed_regions = dict(pending.declines), timed_out, failed_regions
            return decided
        outcome = CheckpointOutcome.undecided(pending, failed_regions, timed_out, self.consecutive_regional,
                                              num_regions, self.failed_checkpoints)
        if not failed_regions:
            if pending.savepoint:
                return self._complete_savepoint(pending, outcome)
            return self._complete(pending, outcome, GLOBAL, {})
        if pending.savepoint:  # silent at the timeout: Flink's canceller aborts a savepoint as expired
            return self._abort(pending, outcome, R_EXPIRED)
        has_previous = self.store.latest() is not None
        if self.settings.semantics == PR:
            reason = pr_abort_reason(self.settings, num_regions, failed_regions, timed_out=bool(timed_out),
                                     has_previous=has_previous, forced=pending.forced_global, mutant=self.mutant)
        else:
            reason = flip_abort_reason(self.settings, self.num_regions, failed_regions, has_previous=has_previous,
                                       forced=pending.forced_global, final=pending.final, mutant=self.mutant)
        coordinator_state = None
        if reason is None:
            coordinator_state, reason = self._coordinator_fallback(pending, failed_regions)
        if reason is not None:
            return self._abort(pending, outcome, reason)
        return self._complete(pending, outcome, REGIONAL, coordinator_state or {})

    def _complete_savepoint(self, pending: PendingCheckpoint, outcome: CheckpointOutcome) -> CheckpointOutcome:
        """A savepoint every task acknowledged. It is not added to the CompletedCheckpointStore
        (``completePendingCheckpoint``: ``if (!props.isSavepoint())`` around the store), tasks
        are not notified (``cleanupAfterCompletedCheckpoint`` notifies for a savepoint only if
        synchronous), the failure count clears (``reportCompletedCheckpoint`` ->
        ``CheckpointFailureManager.handleCheckpointSuccess``), and under ``pr`` the counter and
        the forced flag reset (``completePendingCheckpoint`` resets both for any fully
        acknowledged checkpoint; raoraoxiong/flink fada049). FLIP: silent on savepoints; the
        counter counts checkpoints that may reference history, which a savepoint does not
        change (it is not in the store): unchanged."""
        if self.settings.semantics == PR:
            self.consecutive_regional, self.force_global_next = 0, False
        self.failed_checkpoints = 0
        outcome.status = GLOBAL
        outcome.counter_after = self.consecutive_regional
        outcome.failures_after = 0
        outcome.checkpoint = CompletedCheckpoint(
            checkpoint_id=pending.checkpoint_id,
            checkpoint_type=GLOBAL,
            parallelism={op: self.graph.vertex(v).parallelism for v, op in self.graph.operators()},
            operator_states={(op, t[1]): st for t, states in pending.acks.items() for op, st in states.items()},
            coordinator_state=pending.coordinator_snapshot or {},
            consecutive_regional=self.consecutive_regional,
            failed_regions=(),
            num_regions=self.num_regions,
        )
        return outcome

    def _coordinator_fallback(self, pending: PendingCheckpoint, failed_regions: tuple[int, ...]):
        """(the source coordinator's region-fallback state, abort reason or None)."""
        if self.enumerator is None:
            return None, None
        failed = [t for t in self.graph.tasks() if self.regions[t] in failed_regions]
        merged = {t: self.fallback[t][0] for t in failed if t in self.fallback}
        source_vertex = self.vertex_of[self.source_operator]
        pr_hand_back = {}  # PR: the failed subtasks' splits assigned after L go back to the live enumerator now
        if self.settings.semantics == PR:
            pr_hand_back = {"hand_back_after": self.store.latest().checkpoint_id,
                            "failed_subtasks": [t[1] for t in failed if t[0] == source_vertex]}
        state = self.enumerator.checkpoint_coordinator_for_region_fallback(
            source_splits({**pending.acks, **merged}, source_vertex, self.source_operator), **pr_hand_back)
        return state, (R_NO_COORDINATOR_FALLBACK if state is None else None)

    def _complete(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, kind: str, coord_state: dict):
        entries, notifications = merge_entries(self.graph.tasks(), self.regions, outcome.failed_regions, pending.acks,
                                               self.fallback, kind, mutant=self.mutant)
        self.consecutive_regional, self.force_global_next = after_complete(
            self.settings, kind, counter=self.consecutive_regional, force_next=self.force_global_next)
        if kind == GLOBAL:
            coord_state = pending.coordinator_snapshot or {}
        checkpoint = CompletedCheckpoint(
            checkpoint_id=pending.checkpoint_id,
            checkpoint_type=kind,
            parallelism={op: self.graph.vertex(v).parallelism for v, op in self.graph.operators()},
            operator_states=entries,
            coordinator_state=coord_state,
            consecutive_regional=self.consecutive_regional,
            failed_regions=outcome.failed_regions,
            num_regions=self.num_regions,
        )
        subsumed, doomed = self.store.add(checkpoint)
        self._fallback_from(checkpoint)
        # reportCompletedCheckpoint -> CheckpointFailureManager.handleCheckpointSuccess: a REGIONAL
        # completion clears the count too (RegionalCheckpointHandler.completeRegionalCheckpoint)
        self.failed_checkpoints = 0
        outcome.failures_after = 0
        outcome.status = kind
        outcome.counter_after = self.consecutive_regional
        outcome.checkpoint = checkpoint
        outcome.notifications = notifications
        outcome.subsumed = tuple(c.checkpoint_id for c in subsumed)
        outcome.objects_to_delete = frozenset(doomed)
        return outcome

    def _abort(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, reason: str):
        if not pending.savepoint:
            self.consecutive_regional, self.force_global_next = after_abort(
                self.settings, reason, forced=pending.forced_global, counter=self.consecutive_regional,
                force_next=self.force_global_next)
        # abortPendingCheckpoint -> CheckpointFailureManager.handleCheckpointException
        counted = counts_as_failed_checkpoint(self.settings, forced=pending.forced_global, savepoint=pending.savepoint)
        self.failed_checkpoints, outcome.job_failed = after_failure_count(
            self.settings, self.failed_checkpoints, counted=counted)
        outcome.failures_after = self.failed_checkpoints
        if self.mutant == "fallback-to-aborted":
            for task, states in pending.acks.items():
                self.fallback[task] = (states, pending.checkpoint_id)
        written = {k for states in pending.acks.values() for st in states.values() for h in st.handles
                   if h.checkpoint_id == pending.checkpoint_id for k in [h.object_key]}
        outcome.status = ABORTED
        outcome.reason = reason
        outcome.counter_after = self.consecutive_regional
        outcome.notifications = {t: N_ABORTED for t in self.graph.tasks()}
        outcome.objects_to_delete = frozenset(self.store.discard_aborted(written))
        return outcome

    # -- restoring -------------------------------------------------------------------

    def restore_region(self, region: int) -> dict[Task, States]:
        """Region failover: the region's tasks restart from their entries in the
        latest completed checkpoint (possibly older, referenced handles)."""
        out = {}
        latest = self.store.latest()
        for task in self.region_tasks(region):
            states = self.fallback[task][0] if task in self.fallback else empty_states(self.graph, task)
            if latest is not None:  # StateAssignmentOperation: union state goes to every subtask, always
                states = {**states, **union_lists(self.graph, self.operator_modes, latest, task)}
            out[task] = states
            self.finished.pop(task, None)
            if self.enumerator is not None and task[0] == self.vertex_of[self.source_operator]:
                self.enumerator.add_splits_back(task[1], states[self.source_operator].elements)
        return out

    def restore_global(self, new_parallelism: int | None = None, fixed_vertices: tuple[str, ...] = ()) -> dict[Task, States]:
        """Global failover / rescale: every task restarts from the latest completed
        checkpoint L, redistributed when the parallelism changes."""
        latest = self.store.latest()
        if latest is None:
            raise RuntimeError("no completed checkpoint to restore from")
        if new_parallelism is not None:
            self._set_graph(self.graph.with_parallelism(new_parallelism, fixed_vertices))
        self.finished = {}
        restored, rescaled = assign_all(self.graph, self.operator_modes, latest, self.source_operator,
                                        mutant=self.mutant)
        if rescaled and self.settings.semantics == PR:
            # as implemented: the failed subtask's index in L, at L's (old) parallelism
            self._fallback_from(latest)
        elif rescaled:
            # a new subtask that fails its first checkpoint falls back to its
            # redistributed restored state, ref = the checkpoint restored from
            self.fallback = {t: (states, latest.checkpoint_id) for t, states in restored.items()}
        else:
            self._fallback_from(latest)
        if self.enumerator is not None:
            p = self.graph.vertex(self.vertex_of[self.source_operator]).parallelism
            splits = source_splits(restored, self.vertex_of[self.source_operator], self.source_operator)
            self.enumerator.reset_to_checkpoint(latest.coordinator_state, splits, p)
        return restored
