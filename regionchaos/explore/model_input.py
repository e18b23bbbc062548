"""The explorer's run model, a bounded job's input: how far each split was read, the end of input, finished
tasks and the job's end (`regionchaos.emulator.Emulation.check_end_of_input`, `regionchaos.notify`,
`regionchaos.task_side.deliver`, `regionchaos.failover.Failover._apply_restore`): a part of
`regionchaos.explore.model.Model`.

In:  the `Model`'s state; with bounded sources its ``flow``: the emulator's own `regionchaos.workload.Dataflow`
     (positions in records, split ownership, the positions each snapshot recorded), driven by the same calls at
     the same instants as the emulator drives it.
Out: the methods `Model` inherits: each says which method of the emulator it restates. With unbounded sources
     (``flow`` None) each of them does nothing, and the model is what it was without them.

What the data flow decides for the control plane (and only with bounded sources): whether the next checkpoint
is the final one (every split read to its end and none left to assign), which source subtasks finish (their
input had ended at the trigger of a GLOBAL checkpoint they are told of), and when the job finishes (every task
told of its final checkpoint's completion: the run ends there). The scope (`regionchaos.explore.scope.refuse`)
admits bounded jobs only where nothing drawn from the seed moves a position: a fixed number of records per
interval, aligned checkpoints, no partition discovery; and under the FLIP's semantics with one checkpoint at a
time (the PR's closed gateways hold split assignments, which the model leaves out).
"""

from __future__ import annotations

from collections import Counter

from ..protocol.coordinator import N_COMPLETE, N_REGIONAL_COMPLETE, CheckpointOutcome
from ..protocol.rules import R_SHUTDOWN
from ..protocol.state import OperatorSubtaskState
from ..protocol.topology import Task
from ..task_side import object_key
from ..workload.dataflow import SOURCE, SOURCE_OPERATORS, Dataflow
from .model_base import NOTIFY, Attempt

_STATS: Counter = Counter()  # the data flow's record counters: data only, shared by every copy of every model


def _no_log(*_args, **_kwargs) -> None:  # the data flow's history events (records lost, recovery): data only
    return None


def new_flow(scenario, mutant: str | None) -> Dataflow | None:
    """The emulator's data flow for a bounded job; None for unbounded sources (nothing of it reaches a decision)."""
    return Dataflow(scenario, _STATS, _no_log, mutant) if scenario.workload.bounded else None


class Input:
    """A bounded job's input and its end (a part of `Model`)."""

    def _flow_assigned(self, assigned: dict[int, list[int]]) -> None:
        """`Emulation.assign_splits`: the readers get the splits the enumerator handed out (under the FLIP no
        gateway is ever closed: the scope refuses the PR for bounded jobs)."""
        if self.flow is None:
            return
        for sub, new in assigned.items():
            for split in new:
                self.flow.assign(sub, split)

    def _advance(self, index: int) -> None:
        """`Dataflow.advance` in `Emulation.interval`: records flow between two checkpoints (a fixed number per
        split: the scope refuses a drawn one)."""
        if self.flow is not None:
            self.flow.advance(index)

    def _check_end_of_input(self) -> None:
        """`Emulation.check_end_of_input` (no partition discovery: the scope refuses it)."""
        if self.flow is None:
            return
        exhausted = not self.coord.enumerator.unassigned and self.flow.all_consumed()
        if exhausted != self.coord.sources_exhausted:
            self.coord.sources_exhausted = exhausted
            self._log("sources_exhausted", exhausted)

    def _sources_done(self) -> frozenset[int]:
        """`Checkpointing.trigger`: the source subtasks whose input had ended at the trigger."""
        if self.flow is None or self.coord.enumerator.unassigned:
            return frozenset()
        return frozenset(sub for sub in self.flow.owned if self.flow.source_done(sub))

    def _snapshot(self, cid: int, task: Task) -> dict[str, OperatorSubtaskState]:
        """`regionchaos.task_side.respond`: the task's snapshot, taken at the trigger (its positions)."""
        key = object_key(cid, task, self.tms, self.sc.flink.file_merging)
        return self.flow.snapshot(cid, task, key, task[1] % self.tms, [])

    def _apply_restore(self, restored: dict[Task, dict], partial: bool) -> None:
        """`Failover._apply_restore`: the restored tasks are told of nothing yet; the data flow restarts them."""
        if self.flow is None:
            return
        for task in restored:
            self.reported.pop(task, None)
        self.flow.restore(restored, partial, self.parallelism, self.coord.regions, self.index)

    def _flow_from_scratch(self) -> None:
        """`Failover.restart_from_scratch`: every split is read again from its start."""
        if self.flow is not None:
            self.flow.restart_from_scratch()

    def _send(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """`Notifier.send` with zero delays: one delivery of every task's notification, queued now. Only a
        completion's reaches the control plane (an abort notifies nothing under the FLIP; a sink's commits are
        data)."""
        if self.flow is None or attempt.notified or not outcome.completed:
            return
        checkpoint = outcome.checkpoint if outcome.status == "GLOBAL" and not outcome.final else None
        self._at(self.now_ms, NOTIFY, attempt.checkpoint_id, tuple(sorted(outcome.notifications.items())),
                 attempt.sources_done, checkpoint, outcome.final)

    def _notify(self, cid: int, notifications: tuple, sources_done: frozenset[int], checkpoint, final: bool) -> None:
        """`Notifier.delivered` and `regionchaos.task_side.deliver`: a task ignores a notification of a checkpoint
        no newer than the last it was told of; a source subtask whose input had ended at a GLOBAL checkpoint's
        trigger finishes on its notification (FLIP-147); the final checkpoint's delivery finishes the job."""
        for task, kind in notifications:
            if kind not in (N_COMPLETE, N_REGIONAL_COMPLETE) or cid <= self.reported.get(task, -1):
                continue
            self.reported[task] = cid
            vertex, sub = task
            if vertex == SOURCE and checkpoint is not None and sub in sources_done and task not in self.coord.finished:
                states = checkpoint.operator_states
                self.coord.task_finished(task, {op: states[(op, sub)] for op in SOURCE_OPERATORS})
                self._log("task_finished", sub, cid)
        if final:
            self._job_finished(cid)

    def _job_finished(self, cid: int) -> None:
        """`Emulation.job_finished`: the job is FINISHED, its coordinator shuts down (what is still pending is
        aborted, uncounted) and the run ends: nothing after it runs."""
        self._log("job_finished", cid)
        for pending, outcome in self.coord.abort_all_pending(R_SHUTDOWN):
            self._decided(outcome)
            self.attempts[pending.checkpoint_id].ended = outcome.status
        self.done = True
        self.queue = []
