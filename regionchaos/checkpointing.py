"""The JobManager's side of each checkpoint in emulated time: from its trigger to its end.

In:  the run being emulated (`regionchaos.emulator.Emulation`: its clock, coordinator, data flow,
     failover, log and open storage batch), a checkpoint attempt's index and faults.
Out: the checkpoint's events on the run's `regionchaos.timeline.Timeline`, each at its instant:
     the tasks' responses arriving (`regionchaos.task_side.respond` planned them at the trigger),
     the CheckpointCanceller at the deadline, the decision, the region fallback completing after
     its drawn delay, the metadata write, the completion (into the store, older pending
     checkpoints subsumed) or the abort, and each notification reaching its task. Faults placed
     inside the checkpoint land at their instant: after some responses, while its fallback is
     pending, while its metadata is written. What goes to storage goes to the open batch, as
     before: state rows at the trigger, then metadata, deletes and sink commits in event order.

The decisions are the coordinator's (`regionchaos.protocol.coordinator`); this module only says when
they are taken, following the code they model:
- responses: a decline with regional checkpoints off aborts at once
  (``CheckpointCoordinator.receiveDeclineMessage``); otherwise the decision waits until every task
  responded (``areAllTasksResponded``) or the CheckpointCanceller fires; a fully acknowledged
  checkpoint completes GLOBAL (raoraoxiong/flink fada049d0bbf90ac4035b171bb2607cb74894215).
- the canceller, ``pr``: marks the silent tasks declined and runs the regional decision
  (``CheckpointCanceller.run``), also while a REGIONAL decision's fallback is pending; such a task's
  late ack still succeeds (``markUnacknowledgedTasksAsDeclined`` leaves it in
  ``notYetAcknowledgedTasks``), so the decision can run again or the checkpoint complete GLOBAL
  (`regionchaos.protocol.coordinator.CheckpointCoordinator.decide`). ``flip``: at the deadline the
  silent tasks time out and the checkpoint is decided once; a later ack is late.
- the region fallback: asynchronous (``OperatorCoordinatorHolder.checkpointCoordinatorForRegionFallback``
  queues it on the main thread), served after the drawn ``timing.fallback_ms``; the checkpoint stays
  pending meanwhile and holds its concurrency slot; a fallback that completes after its checkpoint
  ended changes nothing but the coordinator (under ``pr`` the hand-back of splits stays).
- an ack for a checkpoint no longer pending is discarded (``discardSubtaskState``): its state objects
  uploaded after the checkpoint ended are deleted then (those uploaded before went with the
  checkpoint's directory when it ended).
- a completion subsumes every older pending checkpoint (``dropSubsumedCheckpoints``, reason
  ``checkpoint-subsumed``, not a counted failure) before the notifications go out.
- notifications travel ``timing.notify_ms``; under ``pr`` an abort notification carries the latest
  completed checkpoint, which a task that was not told of it completes first
  (`regionchaos.task_side.deliver`).
The FLIP is silent on concurrency and on what happens between a decision and its completion;
there it takes Flink's present behaviour above (FINDINGS.md, notes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .faultkinds import Stream, stream_rng
from .history import Kind
from .nemesis import AttemptFaults
from .protocol.checkpoint import GLOBAL, REGIONAL
from .protocol.coordinator import (
    ABORTED,
    N_ABORTED,
    N_COMPLETE,
    R_SUBSUMED,
    CheckpointCoordinator,
    CheckpointOutcome,
    PendingCheckpoint,
)
from .protocol.rules import PR
from .task_side import Response, deliver, respond
from .workload.dataflow import PROCESS

if TYPE_CHECKING:
    from .emulator import Emulation

# draws of a checkpoint's delays (`Stream.TIMING`, per attempt): one sub-stream each
_FALLBACK, _METADATA, _NOTIFY, _ABORT_NOTIFY = 1, 2, 3, 4


class Attempt:
    """One checkpoint attempt in flight: its pending checkpoint, the coordinator (the JobManager life)
    that triggered it, its faults and its tasks' responses."""

    def __init__(self, index: int, pending: PendingCheckpoint, coordinator: CheckpointCoordinator,
                 faults: AttemptFaults, responses: list[Response], trigger_ms: int):
        self.index = index
        self.pending = pending
        self.coordinator = coordinator
        self.faults = faults
        self.responses = {r.task: r for r in responses}
        self.trigger_ms = trigger_ms
        self.arrived = 0  # responses that reached the JobManager
        self.ended_ms: int | None = None  # when it completed or was aborted
        self.ended_status: str | None = None
        self.written_at = _upload_times(responses, trigger_ms)  # state object -> when its upload finished
        self.sources_done: frozenset[int] = frozenset()  # source subtasks whose input had ended at the trigger
        self.notified = False  # its tasks were told of its end already

    @property
    def checkpoint_id(self) -> int:
        return self.pending.checkpoint_id


def _upload_times(responses: list[Response], trigger_ms: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in responses:
        if r.key is not None and r.done_ms is not None:
            out[r.key] = min(out.get(r.key, trigger_ms + r.done_ms), trigger_ms + r.done_ms)
    return out


class Checkpointing:
    """See the module docstring; one per run."""

    def __init__(self, em: Emulation):
        self.em = em
        self.attempts: dict[int, Attempt] = {}  # checkpoint id -> attempt, while it is in flight or its acks are
        self.crashed_in: set[int] = set()  # attempts whose JobManager crash (crash_before_metadata) happened
        self.awaiting_fallback: list[tuple[str, Any]] = []  # faults placed at the next region fallback

    # -- the trigger ------------------------------------------------------------------------------

    def trigger(self, index: int, faults: AttemptFaults) -> Attempt:
        em = self.em
        coord = em.coordinator
        pending = coord.trigger_checkpoint()
        cid = pending.checkpoint_id
        em.stats["triggered"] += 1
        if len(coord.pending) > 1:
            em.interleaving("concurrent_pending")
        em.log(Kind.CHECKPOINT_TRIGGERED, checkpoint_id=cid, forced_global=pending.forced_global,
               final=pending.final, triggered=len(pending.triggered), expected=len(pending.expected),
               counter=coord.counters.consecutive_regional)
        record, responses = respond(em, pending, faults)
        em.log(Kind.TASK_RESPONSES, checkpoint_id=cid, tasks=record)
        attempt = Attempt(index, pending, coord, faults, responses, em.clock.now_ms)
        if em.flow.length is not None and em.no_more_splits():
            attempt.sources_done = frozenset(sub for sub in em.flow.owned if em.flow.source_done(sub))
        self.attempts[cid] = attempt
        self.awaiting_fallback += [(k, t) for k, t, _ in faults.landing("fallback")]
        for k, t in self.awaiting_fallback:
            faults.inside.pop((k, t), None)
        for r in responses:
            if r.at_ms is not None:
                em.clock.after(r.at_ms, self._arrive, attempt, r)
        deadline = em.settings.deadline_ms or em.sc.flink.timeout_ms
        em.clock.after(deadline, self._canceller, attempt)
        self._land_inside(attempt, "pending", 0)
        return attempt

    def _live(self, attempt: Attempt) -> bool:
        """Its JobManager still runs and it is still pending."""
        return self.em.coordinator is attempt.coordinator and attempt.checkpoint_id in attempt.coordinator.pending

    # -- responses --------------------------------------------------------------------------------

    def _arrive(self, attempt: Attempt, r: Response) -> None:
        em, pending = self.em, attempt.pending
        if em.coordinator is not attempt.coordinator:
            return  # sent to a JobManager that died: the new one finds its state an orphan
        if not self._live(attempt) or (pending.phase != "pending" and r.task not in pending.marked_declined):
            self._late(attempt, r)
            return
        coord = attempt.coordinator
        attempt.arrived += 1
        if r.ack:
            coord.receive_acknowledge(pending, r.task, r.states)
        else:
            outcome = coord.receive_decline(pending, r.task, r.reason)
            if outcome is not None:  # regional checkpoints off: the first decline aborts it
                self._ended(attempt, outcome)
                return
        if pending.phase == "pending":
            self._land_inside(attempt, "pending", attempt.arrived)
        if not self._live(attempt):
            return
        if pending.fully_acknowledged and (pending.phase == "pending" or em.settings.semantics == PR):
            self._decide(attempt, settled=True)
        elif pending.declines and pending.responded() and (pending.phase == "pending" or em.settings.semantics == PR):
            self._decide(attempt, settled=True)

    def _late(self, attempt: Attempt, r: Response) -> None:
        """An ack for a checkpoint no longer pending (or already decided, under ``flip``): discarded,
        its state objects uploaded after the checkpoint ended deleted now (``discardSubtaskState``)."""
        em = self.em
        if attempt.ended_status == ABORTED:
            em.interleaving("ack_after_abort")
        if not r.ack or attempt.ended_ms is None or r.key is None:
            return
        if attempt.written_at.get(r.key, 0) > attempt.ended_ms and em.mutant != "late-ack-kept":
            attempt.written_at[r.key] = -1  # discarded once
            em.batch.steps.append({"op": "delete", "checkpoint_id": attempt.checkpoint_id, "keys": [r.key],
                                   "subsumed": []})

    def _canceller(self, attempt: Attempt) -> None:
        if not self._live(attempt):
            return
        pending = attempt.pending
        if self.em.settings.semantics == PR and self.em.settings.region_enabled:
            attempt.coordinator.mark_unacknowledged_declined(pending)
            self._decide(attempt, settled=True)
        elif pending.phase == "pending":
            self._decide(attempt, settled=True)

    # -- deciding ---------------------------------------------------------------------------------

    def _decide(self, attempt: Attempt, *, settled: bool) -> None:
        em, coord, pending = self.em, attempt.coordinator, attempt.pending
        if pending.phase == "finalizing":
            return
        if pending.phase == "fallback" and pending.fully_acknowledged:
            self._finalize(attempt, GLOBAL)  # PR: a late ack completed a checkpoint whose fallback is pending
            return
        outcome, kind, reason = coord.decide(pending, settled=settled)
        if kind == ABORTED:
            self._ended(attempt, coord.abort(pending, outcome, reason) if reason is not None else outcome)
            return
        if kind == GLOBAL:
            self._finalize(attempt, GLOBAL)
            return
        self._land_inside(attempt, "pending", None)  # what waited for more responses than came
        pending.phase = "fallback"
        pending.fallback_requests += 1
        em.log(Kind.FALLBACK_REQUESTED, checkpoint_id=pending.checkpoint_id, request=pending.fallback_requests,
               failed_regions=list(outcome.failed_regions),
               fallback_checkpoint_id=coord.store.latest().checkpoint_id if coord.store.latest() else None)
        em.clock.after(self._delay(attempt, "fallback_ms", _FALLBACK, pending.fallback_requests),
                       self._fallback_done, attempt, pending.fallback_requests)
        while pending.fallback_requests == 1 and self.awaiting_fallback and em.coordinator is coord:
            kind, target = self.awaiting_fallback.pop(0)  # after a JobManager crash the rest wait for the next one
            em.failover.land(kind, target, f"{kind} while checkpoint {pending.checkpoint_id} falls back")

    def _fallback_done(self, attempt: Attempt, request: int) -> None:
        em, coord, pending = self.em, attempt.coordinator, attempt.pending
        if em.coordinator is not coord:
            return  # the JobManager died with the request
        live = self._live(attempt) and pending.phase == "fallback"
        reason = coord.region_fallback(pending, pending.decision)  # the coordinator serves it either way
        em.log(Kind.FALLBACK_COMPLETED, checkpoint_id=pending.checkpoint_id, request=request, applied=live)
        if not live:
            return
        if reason is not None:
            self._ended(attempt, coord.abort(pending, pending.decision, reason))
            return
        self._finalize(attempt, REGIONAL)

    # -- finalizing and completing ----------------------------------------------------------------

    def _finalize(self, attempt: Attempt, kind: str) -> None:
        """N is decided ``kind``: its metadata is written now, done after ``timing.metadata_ms``. A
        JobManager crash between the state upload and the metadata commit (crash_before_metadata)
        lands here."""
        pending = attempt.pending
        pending.phase = "finalizing"
        if self.em.mutant == "notify-before-metadata":  # the tasks are told before N is durable
            early = attempt.coordinator.notifications(pending, kind)
            self._delivered(self._context(attempt, early, completed=True), sorted(early))
            attempt.notified = True
        if self._crash_before_metadata(attempt, kind):
            return
        self._land_inside(attempt, "pending", None)
        self._land_inside(attempt, "finalize", 0)
        if self._live(attempt):
            self.em.clock.after(self._delay(attempt, "metadata_ms", _METADATA), self._finalized, attempt, kind)

    def _crash_before_metadata(self, attempt: Attempt, kind: str | None) -> bool:
        """The attempt's JobManager crash between state upload and metadata commit, if it has one: the
        checkpoint is voided (with ``metadata-before-state`` its metadata is out already) and the
        JobManager fails over."""
        em = self.em
        if not attempt.faults.crash_before_metadata or attempt.index in self.crashed_in:
            return False
        self.crashed_in.add(attempt.index)
        coord, pending, cid = attempt.coordinator, attempt.pending, attempt.checkpoint_id
        em.batch.crash_before_metadata = cid
        if kind is not None and em.mutant == "metadata-before-state":
            outcome = coord.complete(pending, pending.decision, kind)
            self._log_outcome(attempt, outcome)
            em.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": outcome.checkpoint.to_bytes()})
        else:
            coord.pending.pop(cid, None)
            em.log(Kind.CHECKPOINT_VOIDED, checkpoint_id=cid, status=kind or ABORTED)
        em.log(Kind.JOBMANAGER_CRASHED, checkpoint_id=cid, phase="between state upload and metadata commit")
        em.interleaving("jobmanager_crash_while_finalizing")  # N was finalizing
        em.failover.jobmanager_failover("crash between state upload and metadata commit")
        return True

    def _finalized(self, attempt: Attempt, kind: str) -> None:
        if not self._live(attempt):
            return
        coord = attempt.coordinator
        outcome = coord.complete(attempt.pending, attempt.pending.decision, kind)
        self._ended(attempt, outcome)

    # -- the end ----------------------------------------------------------------------------------

    def _ended(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """N completed or was aborted: logged, its metadata and deletes to storage, older pending
        checkpoints subsumed, the tasks notified; then what waits for a checkpoint's end."""
        em = self.em
        if outcome.status == ABORTED and outcome.reason is not None and self._crash_before_metadata(attempt, None):
            return
        coord, cid = attempt.coordinator, attempt.checkpoint_id
        attempt.ended_ms, attempt.ended_status = em.clock.now_ms, outcome.status
        stray = {k for k, at in attempt.written_at.items() if at <= attempt.ended_ms} - coord.store.live_objects()
        if stray:  # the checkpoint's directory: what its tasks uploaded and it does not use
            outcome.objects_to_delete = frozenset(outcome.objects_to_delete | stray)
        self._discard_unacknowledged(attempt)
        self._log_outcome(attempt, outcome)
        if outcome.completed:
            em.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": outcome.checkpoint.to_bytes()})
        if outcome.objects_to_delete or outcome.subsumed:
            em.batch.steps.append({"op": "delete", "checkpoint_id": cid, "keys": sorted(outcome.objects_to_delete),
                                   "subsumed": list(outcome.subsumed)})
        if outcome.completed:
            for older in coord.subsumed_pending(cid):
                self._subsume(self.attempts[older.checkpoint_id], cid)
        if not attempt.notified:
            self._notify(attempt, outcome)
        if attempt.faults.inside and em.coordinator is coord:  # placed at an instant N never reached: right after it
            em.clock.at(em.clock.now_ms, self._land_rest, attempt)
        em.checkpoint_ended(attempt, outcome)

    def _discard_unacknowledged(self, attempt: Attempt) -> None:
        """A state object uploaded after its checkpoint ended whose acknowledgement never reaches the
        JobManager is discarded by its TaskManager when the upload completes (the task learned of the end:
        its AsyncCheckpointRunnable cleans up state of a checkpoint no longer pending); one whose ack
        arrives is the JobManager's to discard then (`_late`)."""
        acked = {r.key for r in attempt.responses.values() if r.at_ms is not None}
        for key, at in attempt.written_at.items():
            if at > attempt.ended_ms and key not in acked:
                self.em.clock.at(at, self._discarded_by_taskmanager, attempt.checkpoint_id, key)

    def _discarded_by_taskmanager(self, checkpoint_id: int, key: str) -> None:
        self.em.batch.steps.append({"op": "delete", "checkpoint_id": checkpoint_id, "keys": [key], "subsumed": []})

    def _subsume(self, attempt: Attempt, by: int) -> None:
        coord = attempt.coordinator
        outcome = coord.abort(attempt.pending, coord._undecided(attempt.pending, settled=False), R_SUBSUMED)
        if self.em.mutant == "subsumed-notification-commits":
            outcome.notifications = {t: N_COMPLETE for t in outcome.notifications}
        self._ended(attempt, outcome)

    def abort_all(self, reason: str) -> None:
        """A failover: every pending checkpoint aborted for ``reason`` (``abortPendingCheckpoints``), oldest
        first; with the ``failover-keeps-pending`` mutant they stay pending."""
        em = self.em
        if em.mutant == "failover-keeps-pending":
            return
        coord = em.coordinator
        for pending, outcome in coord.abort_all_pending(reason):
            self._ended(self.attempts[pending.checkpoint_id], outcome)

    def _log_outcome(self, attempt: Attempt, o: CheckpointOutcome) -> None:
        em = self.em
        em.stats[{"GLOBAL": "global", "REGIONAL": "regional", ABORTED: "aborted"}[o.status]] += 1
        region_of = attempt.coordinator.regions
        em.log(Kind.CHECKPOINT_DECIDED, checkpoint_id=o.checkpoint_id, status=o.status, reason=o.reason,
               forced_global=o.forced_global, final=o.final, failed_regions=list(o.failed_regions),
               num_regions=o.num_regions or attempt.coordinator.num_regions,
               declined=[[t[0], t[1], region_of[t], r] for t, r in sorted(o.declined.items())],
               timed_out=[[t[0], t[1], region_of[t]] for t in o.timed_out],
               counter_before=o.counter_before, counter_after=o.counter_after,
               counter_at_decision=o.counter_at_decision, max_failure_ratio=em.settings.max_failure_ratio,
               max_consecutive_failures=em.settings.max_consecutive_failures,
               region_enabled=em.settings.region_enabled,
               subsumed=list(o.subsumed), deleted=len(o.objects_to_delete),
               deleted_keys=sorted(o.objects_to_delete),
               put_failures=sorted(attempt.faults.put_failures), slow_puts=sorted(attempt.faults.slow_puts))
        if o.checkpoint is not None:
            em.log(Kind.CHECKPOINT_COMPLETED, checkpoint_id=o.checkpoint_id, type=o.status,
                   metadata=o.checkpoint.to_json())

    # -- notifications ----------------------------------------------------------------------------

    def _notify(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
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
        ctx = self._context(attempt, outcome.notifications, completed=outcome.completed, latest=latest,
                            checkpoint=outcome.checkpoint if outcome.status == GLOBAL and not outcome.final else None)
        for delay in sorted(groups):
            em.clock.after(delay, self._delivered, ctx, groups[delay])
        if outcome.final and outcome.completed:
            em.finishing = (attempt.checkpoint_id, set(tasks))

    def _context(self, attempt: Attempt, notifications: dict, *, completed: bool, latest: int | None = None,
                 checkpoint: Any = None) -> dict:
        """What a delivery of N's notifications needs, fixed when they are sent."""
        coord = attempt.coordinator
        return {"cid": attempt.checkpoint_id, "latest": latest, "notifications": notifications,
                "checkpoint": checkpoint, "sources_done": attempt.sources_done, "regions": dict(coord.regions),
                "checkpoint_completed": completed}

    def _delivered(self, ctx: dict, tasks: list) -> None:
        em = self.em  # (a notification in flight still arrives after its JobManager died)
        if em.triggered_after(ctx["cid"]):
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

    # -- faults inside the checkpoint ---------------------------------------------------------------

    def _land_rest(self, attempt: Attempt) -> None:
        for instant in ("pending", "finalize"):
            self._land_inside(attempt, instant, None)

    def _land_inside(self, attempt: Attempt, instant: str, arrived: int | None) -> None:
        """The attempt's faults placed at ``instant`` land now: for ``pending`` those placed after
        ``arrived`` responses (None: all that are left, the pending phase is over). A fault placed at an
        instant its checkpoint does not reach lands right after the checkpoint ended. (Faults placed at
        ``fallback`` wait for the next REGIONAL decision's fallback, of this checkpoint or a later one.)"""
        if not attempt.faults.inside or self.em.coordinator is not attempt.coordinator:
            return
        due = [(k, t) for k, t, n in attempt.faults.landing(instant)
               if instant != "pending" or arrived is None or n == arrived]
        for kind, target in due:
            attempt.faults.inside.pop((kind, target), None)
            if self.em.coordinator is not attempt.coordinator:
                return  # an earlier one of them killed the JobManager
            self.em.failover.land(kind, target, f"{kind} while checkpoint {attempt.checkpoint_id} "
                                                f"{'is pending' if instant == 'pending' else 'falls back' if instant == 'fallback' else 'finalizes'}")

    # -- delays -----------------------------------------------------------------------------------

    def _delay(self, attempt: Attempt, name: str, stream: int, *index: int) -> int:
        lo, hi = getattr(self.em.sc.timing, name)
        if lo == hi:
            return lo
        return int(stream_rng(self.em.sc.seed, Stream.TIMING, attempt.index, stream, attempt.checkpoint_id, *index)
                   .integers(lo, hi + 1))


def attempt_of(checkpointing: Checkpointing, checkpoint_id: int) -> Any:
    return checkpointing.attempts.get(checkpoint_id)
