"""The task side of a checkpoint: how each subtask responds to the trigger, and what a notification
does when it reaches it.

In:  the run being emulated (`regionchaos.emulator.Emulation`: its data flow, nemesis, open
     storage batch and settings), the pending checkpoint and the attempt's faults; later, one
     notification reaching one task.
Out: at the trigger, each expected subtask's response (`Response`): a decline (drawn, or a failed
     state upload with file merging) or an ack with the states its snapshot wrote (the snapshot is
     taken now, at the barrier; the ack arrives after its upload time, after the timeout when the
     task is silent or its PUT slow, never when its TaskManager's acks are lost, ``ack_loss``), and
     the task side's own record of them (the TASK_RESPONSES event: ``[vertex, subtask, response,
     at_ms, upload_ms, reason]``; a lost ack is ``ack`` with ``at_ms`` null, it never arrived, its
     upload time, and reason ``ack_loss``). On a notification (`deliver`): a sink subtask commits
     its pending transactions up to the checkpoint it is told completed; a task ignores a
     notification of a checkpoint no newer than the last it was told of; after a global one a
     source whose input had ended at that checkpoint's trigger finishes (FLIP-147).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .history import Kind
from .nemesis import AttemptFaults, Nemesis
from .protocol.coordinator import (
    N_ABORTED,
    N_COMPLETE,
    N_REGIONAL_COMPLETE,
    CheckpointCoordinator,
    CoordinatorSettings,
    PendingCheckpoint,
)
from .protocol.topology import Task
from .scenario import Scenario
from .workload.dataflow import PROCESS, SOURCE, SOURCE_OPERATORS, Dataflow

UPLOAD_FAILED = "CHECKPOINT_DECLINED_STATE_UPLOAD_FAILED"
ACK_LOST = "ack_loss"  # the reason of an ack sent but never received: the fault kind's name


class Run(Protocol):
    sc: Scenario
    tms: int
    attempt: int
    mutant: str | None
    settings: CoordinatorSettings
    nemesis: Nemesis
    flow: Dataflow
    coordinator: CheckpointCoordinator
    batch: Any  # the open `regionchaos.emulator.Batch`
    stats: dict[str, Any]

    def log(self, kind: Kind, **fields: Any) -> dict: ...


@dataclass(frozen=True)
class Response:
    """One task's response to checkpoint N, as the task side sends it: ``at_ms`` after the trigger
    (None: it never arrives), its snapshot's ``states`` and object (an ack), or the decline's
    ``reason``; ``done_ms``: when its state object was uploaded (None: nothing uploaded)."""

    task: Task
    at_ms: int | None
    states: dict | None = None
    key: str | None = None
    done_ms: int | None = None
    reason: str | None = None

    @property
    def ack(self) -> bool:
        return self.states is not None


def object_key(checkpoint_id: int, task: Task, taskmanagers: int, file_merging: bool) -> str:
    """Where a task's snapshot for a checkpoint lives (FLIP-306 file merging:
    one physical file per TaskManager and checkpoint)."""
    if file_merging:
        return f"checkpoints/chk-{checkpoint_id}/tm-{task[1] % taskmanagers}.state"
    return f"checkpoints/chk-{checkpoint_id}/{task[0]}-{task[1]}.state"


def respond(em: Run, pending: PendingCheckpoint, faults: AttemptFaults) -> tuple[list[list], list[Response]]:
    """Every expected task takes its snapshot now (the barrier reached it) and plans its response:
    (the task side's record, the responses in task order)."""
    cid, batch = pending.checkpoint_id, em.batch
    merging, timeout = em.sc.flink.file_merging, em.sc.flink.timeout_ms
    expected = sorted(pending.expected)
    limit = min(timeout, em.settings.deadline_ms or timeout) if faults.healing else timeout
    upload = em.nemesis.upload_times(em.attempt, expected, limit)
    record, out = [], []
    for task in expected:
        tm = task[1] % em.tms
        lat = upload[task]
        if task in faults.declines:
            record.append([task[0], task[1], "decline", lat, None, faults.declines[task]])
            out.append(Response(task, lat, reason=faults.declines[task]))
            continue
        if tm in faults.put_failures and merging:
            batch.put_failures.add((cid, tm))
            record.append([task[0], task[1], "decline", lat, None, UPLOAD_FAILED])
            out.append(Response(task, lat, reason=UPLOAD_FAILED))
            continue
        key = object_key(cid, task, em.tms, merging)
        states = em.flow.snapshot(cid, task, key, task[1] % em.tms, batch.state_rows)
        slow = tm in faults.slow_puts and merging
        if (slow or task in faults.timeouts) and tm in faults.slow_puts:
            batch.slow_puts.add((cid, tm))
        # a silent task's ack, and a slow PUT's, arrive after the checkpoint timeout
        done = timeout + 1 + lat if slow else lat
        at = timeout + 1 + lat if task in faults.timeouts or slow else lat
        if tm in faults.ack_losses:  # ack_loss: snapshot and upload done, the ack never arrives
            record.append([task[0], task[1], "ack", None, done, ACK_LOST])
            out.append(Response(task, None, states, key, done))
            continue
        record.append([task[0], task[1], "ack", at, done, None])
        out.append(Response(task, at, states, key, done))
    return record, out


class Notified(Run, Protocol):
    reported: dict[Task, int]  # the newest checkpoint each task was told completed (``latestReportCheckpointId``)


def deliver(em: Notified, task: Task, checkpoint_id: int, kind: str, *, region: int, attempt: int,
            latest_completed: int | None = None, global_checkpoint: Any = None,
            sources_done: frozenset[int] = frozenset()) -> list[dict]:
    """Notification ``kind`` of checkpoint ``checkpoint_id`` reaches ``task``: the sink's commits it
    makes (a step for the open batch). A complete (or regional-complete) notification of a checkpoint
    no newer than the last this task was told of is dropped (``StreamTask.notifyCheckpointComplete``:
    ``if (checkpointId <= latestReportCheckpointId) return``, raoraoxiong/flink
    550bf6034a3a41c537f175039d28277827479c46); a fallback notification commits nothing and leaves that
    mark alone; an abort notification carries the latest completed checkpoint, which the task
    completes first under ``pr`` (``notifyCheckpointAbortAsync``: ``if (latestCompletedCheckpointId > 0)
    notifyCheckpointComplete(latestCompletedCheckpointId)``; ``latest_completed`` is None under
    ``flip``, whose aborted checkpoint is only aborted, PROTOCOL.md 3.6). ``global_checkpoint``: a
    GLOBAL checkpoint's CompletedCheckpoint, whose notification lets a source subtask in
    ``sources_done`` (its input had ended at the trigger) finish (FLIP-147)."""
    if kind == N_ABORTED:
        if latest_completed is None:
            return []
        checkpoint_id, kind = latest_completed, N_COMPLETE
    if kind not in (N_COMPLETE, N_REGIONAL_COMPLETE) or checkpoint_id <= em.reported.get(task, -1):
        return []
    em.reported[task] = checkpoint_id
    vertex, sub = task
    if vertex == PROCESS:
        return em.flow.notified(sub, region, checkpoint_id, attempt)
    coord = em.coordinator
    if global_checkpoint is not None and sub in sources_done and task not in coord.finished:
        states = global_checkpoint.operator_states
        coord.task_finished(task, {op: states[(op, sub)] for op in SOURCE_OPERATORS})
        em.log(Kind.TASK_FINISHED, vertex=SOURCE, subtask=sub, checkpoint_id=checkpoint_id)
    return []
