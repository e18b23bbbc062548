"""The CheckpointCoordinator of FLIP-600 (PROTOCOL.md sections 3, 5, 6).

In:  a job graph, settings (Flink keys), the CompletedCheckpointStore, the
     source's OperatorCoordinator, and per checkpoint the subtasks' acks
     (with their OperatorSubtaskStates), declines and silences.
Out: for each checkpoint a :class:`CheckpointOutcome`: GLOBAL, REGIONAL or
     ABORTED with the reason, the pre-merged CompletedCheckpoint, the
     notifications each task gets, and the objects the cleaner may delete.
     Restores (region failover, global failover, rescale) return the state
     each task starts from.

Every decision rule lives in :meth:`CheckpointCoordinator.complete_pending_checkpoint`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .checkpoint import GLOBAL, REGIONAL, CompletedCheckpoint
from .enumerator import SplitEnumerator
from .state import UNION, OperatorSubtaskState, assign_channel_state, redistribute_handles
from .store import CompletedCheckpointStore
from .topology import JobGraph, Task, pipeline_regions, tasks_to_trigger

ABORTED = "ABORTED"

# abort reasons (one name per rule of PROTOCOL.md section 3.4)
R_REGIONAL_OFF = "regional-checkpoints-disabled"
R_SINGLE_REGION = "single-region"
R_ALL_FAILED = "all-regions-failed"  # nothing fresh: a REGIONAL checkpoint needs a healthy region (invariant 2)
R_NO_PREVIOUS = "no-completed-checkpoint"
R_FAILURE_RATIO = "failure-ratio-exceeded"
R_FORCED_GLOBAL = "forced-global-failed"
R_NO_COORDINATOR_FALLBACK = "coordinator-no-region-fallback"
R_FINAL = "final-checkpoint-must-be-global"
R_EXPIRED = "checkpoint-expired"  # semantics "pr": a silent task lets the whole checkpoint expire

FLIP, PR = "flip", "pr"  # CoordinatorSettings.semantics

# notification kinds
N_COMPLETE = "complete"
N_REGIONAL_COMPLETE = "regional-complete"
N_FALLBACK = "fallback"
N_ABORTED = "aborted"

States = dict[str, OperatorSubtaskState]  # operator -> state of one task


@dataclass(frozen=True)
class CoordinatorSettings:
    """The coordinator's Flink settings. No defaults here: they live once, in the scenario model.

    ``semantics``: ``flip`` decides as the FLIP-600 proposal (PROTOCOL.md section 3);
    ``pr`` as its implementation in apache/flink (``RegionalCheckpointHandler``): the forced
    flag is set after a regional checkpoint completes (so ``max-consecutive-failures = 0``
    still lets one through) and survives an abort by the failure ratio; the counter and the
    flag live in memory only (a new JobManager starts from 0); only declines fail a region (a
    silent task lets the checkpoint expire); no all-regions-failed rule; after a rescale a
    failed subtask's fallback is its index in the latest checkpoint, at the old parallelism.

    ``timeout_ms`` / ``region_timeout_ms``: the deadlines, in ms after the trigger, of a
    response that carries its arrival time (``receive_acknowledge(..., at_ms=)``). An ack after
    the deadline is discarded and its task counts as timed out. The deadline is the region
    timeout when regional checkpoints are on under ``flip`` and one is set (the dev list's
    "per-region timeout": the silent task's region is marked failed), else the checkpoint
    timeout; the PR has no per-region timeout. None: responses carry no time (unit tests of
    the decision rules)."""

    region_enabled: bool
    max_failure_ratio: float
    max_consecutive_failures: int
    forced_global_policy: str  # "reset-counter" (the FLIP's tier 2) or "keep-forcing"
    semantics: str = FLIP  # the one default: code and tests that predate the option mean the FLIP
    timeout_ms: int | None = None
    region_timeout_ms: int | None = None

    @property
    def deadline_ms(self) -> int | None:
        """How long after the trigger an acknowledgement still counts."""
        if self.region_enabled and self.semantics == FLIP and self.region_timeout_ms is not None:
            return self.region_timeout_ms
        return self.timeout_ms


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
    checkpoint: CompletedCheckpoint | None = None
    notifications: dict[Task, str] = field(default_factory=dict)
    subsumed: tuple[int, ...] = ()
    objects_to_delete: frozenset[str] = frozenset()

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

    def _task_states(self, cp: CompletedCheckpoint, task: Task) -> States | None:
        """The task's entries in ``cp``; None if it has none (Flink restores such a subtask empty)."""
        vertex, sub = task
        ops = self.graph.vertex(vertex).operators
        if any((op, sub) not in cp.operator_states for op in ops):
            return None
        return {op: cp.operator_states[(op, sub)] for op in ops}

    def _empty_states(self, task: Task) -> States:
        return {op: OperatorSubtaskState(()) for op in self.graph.vertex(task[0]).operators}

    def _fallback_from(self, cp: CompletedCheckpoint) -> None:
        self.fallback = {}
        for t in self.graph.tasks():
            states = self._task_states(cp, t)
            if states is not None:
                self.fallback[t] = (states, cp.checkpoint_id)
            elif self.settings.semantics != PR:  # only the PR's fallback lookup can leave a gap
                raise KeyError(f"checkpoint {cp.checkpoint_id} has no entry for {t}")

    # -- triggering -------------------------------------------------------------------

    def task_finished(self, task: Task, final_states: States) -> None:
        """FLIP-147: a finished task is no longer triggered; its final state is reused."""
        self.finished[task] = final_states

    def trigger_checkpoint(self) -> PendingCheckpoint:
        cid = self.next_checkpoint_id
        self.next_checkpoint_id += 1
        running = set(self.graph.tasks()) - set(self.finished)
        if self.settings.semantics == PR:
            if self.settings.region_enabled and self.sources_exhausted:
                self.force_global_next = True  # checkAllSourcesFinishedAndForceGlobal
            forced = self.settings.region_enabled and self.mutant != "no-forced-global" and self.force_global_next
        else:
            forced = (
                self.settings.region_enabled
                and self.mutant != "no-forced-global"
                and self.consecutive_regional >= self.settings.max_consecutive_failures
            )
        snapshot = self.enumerator.checkpoint_coordinator() if self.enumerator else None
        pending = PendingCheckpoint(
            checkpoint_id=cid,
            forced_global=forced,
            final=self.sources_exhausted,
            triggered=tasks_to_trigger(self.graph, running),
            expected=running,
            coordinator_snapshot=snapshot,
        )
        for task, states in self.finished.items():
            pending.acks[task] = states
        return pending

    def receive_acknowledge(self, pending: PendingCheckpoint, task: Task, states: States,
                            at_ms: int | None = None) -> None:
        """``at_ms``: when the ack arrived, in ms after the trigger; past the deadline it is
        discarded (Flink's late acknowledgement) and the task counts as timed out."""
        self._check_response(pending, task)
        deadline = self.settings.deadline_ms
        if at_ms is not None and deadline is not None and at_ms > deadline:
            pending.late[task] = at_ms
            return
        pending.acks[task] = states

    def receive_decline(self, pending: PendingCheckpoint, task: Task, reason: str) -> None:
        self._check_response(pending, task)
        pending.declines[task] = reason

    def _check_response(self, pending: PendingCheckpoint, task: Task) -> None:
        if task not in pending.expected:
            raise ValueError(f"checkpoint {pending.checkpoint_id}: {task} was not asked")
        if task in pending.acks or task in pending.declines or task in pending.late:
            raise ValueError(f"checkpoint {pending.checkpoint_id}: {task} already responded")

    # -- completing -------------------------------------------------------------------

    def complete_pending_checkpoint(self, pending: PendingCheckpoint) -> CheckpointOutcome:
        """Decide checkpoint N once every task responded or timed out (section 3)."""
        timed_out = tuple(sorted(pending.expected - set(pending.acks) - set(pending.declines)))
        failed_tasks = set(pending.declines) | set(timed_out)
        failed_regions = tuple(sorted({self.regions[t] for t in failed_tasks}))
        before = self.consecutive_regional
        outcome = CheckpointOutcome(
            checkpoint_id=pending.checkpoint_id,
            status=ABORTED,
            reason=None,
            forced_global=pending.forced_global,
            final=pending.final,
            failed_regions=failed_regions,
            declined=dict(pending.declines),
            timed_out=timed_out,
            counter_before=before,
            counter_after=before,
        )
        if not failed_regions:
            return self._complete(pending, outcome, GLOBAL, {})
        reason = self._pr_abort_reason(pending, outcome) if self.settings.semantics == PR \
            else self._flip_abort_reason(pending, failed_regions)
        coordinator_state = None
        if reason is None:
            coordinator_state, reason = self._coordinator_fallback(pending, failed_regions)
        if reason is not None:
            return self._abort(pending, outcome, reason)
        return self._complete(pending, outcome, REGIONAL, coordinator_state or {})

    def _flip_abort_reason(self, pending: PendingCheckpoint, failed_regions: tuple[int, ...]) -> str | None:
        """PROTOCOL.md 3.4, in order."""
        s = self.settings
        if not s.region_enabled:
            return R_REGIONAL_OFF
        if self.num_regions == 1:
            return R_SINGLE_REGION
        if len(failed_regions) == self.num_regions:
            return R_ALL_FAILED
        if self.store.latest() is None:
            return R_NO_PREVIOUS
        if len(failed_regions) / self.num_regions > s.max_failure_ratio and self.mutant != "ignore-failure-ratio":
            return R_FAILURE_RATIO
        if pending.forced_global:
            return R_FORCED_GLOBAL
        if pending.final and self.mutant != "regional-final-checkpoint":
            return R_FINAL
        return None

    def _pr_abort_reason(self, pending: PendingCheckpoint, outcome: CheckpointOutcome) -> str | None:
        """``RegionalCheckpointHandler.tryCompleteRegionalCheckpoint``, in order. Only declined
        tasks fail a region there; a task that stays silent lets the checkpoint expire."""
        s = self.settings
        if outcome.timed_out:
            return R_EXPIRED
        failed_regions = outcome.failed_regions  # declines only: no task timed out
        if not s.region_enabled:
            return R_REGIONAL_OFF
        if self.num_regions == 1:
            return R_SINGLE_REGION
        if len(failed_regions) / self.num_regions > s.max_failure_ratio and self.mutant != "ignore-failure-ratio":
            return R_FAILURE_RATIO  # the forced flag stays set: the next checkpoint is forced again
        if pending.forced_global:
            return R_FORCED_GLOBAL  # tier 2: _abort resets counter and flag
        if self.store.latest() is None:
            return R_NO_PREVIOUS
        return None

    def _coordinator_fallback(self, pending: PendingCheckpoint, failed_regions: tuple[int, ...]):
        """(the source coordinator's region-fallback state, abort reason or None)."""
        if self.enumerator is None:
            return None, None
        failed = [t for t in self.graph.tasks() if self.regions[t] in failed_regions]
        merged = {t: self.fallback[t][0] for t in failed if t in self.fallback}
        state = self.enumerator.checkpoint_coordinator_for_region_fallback(
            self._source_splits({**pending.acks, **merged}))
        return state, (R_NO_COORDINATOR_FALLBACK if state is None else None)

    def _source_splits(self, task_states: dict[Task, States]) -> dict[int, list]:
        vertex = self.vertex_of[self.source_operator]
        return {
            sub: list(states[self.source_operator].elements)
            for (v, sub), states in task_states.items()
            if v == vertex
        }

    def _complete(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, kind: str, coord_state: dict):
        failed = set(outcome.failed_regions)
        entries = {}
        notifications = {}
        for task in self.graph.tasks():
            if self.regions[task] in failed:
                if task not in self.fallback:  # PR after a rescale: no entry at this index in L
                    notifications[task] = N_FALLBACK
                    continue
                states, ref = self.fallback[task]
                states = {op: st.as_reference(ref) for op, st in states.items()}
                notifications[task] = N_COMPLETE if self.mutant == "failed-region-commits" else N_FALLBACK
            else:
                states = pending.acks[task]
                notifications[task] = N_COMPLETE if kind == GLOBAL else N_REGIONAL_COMPLETE
            for op, st in states.items():
                entries[(op, task[1])] = st
        if kind == GLOBAL:
            self.consecutive_regional = 0
            self.force_global_next = False
            coord_state = pending.coordinator_snapshot or {}
        else:
            self.consecutive_regional += 1
            if self.consecutive_regional >= self.settings.max_consecutive_failures:
                self.force_global_next = True  # PR's tier 1: force the NEXT checkpoint
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
        outcome.status = kind
        outcome.counter_after = self.consecutive_regional
        outcome.checkpoint = checkpoint
        outcome.notifications = notifications
        outcome.subsumed = tuple(c.checkpoint_id for c in subsumed)
        outcome.objects_to_delete = frozenset(doomed)
        return outcome

    def _abort(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, reason: str):
        if self.settings.semantics == PR:
            if reason == R_FORCED_GLOBAL:  # tier 2 as implemented: counter and flag reset
                self.consecutive_regional, self.force_global_next = 0, False
        elif pending.forced_global and self.settings.forced_global_policy == "reset-counter":
            self.consecutive_regional = 0  # tier 2: a failed forced checkpoint aborts normally, counter reset
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
            states = self.fallback[task][0] if task in self.fallback else self._empty_states(task)
            if latest is not None:  # StateAssignmentOperation: union state goes to every subtask, always
                states = {**states, **self._union_lists(latest, task)}
            out[task] = states
            self.finished.pop(task, None)
            if self.enumerator is not None and task[0] == self.vertex_of[self.source_operator]:
                self.enumerator.add_splits_back(task[1], states[self.source_operator].elements)
        return out

    def _union_lists(self, cp: CompletedCheckpoint, task: Task) -> States:
        """Each union operator of the task's vertex: every subtask's list in ``cp``, concatenated
        in subtask order (Flink repartitions union state on every restore, rescaled or not)."""
        out = {}
        for op in self.graph.vertex(task[0]).operators:
            if self.operator_modes.get(op) != UNION:
                continue
            p = cp.parallelism.get(op, 0)
            handles = tuple(h for i in range(p) for h in cp.operator_states.get((op, i), OperatorSubtaskState(())).handles)
            out[op] = OperatorSubtaskState(handles)
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
        restored: dict[Task, States] = {t: {} for t in self.graph.tasks()}
        rescaled = False
        for vertex, op in self.graph.operators():
            old_p = latest.parallelism[op]
            new_p = self.graph.vertex(vertex).parallelism
            old_states = [latest.operator_states.get((op, i), OperatorSubtaskState(())) for i in range(old_p)]
            mode = self.operator_modes[op]
            if old_p == new_p and mode != UNION:
                parts = [s.handles for s in old_states]
            else:
                parts = redistribute_handles(old_states, new_p, mode, mutant=self.mutant)
            rescaled = rescaled or old_p != new_p
            for i, handles in enumerate(parts):
                restored[(vertex, i)][op] = OperatorSubtaskState(handles=handles)
        self._restore_channel_state(latest, restored)
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
            self.enumerator.reset_to_checkpoint(latest.coordinator_state, self._source_splits(restored), p)
        return restored

    def _restore_channel_state(self, latest: CompletedCheckpoint, restored: dict[Task, States]) -> None:
        """Channel state follows its channel (split) to the subtask that now reads it."""
        if not any(s.channel_state for s in latest.operator_states.values()):
            return
        source_vertex = self.vertex_of[self.source_operator]
        owner = {split: sub for (v, sub), states in restored.items() if v == source_vertex
                 for split in states[self.source_operator].elements}
        for vertex, op in self.graph.operators():
            old = [s for (o, _), s in latest.operator_states.items() if o == op]
            if not any(s.channel_state for s in old):
                continue
            parts = assign_channel_state(old, owner.__getitem__, self.graph.vertex(vertex).parallelism)
            for i, channels in enumerate(parts):
                st = restored[(vertex, i)][op]
                restored[(vertex, i)][op] = OperatorSubtaskState(st.handles, channels)
