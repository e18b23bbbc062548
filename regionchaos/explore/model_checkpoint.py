"""The explorer's run model, a checkpoint's life from its responses to its end (`regionchaos.checkpointing`),
restated without the data plane: a part of `regionchaos.explore.model.Model`.

In:  the `Model`'s state (its coordinator, queue, attempts and faults).
Out: the methods `Model` inherits: each says which method of the emulator it restates."""

from __future__ import annotations

from ..protocol.checkpoint import GLOBAL, REGIONAL, CompletedCheckpoint
from ..protocol.coordinator import ABORTED, CheckpointOutcome
from ..protocol.rules import PR, R_SUBSUMED
from ..protocol.topology import Task
from .model_base import FALLBACK_DONE, FINALIZED, LAND_REST, Attempt


class Checkpointing:
    """A checkpoint's life after its trigger (a part of `Model`)."""

    def _arrive(self, cid: int, task: Task, states, reason) -> None:
        """`Checkpointing._arrive` (a late one is data only: `regionchaos.outcomes.late_ack`)."""
        attempt = self.attempts[cid]
        pending = attempt.pending
        if not self.live(attempt) or (pending.phase != "pending" and task not in pending.marked_declined):
            return
        attempt.arrived += 1
        if states is not None:
            self.coord.receive_acknowledge(pending, task, states)
        else:
            outcome = self.coord.receive_decline(pending, task, reason)
            if outcome is not None:
                self._ended(attempt, outcome)
                return
        if pending.phase == "pending":
            self._land_inside(attempt, "pending", attempt.arrived)
        if not self.live(attempt):
            return
        pr = self.settings.semantics == PR
        if pending.fully_acknowledged and (pending.phase == "pending" or pr):
            self._decide(attempt)
        elif pending.declines and pending.responded() and (pending.phase == "pending" or pr):
            self._decide(attempt)

    def _canceller(self, cid: int) -> None:
        """`Checkpointing._canceller`."""
        attempt = self.attempts[cid]
        if not self.live(attempt):
            return
        pending = attempt.pending
        if self.settings.semantics == PR and self.settings.region_enabled:
            self.coord.mark_unacknowledged_declined(pending)
            self._decide(attempt)
        elif pending.phase == "pending":
            self._decide(attempt)

    def _decide(self, attempt: Attempt) -> None:
        """`Checkpointing._decide` (zero delays: the scope refuses others)."""
        coord, pending = self.coord, attempt.pending
        if pending.phase == "finalizing":
            return
        if pending.phase == "fallback" and pending.fully_acknowledged:
            self._finalize(attempt, GLOBAL)
            return
        outcome, kind, reason = coord.decide(pending, settled=True)
        if kind == ABORTED:
            self._ended(attempt, coord.abort(pending, outcome, reason) if reason is not None else outcome)
            return
        if kind == GLOBAL:
            self._finalize(attempt, GLOBAL)
            return
        self._land_inside(attempt, "pending", None)
        pending.phase = "fallback"
        pending.fallback_requests += 1
        self._at(self.now_ms, FALLBACK_DONE, attempt.checkpoint_id, pending.fallback_requests)
        if pending.fallback_requests == 1:
            self._land_at_fallback(attempt)

    def _fallback_done(self, cid: int, request: int) -> None:
        """`Checkpointing._fallback_done`."""
        attempt = self.attempts[cid]
        if attempt.life != self.life:
            return
        pending = attempt.pending
        live = self.live(attempt) and pending.phase == "fallback"
        reason = self.coord.region_fallback(pending, pending.decision, request)  # served either way
        if not live:
            return
        if reason is not None:
            self._ended(attempt, self.coord.abort(pending, pending.decision, reason))
            return
        self._finalize(attempt, REGIONAL)

    def _finalize(self, attempt: Attempt, kind: str) -> None:
        """`Checkpointing._finalize` (the ``notify-before-metadata`` mutant's early notifications are data, except
        that they stand for the ones `Input._send` would queue at the end: a bounded job's sources and the job
        then never finish)."""
        pending = attempt.pending
        pending.phase = "finalizing"
        if self.mutant == "notify-before-metadata":
            attempt.notified = True
        if self._crash_before_metadata(attempt, kind):
            return
        self._land_inside(attempt, "pending", None)
        self._land_inside(attempt, "finalize", 0)
        if self.live(attempt):
            self._at(self.now_ms, FINALIZED, attempt.checkpoint_id, kind)

    def _finalized(self, cid: int, kind: str) -> None:
        attempt = self.attempts[cid]
        if not self.live(attempt):
            return
        pending = attempt.pending
        self._ended(attempt, self.coord.complete(pending, pending.decision, kind))

    def _ended(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """`Checkpointing._ended`: the decision written down, the metadata to storage, older pending
        checkpoints subsumed, the tasks notified (`Input._send`), faults placed at instants it never reached
        landed right after it."""
        if outcome.status == ABORTED and outcome.reason is not None and self._crash_before_metadata(attempt, None):
            return
        coord = self.coord
        attempt.ended = outcome.status
        self._decided(outcome)
        if outcome.completed:
            self._completed(outcome.checkpoint)
        for cid in outcome.subsumed:
            self.storage.pop(cid, None)
        if outcome.completed:
            for older in coord.subsumed_pending(attempt.checkpoint_id):
                self._subsume(self.attempts[older.checkpoint_id])
        self._send(attempt, outcome)
        if attempt.faults.inside and attempt.life == self.life:
            self._at(self.now_ms, LAND_REST, attempt.checkpoint_id)
        self._checkpoint_ended(attempt, outcome)

    def _decided(self, o: CheckpointOutcome) -> None:
        self._log("decided", o.checkpoint_id, o.status, o.reason, o.counter_before, o.counter_after)
        cap = self.settings.max_consecutive_failures + 1
        self._shape("decided", o.status, o.reason, o.forced_global, len(o.failed_regions), len(o.timed_out),
                    min(o.counter_before, cap), min(o.counter_after, cap), o.job_failed)

    def _completed(self, checkpoint: CompletedCheckpoint) -> None:
        """A completion: its metadata on storage, its ref-chain depth (flip_bounds' definition: the longest
        chain of refCheckpointId links, each to an older completed checkpoint's own links) and the streak of
        REGIONAL completions since the last GLOBAL one."""
        cid = checkpoint.checkpoint_id
        self.storage[cid] = checkpoint
        refs = [r for r in checkpoint.ref_ids() if r < cid]
        self.depth[cid] = max((1 + self.depth.get(r, 0) for r in refs), default=0)
        self.streak = self.streak + 1 if checkpoint.checkpoint_type == REGIONAL else 0
        self.step_out.completions.append((self.streak, self.depth[cid]))

    def _subsume(self, attempt: Attempt) -> None:
        """`Checkpointing._subsume` (the ``subsumed-notification-commits`` mutant's notifications are data)."""
        pending = attempt.pending
        self._ended(attempt, self.coord.abort(pending, self.coord._undecided(pending, settled=False), R_SUBSUMED))

    def _abort_all(self, reason: str) -> None:
        """`Checkpointing.abort_all`."""
        if self.mutant == "failover-keeps-pending":
            return
        for pending, outcome in self.coord.abort_all_pending(reason):
            self._ended(self.attempts[pending.checkpoint_id], outcome)
