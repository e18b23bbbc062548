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
    fallback_table,
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
    unacknowledged_at_old_parallelism,
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
    R_FAILOVER,  # noqa: F401
    R_SUBSUMED,  # noqa: F401
    R_FINALIZE,  # noqa: F401
    CoordinatorSettings,
)
from .restore import PendingTable, Restoring, Savepoints
from .store import CompletedCheckpointStore
from .topology import JobGraph, Task, pipeline_regions


def refresh_final_states(finished: dict[Task, States], checkpoint: CompletedCheckpoint) -> None:
    """A finished task with a fresh entry in ``checkpoint`` (its snapshot, taken after its input ended and before it
    finished) has that entry as its final state from now on: the same state, in the newest checkpoint's object, so
    the older checkpoint it finished on can go when subsumed (`final_state_objects`)."""
    for (vertex, sub), states in finished.items():
        fresh = {op: checkpoint.operator_states.get((op, sub)) for op in states}
        if all(s is not None and s.ref_checkpoint_id is None for s in fresh.values()):
            finished[(vertex, sub)] = fresh


def final_state_objects(finished: dict[Task, States]) -> set[str]:
    """The objects the finished tasks' final states are in. Every later checkpoint reuses those states, so the
    cleaner keeps them (`CompletedCheckpointStore.live_objects`), also once the checkpoint a task finished on is
    subsumed: its notification may reach the task after newer checkpoints, each with the task's own fresh entry,
    were triggered, and one of those subsumes it."""
    return {key for states in finished.values() for s in states.values() for key in s.object_keys()}


class CheckpointCoordinator(PendingTable, Savepoints, Restoring):
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
        store.pinned = lambda: final_state_objects(self.finished)
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
        self.pending: dict[int, PendingCheckpoint] = {}  # checkpoint id -> not yet completed or aborted
        self.leaked: set[int] = set()  # PR: disposed but never removed from the pending table (a store failure)
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
        """Checkpoint N is triggered: the source coordinator snapshots first, then the tasks are asked. Under ``pr``
        the end of the sources sets the forced flag here (``checkAllSourcesFinishedAndForceGlobal``); whether N is
        forced is read at its decision (`regionchaos.protocol.rules.forced_at_decision`)."""
        at_trigger = self.counters.trigger(self.settings, sources_exhausted=self.sources_exhausted, mutant=self.mutant)
        pending = self._pending(forced=at_trigger, final=self.sources_exhausted, savepoint=False)
        pending.forced_at_trigger = at_trigger  # ``forced_global`` until the decision reads the flag again
        return pending

    def _pending(self, *, forced: bool, final: bool, savepoint: bool) -> PendingCheckpoint:
        cid = self.next_checkpoint_id
        self.next_checkpoint_id += 1
        pending = PendingCheckpoint.of_running_tasks(cid, self.graph, self.finished, self.source.snapshot(cid),
                                                     forced=forced, final=final, savepoint=savepoint)
        self.pending[cid] = pending
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
        outcome = self._undecided(pending, settled=False)
        pending.decided = self.abort(pending, outcome, R_SAVEPOINT_DECLINED if pending.savepoint else R_REGIONAL_OFF)
        return pending.decided

    # -- deciding -------------------------------------------------------------------

    def _undecided(self, pending: PendingCheckpoint, *, settled: bool) -> CheckpointOutcome:
        return undecided(self.settings, pending, self.regions, self.num_regions, settled=settled,
                         counter=self.counters.consecutive_regional, failures=self.counters.failed_checkpoints)

    def decide(self, pending: PendingCheckpoint, *, settled: bool = True) -> tuple[CheckpointOutcome, str, str | None]:
        """(the outcome record, GLOBAL / REGIONAL / ABORTED, the abort reason). Nothing completes
        here. The forced flag is read now (`regionchaos.protocol.rules.forced_at_decision`; the
        ``forced-flag-at-trigger`` mutant keeps the trigger's reading). A REGIONAL decision grafts
        the failed regions' entries now, from the latest completed checkpoint at this instant
        (``tryCompleteRegionalCheckpoint`` step 11 runs before it asks the coordinators, step 12); the
        coordinators' fallback state comes later (`region_fallback`). A checkpoint aborted at a
        decline: (that outcome, ABORTED, None)."""
        outcome = self._undecided(pending, settled=settled)
        if pending.decided is not None:
            decided = pending.decided
            decided.declined, decided.timed_out = dict(pending.declines), outcome.timed_out
            decided.failed_regions = outcome.failed_regions
            return decided, ABORTED, None
        outcome.counter_at_decision = self.counters.consecutive_regional
        if not pending.savepoint:
            pending.forced_global = (pending.forced_at_trigger if self.mutant == "forced-flag-at-trigger"
                                     else self.counters.forced_now(self.settings, mutant=self.mutant))
            outcome.forced_global = pending.forced_global
        kind, reason = decide(self.settings, pending, outcome, self.num_regions,
                              has_previous=self.store.latest() is not None, mutant=self.mutant)
        if reason is not None:
            return outcome, ABORTED, reason
        if kind == REGIONAL:
            pending.grafted = dict(self.fallback)
            pending.acked_after_graft = set()
            pending.fallback_from[pending.fallback_requests + 1] = getattr(self.store.latest(), "checkpoint_id", None)
        pending.kind, pending.decision = kind, outcome
        return outcome, kind, None

    def region_fallback(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, request: int | None = None) -> str | None:
        """The source coordinator's region-fallback state for N's ``request`` (else the last), overwriting N's
        coordinator state; under ``pr`` it first hands back the failed subtasks' splits assigned after the
        checkpoint that request's decision grafted from (``fallbackCheckpointId``): `protocol.holder`. Or the
        abort reason when it cannot produce one."""
        failed = [t for t in self.graph.tasks() if self.regions[t] in outcome.failed_regions]
        fallback_id = pending.fallback_from.get(request or max(pending.fallback_requests, 1))
        hand_back_after = fallback_id if self.settings.semantics == PR else None
        state, possible = self.source.region_fallback(pending.acks, pending.grafted or {}, failed,
                                                      hand_back_after=hand_back_after,
                                                      live=self.settings.semantics == PR,
                                                      at_trigger=pending.coordinator_snapshot
                                                      if self.mutant == "fallback-at-trigger" else None)
        pending.fallback_state = state
        return None if possible else R_NO_COORDINATOR_FALLBACK

    # -- completing and aborting ------------------------------------------------------

    def complete(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, kind: str) -> CheckpointOutcome:
        """N completes as ``kind`` (its metadata written): into the store, the counters moved,
        every older pending checkpoint subsumed by the caller (`subsumed_pending`)."""
        self.pending.pop(pending.checkpoint_id, None)
        if pending.savepoint:
            return self._complete_savepoint(pending, outcome)
        return self._complete(pending, outcome, kind)

    def _complete(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, kind: str):
        grafted = pending.grafted if pending.grafted is not None else self.fallback
        if kind == GLOBAL and pending.grafted is not None:
            # PR: a GLOBAL completion after its REGIONAL decision grafted the failed regions' entries (a late ack of a task
            # the canceller marked declined, ``completePendingCheckpoint``): the graft stays where no late ack overwrote it
            entries, _ = merge_entries(self.graph.tasks(), self.regions, outcome.failed_regions, pending.acks,
                                       {t: g for t, g in grafted.items() if t not in pending.acked_after_graft},
                                       REGIONAL, mutant=self.mutant)
            notifications = {t: N_COMPLETE for t in self.graph.tasks()}
            outcome.failed_regions = ()  # a normal, fully acknowledged completion: no region fails it
        else:
            entries, notifications = merge_entries(self.graph.tasks(), self.regions, outcome.failed_regions,
                                                   pending.acks, grafted, kind, mutant=self.mutant)
        outcome.counter_before = self.counters.consecutive_regional  # other checkpoints may have ended since N's decision
        self.counters.completed(self.settings, kind)
        coord_state = pending.coordinator_snapshot or {}
        if kind == REGIONAL and pending.fallback_state is not None:
            coord_state = pending.fallback_state
        checkpoint = completed_checkpoint(pending.checkpoint_id, kind, self.graph, entries, coord_state,
                                          self.counters.consecutive_regional, failed_regions=outcome.failed_regions,
                                          num_regions=self.num_regions)
        if kind == REGIONAL and self.settings.semantics == PR:
            checkpoint = unacknowledged_at_old_parallelism(self.graph, self.store, pending, checkpoint)
        refresh_final_states(self.finished, checkpoint)  # before the store's cleaner reads what they keep
        subsumed, doomed = self.store.add(checkpoint)
        self._fallback_from(checkpoint)
        return outcome.completed_as(kind, checkpoint, counter=self.counters.consecutive_regional,
                                    notifications=notifications, subsumed=tuple(c.checkpoint_id for c in subsumed),
                                    objects_to_delete=frozenset(doomed))

    def abort(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, reason: str) -> CheckpointOutcome:
        """N is aborted for ``reason``: out of the pending table, the counters and the failure count
        moved (`CheckpointCounters.aborted`), the objects its acks wrote to delete."""
        self.pending.pop(pending.checkpoint_id, None)
        outcome.counter_before = self.counters.consecutive_regional
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
