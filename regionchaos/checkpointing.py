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
    N_COMPLETE,
    R_SUBSUMED,
    CheckpointCoordinator,
    CheckpointOutcome,
    PendingCheckpoint,
)
from .protocol.rules import PR
from .notify import Notifier
from .outcomes import discard_unacknowledged, late_ack, log_outcome, stray
from .task_side import UPLOAD_FAILED, Response, respond
from .workload.dataflow import SOURCE

if TYPE_CHECKING:
    from .emulator import Emulation

# draws of a checkpoint's delays (`Stream.TIMING`, per attempt): one sub-stream each (`regionchaos.notify`: 3, 4)
_FALLBACK, _METADATA = 1, 2


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
        self.notifier = Notifier(em)

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
        em.instants.await_fallback(faults)
        for r in responses:
            if r.at_ms is not None:
                em.clock.after(r.at_ms, self._arrive, attempt, r)
        deadline = em.settings.deadline_ms or em.sc.flink.timeout_ms
        em.clock.after(deadline, self._canceller, attempt)
        em.instants.land_inside(attempt, "pending", 0)
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
            late_ack(em, attempt, r)
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
            em.instants.land_inside(attempt, "pending", attempt.arrived)
        if not self._live(attempt):
            return
        if pending.fully_acknowledged and (pending.phase == "pending" or em.settings.semantics == PR):
            self._decide(attempt, settled=True)
        elif pending.declines and pending.responded() and (pending.phase == "pending" or em.settings.semantics == PR):
            self._decide(attempt, settled=True)

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
        em.instants.land_inside(attempt, "pending", None)  # what waited for more responses than came
        pending.phase = "fallback"
        pending.fallback_requests += 1
        em.log(Kind.FALLBACK_REQUESTED, checkpoint_id=pending.checkpoint_id, request=pending.fallback_requests,
               failed_regions=list(outcome.failed_regions),
               fallback_checkpoint_id=pending.fallback_from[pending.fallback_requests])
        em.clock.after(_delay(em, attempt, "fallback_ms", _FALLBACK, pending.fallback_requests),
                       self._fallback_done, attempt, pending.fallback_requests)
        if pending.fallback_requests == 1:
            em.instants.land_at_fallback(attempt)

    def _fallback_done(self, attempt: Attempt, request: int) -> None:
        em, coord, pending = self.em, attempt.coordinator, attempt.pending
        if em.coordinator is not coord:
            return  # the JobManager died with the request
        live = self._live(attempt) and pending.phase == "fallback"
        reason = coord.region_fallback(pending, pending.decision, request)  # the coordinator serves it either way
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
        em, pending = self.em, attempt.pending
        pending.phase = "finalizing"
        if em.mutant == "notify-before-metadata":  # the tasks are told before N is durable
            early = attempt.coordinator.notifications(pending, kind)
            self.notifier.delivered(self.notifier.context(attempt, early, completed=True), sorted(early))
            attempt.notified = True
        if em.instants.crash_before_metadata(attempt, kind):
            return
        em.instants.land_inside(attempt, "pending", None)
        em.instants.land_inside(attempt, "finalize", 0)
        if self._live(attempt):
            em.clock.after(_delay(em, attempt, "metadata_ms", _METADATA), self._finalized, attempt, kind)

    def _finalized(self, attempt: Attempt, kind: str) -> None:
        if not self._live(attempt):
            return
        coord = attempt.coordinator
        if attempt.faults.store_failure:
            self._ended(attempt, self.em.instants.store_failed(attempt, kind))
            return
        outcome = coord.complete(attempt.pending, attempt.pending.decision, kind)
        self._ended(attempt, outcome)

    # -- the end ----------------------------------------------------------------------------------

    def _ended(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """N completed or was aborted: logged, its metadata and deletes to storage, older pending
        checkpoints subsumed, the tasks notified; then what waits for a checkpoint's end."""
        em = self.em
        if outcome.status == ABORTED and outcome.reason is not None and em.instants.crash_before_metadata(attempt, None):
            return
        coord, cid = attempt.coordinator, attempt.checkpoint_id
        attempt.ended_ms, attempt.ended_status = em.clock.now_ms, outcome.status
        outcome.objects_to_delete = frozenset(outcome.objects_to_delete | stray(attempt, coord.store.live_objects()))
        discard_unacknowledged(em, attempt)
        log_outcome(em, attempt, outcome)
        if outcome.completed:
            em.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": outcome.checkpoint.to_bytes()})
        if outcome.objects_to_delete or outcome.subsumed:
            em.batch.steps.append({"op": "delete", "checkpoint_id": cid, "keys": sorted(outcome.objects_to_delete),
                                   "subsumed": list(outcome.subsumed)})
        if outcome.status == REGIONAL and em.settings.semantics == PR:  # `regionchaos.protocol.gateway`
            coord.source.gateways.close(cid, [t[1] for t, r in attempt.responses.items()
                                              if t[0] == SOURCE and not r.ack and r.reason != UPLOAD_FAILED])
        for older in coord.subsumed_pending(cid) if outcome.completed else ():
            if em.coordinator is coord:
                self._subsume(self.attempts[older.checkpoint_id], cid)
        if outcome.completed and em.coordinator is not coord:
            return  # the JobManager died ending a subsumed one (as in `abort_all`): N's notifications with it
        if not attempt.notified:
            self.notifier.send(attempt, outcome)
        if attempt.faults.inside and em.coordinator is coord:  # placed at an instant N never reached: right after it
            em.clock.at(em.clock.now_ms, em.instants.land_rest, attempt)
        em.triggering.checkpoint_ended(attempt, outcome)

    def _subsume(self, attempt: Attempt, by: int) -> None:
        coord = attempt.coordinator
        outcome = coord.abort(attempt.pending, coord._undecided(attempt.pending, settled=False), R_SUBSUMED)
        if self.em.mutant == "subsumed-notification-commits":
            outcome.notifications = {t: N_COMPLETE for t in outcome.notifications}
        self._ended(attempt, outcome)

    def abort_all(self, reason: str, *, shutdown: bool = False) -> None:
        """A failover (or the coordinator's ``shutdown``): every pending checkpoint aborted for ``reason``
        (``abortPendingCheckpoints``), oldest first, one at a time: a JobManager crash landing on one's end stops it
        (the new JobManager voided the rest); with the ``failover-keeps-pending`` mutant a failover leaves them."""
        em = self.em
        if em.mutant == "failover-keeps-pending" and not shutdown:
            return
        coord = em.coordinator
        for pending in [p for _, p in sorted(coord.pending.items())]:
            if em.coordinator is not coord or pending.checkpoint_id not in coord.pending:
                break  # the JobManager died ending an older one (`regionchaos.instants.Instants.crash_before_metadata`)
            self._ended(self.attempts[pending.checkpoint_id],
                        coord.abort(pending, coord._undecided(pending, settled=False), reason))

def attempt_of(checkpointing: Checkpointing, checkpoint_id: int) -> Any:
    return checkpointing.attempts.get(checkpoint_id)


def _delay(em: Emulation, attempt: Attempt, name: str, stream: int, *index: int) -> int:
    """One of the attempt's drawn delays (``timing.<name>``: ``[min, max]`` ms; none drawn when fixed)."""
    lo, hi = getattr(em.sc.timing, name)
    if lo == hi:
        return lo
    return int(stream_rng(em.sc.seed, Stream.TIMING, attempt.index, stream, attempt.checkpoint_id, *index)
               .integers(lo, hi + 1))
