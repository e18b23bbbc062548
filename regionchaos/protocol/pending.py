"""One checkpoint's record: the responses while it is pending, and the decision it ends with.

In:  the job graph and its finished tasks' final states, the source coordinator's snapshot, and
     each task's response: an ack with its OperatorSubtaskStates (late past the deadline), or a
     decline with its reason.
Out: a :class:`PendingCheckpoint`: the tasks asked and triggered, which of them timed out,
     which regions failed, which objects its acks wrote; and the :class:`CheckpointOutcome`
     that records the coordinator's decision (GLOBAL, REGIONAL or ABORTED with the reason, the
     counters before and after, the CompletedCheckpoint, the notifications, the objects the
     cleaner may delete).

Pure data and their own arithmetic: the coordinator (`regionchaos.protocol.coordinator`) decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .assignment import States
from .checkpoint import CompletedCheckpoint
from .topology import JobGraph, Task, tasks_to_trigger

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
    # -- while it is pending in emulated time (`regionchaos.checkpointing`) --
    forced_at_trigger: bool = False  # what a reading of the forced flag at the trigger said
    phase: str = "pending"  # pending -> fallback (a REGIONAL decision waits for its coordinator) -> finalizing
    grafted: dict[Task, tuple[States, int]] | None = None  # the failed regions' entries, grafted at the decision
    decision: CheckpointOutcome | None = None  # the REGIONAL or GLOBAL decision taken, its completion to come
    kind: str | None = None  # GLOBAL or REGIONAL, once decided
    marked_declined: set[Task] = field(default_factory=set)  # PR: silent at the timeout, marked declined
    acked_after_graft: set[Task] = field(default_factory=set)  # PR: their late ack overwrote the graft
    fallback_requests: int = 0  # region-fallback futures requested (the PR's decision can run again)
    # request number -> the checkpoint its decision grafted from (``lastCompleted`` read at that decision): the
    # fallbackCheckpointId the coordinator's region-fallback call is handed, whenever it runs
    fallback_from: dict[int, int | None] = field(default_factory=dict)
    fallback_state: dict | None = None  # the source coordinator's region-fallback state, once served

    @classmethod
    def of_running_tasks(cls, checkpoint_id: int, graph: JobGraph, finished: dict[Task, States],
                         coordinator_snapshot: dict | None, *, forced: bool, final: bool,
                         savepoint: bool) -> PendingCheckpoint:
        """Checkpoint ``checkpoint_id`` expects every running task (FLIP-147: the trigger goes to
        the roots among them); a finished task's final state stands as its ack."""
        running = set(graph.tasks()) - set(finished)
        pending = cls(checkpoint_id=checkpoint_id, forced_global=forced, final=final,
                      triggered=tasks_to_trigger(graph, running), expected=running,
                      coordinator_snapshot=coordinator_snapshot, savepoint=savepoint)
        pending.acks.update(finished)
        return pending

    def acknowledge(self, task: Task, states: States, at_ms: int | None, deadline_ms: int | None) -> None:
        """An ack after the deadline is discarded (Flink's late acknowledgement): the task timed out."""
        if task in self.marked_declined and task not in self.acks:
            # PR: ``markUnacknowledgedTasksAsDeclined`` leaves the task in ``notYetAcknowledgedTasks``,
            # so its late ack still succeeds and overwrites the grafted entry (raoraoxiong/flink
            # 6f8e1e9c039885a6bb1a281273fb16ba5a12d213, ``PendingCheckpoint.acknowledgeTask``)
            self.acks[task] = states
            if self.grafted is not None:
                self.acked_after_graft.add(task)
            return
        self._check_response(task)
        if at_ms is not None and deadline_ms is not None and at_ms > deadline_ms:
            self.late[task] = at_ms
            return
        self.acks[task] = states

    def decline(self, task: Task, reason: str) -> None:
        self._check_response(task)
        self.declines[task] = reason

    @property
    def fully_acknowledged(self) -> bool:
        """Every task it expects acknowledged (``isFullyAcknowledged``; the coordinator's snapshot is taken at
        the trigger)."""
        return self.expected <= set(self.acks)

    def responded(self) -> bool:
        """Every task acknowledged or declined (``areAllTasksResponded``)."""
        return self.expected <= set(self.acks) | set(self.declines) | self.marked_declined

    def _check_response(self, task: Task) -> None:
        if task not in self.expected:
            raise ValueError(f"checkpoint {self.checkpoint_id}: {task} was not asked")
        if task in self.acks or task in self.declines or task in self.late:
            raise ValueError(f"checkpoint {self.checkpoint_id}: {task} already responded")

    def failures(self, regions: dict[Task, int], *, settled: bool) -> tuple[tuple[Task, ...], tuple[int, ...]]:
        """(timed-out tasks, failed regions), ``regions`` mapping each task to its region.
        ``settled``: every task responded or the timeout fired, so a task without a timely ack
        timed out (PR: the canceller marks it declined,
        ``PendingCheckpoint.markUnacknowledgedTasksAsDeclined``); before that, none has."""
        answered = (set(self.acks) - self.marked_declined) | set(self.declines)
        timed_out = tuple(sorted(self.expected - answered)) if settled else ()
        failed_tasks = set(self.declines) | set(timed_out)
        return timed_out, tuple(sorted({regions[t] for t in failed_tasks}))

    def written_objects(self) -> set[str]:
        """The physical objects this checkpoint's acks wrote (handles of this checkpoint id only:
        a fallback entry names an older checkpoint's objects)."""
        return {h.object_key for states in self.acks.values() for st in states.values() for h in st.handles
                if h.checkpoint_id == self.checkpoint_id}


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
    counter_at_decision: int | None = None  # the counter the decision read (None: aborted before any decision)
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

    def completed_as(self, kind: str, checkpoint: CompletedCheckpoint, *, counter: int,
                     notifications: dict[Task, str] | None = None, subsumed: tuple[int, ...] = (),
                     objects_to_delete: frozenset[str] = frozenset()) -> CheckpointOutcome:
        """Record the decision: completed as ``kind`` (GLOBAL or REGIONAL); the failure count clears."""
        self.status, self.checkpoint, self.counter_after, self.failures_after = kind, checkpoint, counter, 0
        self.notifications = notifications if notifications is not None else {}
        self.subsumed, self.objects_to_delete = subsumed, objects_to_delete
        return self

    def aborted_for(self, reason: str, *, counter: int, failures: int, job_failed: bool,
                    notifications: dict[Task, str], objects_to_delete: frozenset[str]) -> CheckpointOutcome:
        """Record the decision: ABORTED for ``reason``."""
        self.status, self.reason, self.counter_after, self.failures_after = ABORTED, reason, counter, failures
        self.job_failed, self.notifications, self.objects_to_delete = job_failed, notifications, objects_to_delete
        return self

    @property
    def completed(self) -> bool:
        return self.status != ABORTED
