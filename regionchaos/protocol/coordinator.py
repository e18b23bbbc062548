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

The coordinator owns the order of events, the fallback table and the tasks that finished; its
rooms hold the rest: each checkpoint's record of responses and its outcome (`pending`), what the
responses decide (`decision`), the abort rules, the counter rules and the settings they read
(`rules`), the counter, the forced flag and the consecutive failed checkpoints those rules move
(`counters`: ``coordinator.counters``), the merged checkpoint's entries and notifications and the
CompletedCheckpoint (`merge`), what it asks of the split enumerator (`holder`:
``coordinator.source``), and the state each task restores and the fallback table after it
(`assignment`, Flink's StateAssignmentOperation).
"""

from __future__ import annotations

from .assignment import (
    States,
    assign_all,
    fallback_after_restore,
    fallback_table,
    region_states,
)
from .checkpoint import GLOBAL, REGIONAL, CompletedCheckpoint
from .counters import CheckpointCounters
from .decision import decide, undecided
from .enumerator import SplitEnumerator
from .holder import OperatorCoordinatorHolder
from .merge import (  # noqa: F401 - C.N_...
    N_ABORTED,
    N_COMPLETE,
    N_FALLBACK,
    N_REGIONAL_COMPLETE,
    completed_checkpoint,
    merge_entries,
)
from .pending import ABORTED, CheckpointOutcome, PendingCheckpoint  # noqa: F401 - C.ABORTED, callers' imports
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
)
from .store import CompletedCheckpointStore
from .topology import JobGraph, Task, pipeline_regions


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
        self.source = OperatorCoordinatorHolder(enumerator, source_operator, self.vertex_of.get(source_operator))
        latest = store.latest()
        # FLIP: a new JobManager rebuilds the counter from storage; PR: it lives in memory only.
        # The failure count (CheckpointFailureManager) is in memory: a new JobManager starts at 0.
        self.counters = CheckpointCounters(
            consecutive_regional=latest.consecutive_regional if latest and settings.semantics != PR else 0)
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

    def _fallback_from(self, cp: CompletedCheckpoint) -> None:
        self.fallback = fallback_table(self.graph, cp, gaps_allowed=self.settings.semantics == PR)

    # -- triggering -------------------------------------------------------------------

    def task_finished(self, task: Task, final_states: States) -> None:
        """FLIP-147: a finished task is no longer triggered; its final state is reused."""
        self.finished[task] = final_states

    def trigger_checkpoint(self) -> PendingCheckpoint:
        forced = self.counters.trigger(self.settings, sources_exhausted=self.sources_exhausted, mutant=self.mutant)
        return self._pending(forced=forced, final=self.sources_exhausted, savepoint=False)

    def trigger_savepoint(self) -> PendingCheckpoint:
        """A savepoint: never forced, never final, and it leaves the forced flag alone
        (``RegionalCheckpointHandler.checkAllSourcesFinishedAndForceGlobal`` skips
        ``props.isSavepoint()``, apache/flink 4e120137). It takes the next checkpoint id."""
        return self._pending(forced=False, final=False, savepoint=True)

    def _pending(self, *, forced: bool, final: bool, savepoint: bool) -> PendingCheckpoint:
        cid = self.next_checkpoint_id
        self.next_checkpoint_id += 1
        return PendingCheckpoint.of_running_tasks(cid, self.graph, self.finished, self.source.snapshot(cid),
                                                  forced=forced, final=final, savepoint=savepoint)

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
        outcome = undecided(self.settings, pending, self.regions, self.num_regions, settled=False,
                            counter=self.counters.consecutive_regional, failures=self.counters.failed_checkpoints)
        pending.decided = self._abort(pending, outcome, R_SAVEPOINT_DECLINED if pending.savepoint else R_REGIONAL_OFF)
        return pending.decided

    # -- deciding -------------------------------------------------------------------

    def complete_pending_checkpoint(self, pending: PendingCheckpoint) -> CheckpointOutcome:
        """Decide checkpoint N once every task responded or timed out (section 3). A checkpoint
        already aborted at a decline keeps that decision; its record of responses is completed."""
        outcome = undecided(self.settings, pending, self.regions, self.num_regions, settled=True,
                            counter=self.counters.consecutive_regional, failures=self.counters.failed_checkpoints)
        if pending.decided is not None:
            decided = pending.decided
            decided.declined, decided.timed_out = dict(pending.declines), outcome.timed_out
            decided.failed_regions = outcome.failed_regions
            return decided
        kind, reason = decide(self.settings, pending, outcome, self.num_regions,
                              has_previous=self.store.latest() is not None, mutant=self.mutant)
        coordinator_state = None
        if kind == REGIONAL:
            coordinator_state, reason = self._coordinator_fallback(pending, outcome.failed_regions)
        if reason is not None:
            return self._abort(pending, outcome, reason)
        if pending.savepoint:
            return self._complete_savepoint(pending, outcome)
        return self._complete(pending, outcome, kind, coordinator_state or {})

    def _coordinator_fallback(self, pending: PendingCheckpoint, failed_regions: tuple[int, ...]):
        """(the source coordinator's region-fallback state, abort reason or None)."""
        failed = [t for t in self.graph.tasks() if self.regions[t] in failed_regions]
        hand_back_after = self.store.latest().checkpoint_id if self.settings.semantics == PR else None
        state, possible = self.source.region_fallback(pending.acks, self.fallback, failed,
                                                      hand_back_after=hand_back_after)
        return state, (None if possible else R_NO_COORDINATOR_FALLBACK)

    # -- completing and aborting ------------------------------------------------------

    def _complete_savepoint(self, pending: PendingCheckpoint, outcome: CheckpointOutcome) -> CheckpointOutcome:
        """A savepoint every task acknowledged. It is not added to the CompletedCheckpointStore
        (``completePendingCheckpoint``: ``if (!props.isSavepoint())`` around the store), tasks
        are not notified (``cleanupAfterCompletedCheckpoint`` notifies for a savepoint only if
        synchronous), the failure count clears (``reportCompletedCheckpoint`` ->
        ``CheckpointFailureManager.handleCheckpointSuccess``), and the counters move as
        `CheckpointCounters.savepoint_completed` says."""
        self.counters.savepoint_completed(self.settings)
        states = {(op, t[1]): st for t, states in pending.acks.items() for op, st in states.items()}
        checkpoint = completed_checkpoint(pending.checkpoint_id, GLOBAL, self.graph, states,
                                          pending.coordinator_snapshot or {}, self.counters.consecutive_regional,
                                          failed_regions=(), num_regions=self.num_regions)
        return outcome.completed_as(GLOBAL, checkpoint, counter=self.counters.consecutive_regional)

    def _complete(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, kind: str, coord_state: dict):
        entries, notifications = merge_entries(self.graph.tasks(), self.regions, outcome.failed_regions, pending.acks,
                                               self.fallback, kind, mutant=self.mutant)
        self.counters.completed(self.settings, kind)
        if kind == GLOBAL:
            coord_state = pending.coordinator_snapshot or {}
        checkpoint = completed_checkpoint(pending.checkpoint_id, kind, self.graph, entries, coord_state,
                                          self.counters.consecutive_regional, failed_regions=outcome.failed_regions,
                                          num_regions=self.num_regions)
        subsumed, doomed = self.store.add(checkpoint)
        self._fallback_from(checkpoint)
        return outcome.completed_as(kind, checkpoint, counter=self.counters.consecutive_regional,
                                    notifications=notifications, subsumed=tuple(c.checkpoint_id for c in subsumed),
                                    objects_to_delete=frozenset(doomed))

    def _abort(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, reason: str):
        job_failed = self.counters.aborted(self.settings, reason, forced=pending.forced_global,
                                           savepoint=pending.savepoint)
        if self.mutant == "fallback-to-aborted":
            for task, states in pending.acks.items():
                self.fallback[task] = (states, pending.checkpoint_id)
        doomed = self.store.discard_aborted(pending.written_objects())
        return outcome.aborted_for(reason, counter=self.counters.consecutive_regional,
                                   failures=self.counters.failed_checkpoints, job_failed=job_failed,
                                   notifications={t: N_ABORTED for t in self.graph.tasks()},
                                   objects_to_delete=frozenset(doomed))

    # -- restoring -------------------------------------------------------------------

    def restore_region(self, region: int) -> dict[Task, States]:
        """Region failover: the region's tasks restart from their entries in the
        latest completed checkpoint (possibly older, referenced handles)."""
        tasks = [t for t, r in self.regions.items() if r == region]
        out = region_states(self.graph, self.operator_modes, self.store.latest(), self.fallback, tasks)
        for task, states in out.items():
            self.finished.pop(task, None)
            self.source.subtask_reset(task, states)
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
        self.fallback = fallback_after_restore(self.graph, latest, restored, rescaled=rescaled,
                                               pr=self.settings.semantics == PR)
        self.source.reset_to_checkpoint(latest.coordinator_state, restored, self.graph)
        return restored
