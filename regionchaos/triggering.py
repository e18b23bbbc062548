"""When checkpoints are triggered: the periodic trigger, and what waits for a checkpoint to end.

In:  the run being emulated (`regionchaos.emulator.Emulation`: its clock, coordinator, scenario,
     failover and checkpointing), the end of each interval and of each checkpoint.
Out: each attempt's trigger at its instant: ``execution.checkpointing.interval`` after the previous
     one, once fewer than ``max-concurrent-checkpoints`` are pending and ``min-pause`` has passed since
     the last checkpoint ended (Flink's periodic trigger and CheckpointRequestDecider); then the next
     interval's middle. At a checkpoint's end: the job's restart when it failed
     (tolerable-failed-checkpoints), the rescale planned after that attempt, and whatever waited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .protocol.coordinator import CheckpointOutcome
from .protocol.rules import UNCOUNTED

if TYPE_CHECKING:
    from .emulator import Emulation

MAX_EXTRA_ATTEMPTS = 2000  # bounded jobs: attempts after the heal phase before liveness gives up


class Triggering:
    def __init__(self, em: Emulation):
        self.em = em
        sc = em.sc
        self.limit = sc.checkpoints + sc.faults.heal_checkpoints + (MAX_EXTRA_ATTEMPTS if em.flow.length else 0)
        self.rescales = {e.after_checkpoint: e.parallelism for e in sc.rescale}
        self.times: list[tuple[int, int]] = []  # (checkpoint id, trigger ms), in trigger order
        self.waiting: int | None = None  # an attempt whose trigger waits for a checkpoint to end
        self.deferred: int | None = None  # an attempt whose interval waits for the checkpoint before it to end
        self.last_end_ms: int | None = None

    def after_interval(self, index: int) -> None:
        """Attempt ``index``'s interval is over: its trigger is due one interval after the previous one."""
        em = self.em
        previous = self.times[-1][1] if self.times else 0
        em.clock.at(max(em.clock.now_ms, previous + em.sc.flink.interval_ms), self.due, index)

    def due(self, index: int) -> None:
        """Attempt ``index``'s periodic trigger: now, or once a checkpoint slot is free and the min pause
        since the last checkpoint's end has passed (Flink's CheckpointRequestDecider)."""
        em = self.em
        if em.stats["finished"] or index >= self.limit:
            return
        f = em.sc.flink
        if len(em.coordinator.pending) + len(em.coordinator.leaked) >= f.max_concurrent:
            self.waiting = index
            return
        if self.last_end_ms is not None and em.clock.now_ms < self.last_end_ms + f.min_pause_ms:
            em.clock.at(self.last_end_ms + f.min_pause_ms, self.due, index)
            return
        self.waiting = None
        em.check_end_of_input()
        attempt = em.checkpointing.trigger(index, em.faults[index])
        self.times.append((attempt.checkpoint_id, em.clock.now_ms))
        nxt = index + 1
        if nxt < self.limit:
            em.clock.at(em.clock.now_ms + f.interval_ms // 2, em.interval, nxt)

    def checkpoint_ended(self, attempt, outcome: CheckpointOutcome) -> None:
        """A checkpoint completed or was aborted: a job that failed restarts, a rescale planned after
        it happens, then whatever waited for a checkpoint to end (an interval, a trigger)."""
        em = self.em
        self.last_end_ms = em.clock.now_ms
        if em.progress:
            em.progress(attempt.index, self.limit, outcome)
        rescale = outcome.reason not in UNCOUNTED and attempt.index in self.rescales
        if outcome.job_failed or rescale:  # after the notifications that go out now
            em.clock.at(em.clock.now_ms, self._restart, outcome.job_failed,
                          self.rescales.pop(attempt.index) if rescale else None)
        self.resume()

    def _restart(self, job_failed: bool, parallelism: int | None) -> None:
        """After a checkpoint's end: the job restarts because it failed (CheckpointFailureManager:
        tolerable-failed-checkpoints exceeded), then the rescale planned after that attempt."""
        em = self.em
        if job_failed:
            em.failover.global_restore(None, "checkpoint tolerable failure threshold exceeded")
        if parallelism is not None and not em.stats["finished"]:
            em.failover.rescale(parallelism)
        self.resume()

    def resume(self) -> None:
        """An interval or a trigger that waited for a checkpoint to end goes on."""
        em = self.em
        if self.deferred is not None and not em.coordinator.pending:
            em.clock.at(em.clock.now_ms, em.interval, self.deferred)
            self.deferred = None
        if self.waiting is not None:
            em.clock.at(em.clock.now_ms, self.due, self.waiting)
            self.waiting = None

    def triggered_after(self, checkpoint_id: int) -> bool:
        return bool(self.times) and self.times[-1][0] > checkpoint_id

