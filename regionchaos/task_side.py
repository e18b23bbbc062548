"""The task side of a checkpoint: how each subtask responds to the trigger and to the
notification of the decision.

In:  the run being emulated (`regionchaos.emulator.Emulation`: its data flow, nemesis, open
     storage batch and settings), the pending checkpoint and the attempt's faults.
Out: each expected subtask's response, handed to the coordinator as it arrives: a decline
     (drawn, or a failed state upload with file merging) or an ack with the states its
     snapshot wrote (late when the task is silent or its PUT slow: after the timeout; never
     when its TaskManager's acks are lost, ``ack_loss``). Returns the task side's own record of
     them (the TASK_RESPONSES event: ``[vertex, subtask, response, at_ms, upload_ms, reason]``;
     a lost ack is ``ack`` with ``at_ms`` null, it never arrived, its upload time, and reason
     ``ack_loss``) and the objects written.
     On a completed checkpoint's notification (`notify`) the sink's subtasks commit and, after a
     global one, sources whose input ended finish (FLIP-147).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .history import Kind
from .nemesis import AttemptFaults, Nemesis
from .protocol.coordinator import (
    N_COMPLETE,
    N_REGIONAL_COMPLETE,
    CheckpointCoordinator,
    CheckpointOutcome,
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
    settings: CoordinatorSettings
    nemesis: Nemesis
    flow: Dataflow
    coordinator: CheckpointCoordinator
    batch: Any  # the open `regionchaos.emulator.Batch`


def object_key(checkpoint_id: int, task: Task, taskmanagers: int, file_merging: bool) -> str:
    """Where a task's snapshot for a checkpoint lives (FLIP-306 file merging:
    one physical file per TaskManager and checkpoint)."""
    if file_merging:
        return f"checkpoints/chk-{checkpoint_id}/tm-{task[1] % taskmanagers}.state"
    return f"checkpoints/chk-{checkpoint_id}/{task[0]}-{task[1]}.state"


def respond(em: Run, pending: PendingCheckpoint, faults: AttemptFaults) -> tuple[list[list], set[str]]:
    coord, cid, batch = em.coordinator, pending.checkpoint_id, em.batch
    merging, timeout = em.sc.flink.file_merging, em.sc.flink.timeout_ms
    written: set[str] = set()
    expected = sorted(pending.expected)
    limit = min(timeout, em.settings.deadline_ms or timeout) if faults.healing else timeout
    upload = em.nemesis.upload_times(em.attempt, expected, limit)
    responses = []
    for task in expected:
        tm = task[1] % em.tms
        lat = upload[task]
        if task in faults.declines:
            responses.append([task[0], task[1], "decline", lat, None, faults.declines[task]])
            coord.receive_decline(pending, task, faults.declines[task])
            continue
        if tm in faults.put_failures and merging:
            batch.put_failures.add((cid, tm))
            responses.append([task[0], task[1], "decline", lat, None, UPLOAD_FAILED])
            coord.receive_decline(pending, task, UPLOAD_FAILED)
            continue
        key = object_key(cid, task, em.tms, merging)
        states = em.flow.snapshot(cid, task, key, task[1] % em.tms, batch.state_rows)
        written.add(key)
        slow = tm in faults.slow_puts and merging
        if (slow or task in faults.timeouts) and tm in faults.slow_puts:
            batch.slow_puts.add((cid, tm))
        # a silent task's ack, and a slow PUT's, arrive after the checkpoint timeout
        done = timeout + 1 + lat if slow else lat
        at = timeout + 1 + lat if task in faults.timeouts or slow else lat
        if tm in faults.ack_losses:  # ack_loss: snapshot and upload done, the ack never arrives
            responses.append([task[0], task[1], "ack", None, done, ACK_LOST])
            continue
        responses.append([task[0], task[1], "ack", at, done, None])
        coord.receive_acknowledge(pending, task, states, at_ms=at)
    return responses, written


class Notified(Run, Protocol):
    stats: dict[str, Any]

    def log(self, kind: Kind, **fields: Any) -> dict: ...


def notify(em: Notified, outcome: CheckpointOutcome, no_more_splits: Callable[[], bool]) -> None:
    """The tasks' side of notifyCheckpointComplete / regional-complete: the sink's subtasks
    commit their transactions (a step of the open batch); after a global checkpoint, sources
    whose input ended finish (FLIP-147); the final checkpoint ends the job."""
    if not outcome.completed:
        return
    cid = outcome.checkpoint_id
    txns = []
    for task, kind in outcome.notifications.items():
        if task[0] != PROCESS or kind not in (N_COMPLETE, N_REGIONAL_COMPLETE):
            continue
        txns += em.flow.notified(task[1], em.coordinator.regions[task], cid, em.attempt)
    if txns:
        em.batch.steps.append({"op": "commit", "checkpoint_id": cid, "txns": txns})
    if outcome.final:
        em.stats["finished"] = True
        em.log(Kind.JOB_FINISHED, checkpoint_id=cid, type=outcome.status)
    elif outcome.status == "GLOBAL":
        _finish_tasks(em, outcome, no_more_splits)


def _finish_tasks(em: Notified, outcome: CheckpointOutcome, no_more_splits: Callable[[], bool]) -> None:
    """FLIP-147: a task finishes after notifyCheckpointComplete of a
    checkpoint taken after its input ended; the job ends on the final one."""
    coord = em.coordinator
    if em.flow.length is None or not no_more_splits():
        return
    for sub in list(em.flow.owned):
        task = (SOURCE, sub)
        if task in coord.finished:
            continue
        if em.flow.source_done(sub):
            states = outcome.checkpoint.operator_states
            coord.task_finished(task, {op: states[(op, sub)] for op in SOURCE_OPERATORS})
            em.log(Kind.TASK_FINISHED, vertex=SOURCE, subtask=sub, checkpoint_id=outcome.checkpoint_id)
