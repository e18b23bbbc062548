"""The notifications of a checkpoint's end, on their way to the tasks.

In:  a checkpoint attempt that ended (`regionchaos.checkpointing.Attempt`) and its outcome: each task's
     notification (complete, regional-complete, fallback; aborted).
Out: each task's notification delivered after its drawn delay (``timing.notify_ms``; tasks with the same
     delay in one event, in task order) to the task side (`regionchaos.task_side.deliver`), whose sink
     commits go to the open batch as a commit step; a ``notified`` history event per delivery to sink
     subtasks of a completed checkpoint, naming the commit file their commits go to (the rules read it as
     the sinks' clock: `expectations/sql/notifications/commit_upon_notification.sql`). An aborted
     checkpoint notifies nothing under ``flip`` (PROTOCOL.md 3.6); under ``pr`` its abort notification
     carries the latest completed checkpoint, which a task not yet told of it completes first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .faultkinds import Stream, stream_rng
from .history import Kind
from .protocol.checkpoint import GLOBAL
from .protocol.coordinator import N_COMPLETE, CheckpointOutcome
from .protocol.rules import PR
from .task_side import deliver
from .workload.dataflow import PROCESS

if TYPE_CHECKING:
    from .checkpointing import Attempt
    from .emulator import Emulation

_NOTIFY, _ABORT_NOTIFY = 3, 4  # their delays' sub-streams of `Stream.TIMING` (`regionchaos.checkpointing` has 1, 2)


class Notifier:
    def __init__(self, em: Emulation):
        self.em = em

    def send(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """Each task's notification, delivered after its drawn delay (tasks with the same delay in one
        event, in task order). Under ``pr`` an abort notification carries the latest completed id."""
        em, coord = self.em, attempt.coordinator
        latest = None
        if not outcome.completed and N_COMPLETE not in outcome.notifications.values():  # (that: a mutant's)
            if em.settings.semantics != PR or coord.store.latest() is None:
                return  # FLIP: an aborted checkpoint is only aborted (PROTOCOL.md 3.6)
            latest = coord.store.latest().checkpoint_id
        tasks = sorted(outcome.notifications)
        lo, hi = em.sc.timing.notify_ms
        stream = _ABORT_NOTIFY if not outcome.completed else _NOTIFY
        delays = ([lo] * len(tasks) if lo == hi else
                  stream_rng(em.sc.seed, Stream.TIMING, attempt.index, stream, attempt.checkpoint_id)
                  .integers(lo, hi + 1, size=len(tasks)).tolist())
        groups: dict[int, list] = {}
        for task, delay in zip(tasks, delays):
            groups.setdefault(int(delay), []).append(task)
        ctx = self.context(attempt, outcome.notifications, completed=outcome.completed, latest=latest,
                            checkpoint=outcome.checkpoint if outcome.status == GLOBAL and not outcome.final else None)
        for delay in sorted(groups):
            em.clock.after(delay, self.delivered, ctx, groups[delay])
        if outcome.final and outcome.completed:
            em.finishing = (attempt.checkpoint_id, set(tasks))

    def context(self, attempt: Attempt, notifications: dict, *, completed: bool, latest: int | None = None,
                 checkpoint: Any = None) -> dict:
        """What a delivery of N's notifications needs, fixed when they are sent."""
        coord = attempt.coordinator
        return {"cid": attempt.checkpoint_id, "latest": latest, "notifications": notifications,
                "checkpoint": checkpoint, "sources_done": attempt.sources_done, "regions": dict(coord.regions),
                "checkpoint_completed": completed}

    def delivered(self, ctx: dict, tasks: list) -> None:
        em = self.em  # (a notification in flight still arrives after its JobManager died)
        if em.triggering.triggered_after(ctx["cid"]):
            em.interleaving("notification_after_next_trigger")
        completes = ctx["latest"] if ctx["latest"] is not None else ctx["cid"]
        sinks = sorted(t[1] for t in tasks if t[0] == PROCESS)
        if sinks and (ctx["latest"] is not None or ctx["checkpoint_completed"]):
            # the sinks told of completed N (complete, regional-complete or fallback); their commits go to the
            # next commit file: the rules' clock
            em.log(Kind.NOTIFIED, checkpoint_id=completes, subtasks=sinks, commit_file=em.next_commit_file(),
                   **({"aborted": ctx["cid"]} if ctx["latest"] is not None else {}))
        txns = []
        for task in tasks:
            kind = ctx["notifications"][task]
            region = ctx["regions"].get(task, 0)
            txns += deliver(em, task, ctx["cid"], kind, region=region, attempt=em.attempt,
                            latest_completed=ctx["latest"], global_checkpoint=ctx["checkpoint"],
                            sources_done=ctx["sources_done"])
        if txns:
            em.batch.steps.append({"op": "commit", "checkpoint_id": completes, "txns": txns})
        if em.finishing is not None and em.finishing[0] == ctx["cid"]:
            em.finishing[1].difference_update(tasks)
            if not em.finishing[1]:
                em.job_finished(ctx["cid"], "GLOBAL")

