"""The coordinator's counters: what its decisions carry from one checkpoint to the next.

In:  the coordinator's settings and each event that moves a counter: a trigger (are the sources
     exhausted), a completion (GLOBAL or REGIONAL), a completed savepoint, an abort (its reason,
     whether the checkpoint was forced, whether it was a savepoint).
Out: the consecutive-regional counter (tiers 1 and 2 of PROTOCOL.md 3.3 / 3.4), the PR's
     forced flag (``forceGlobalNextCheckpoint``), the consecutive failed checkpoints of Flink's
     CheckpointFailureManager, whether a trigger is forced, and whether an abort fails the job.

The transitions themselves are the pure rules of `regionchaos.protocol.rules`; this is where
their values live. They live in memory: a new JobManager starts a new CheckpointCounters (FLIP:
with the counter read back from the latest checkpoint's metadata).
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import (
    PR,
    CoordinatorSettings,
    after_abort,
    after_complete,
    after_failure_count,
    counted,
    forced_at_decision,
    trigger_forced,
)


@dataclass
class CheckpointCounters:
    consecutive_regional: int = 0
    force_global_next: bool = False  # PR's forceGlobalNextCheckpoint flag
    failed_checkpoints: int = 0  # CheckpointFailureManager's continuousFailureCounter

    def trigger(self, s: CoordinatorSettings, *, sources_exhausted: bool, mutant: str | None) -> bool:
        """Is the checkpoint being triggered forced global (the PR's flag may be set on the way)."""
        forced, self.force_global_next = trigger_forced(
            s, counter=self.consecutive_regional, force_next=self.force_global_next,
            sources_exhausted=sources_exhausted, mutant=mutant)
        return forced

    def forced_now(self, s: CoordinatorSettings, *, mutant: str | None) -> bool:
        """Is the checkpoint being decided now forced global (`regionchaos.protocol.rules.forced_at_decision`)."""
        return forced_at_decision(s, counter=self.consecutive_regional, force_next=self.force_global_next,
                                  mutant=mutant)

    def completed(self, s: CoordinatorSettings, kind: str) -> None:
        """A checkpoint completed as ``kind``. The failure count clears on any completion
        (``reportCompletedCheckpoint`` -> ``CheckpointFailureManager.handleCheckpointSuccess``):
        a REGIONAL one clears it too (``RegionalCheckpointHandler.completeRegionalCheckpoint``)."""
        self.consecutive_regional, self.force_global_next = after_complete(
            s, kind, counter=self.consecutive_regional, force_next=self.force_global_next)
        self.failed_checkpoints = 0

    def savepoint_completed(self, s: CoordinatorSettings) -> None:
        """A savepoint every task acknowledged: the failure count clears; under ``pr`` the counter
        and the forced flag reset (``completePendingCheckpoint`` resets both for any fully
        acknowledged checkpoint; raoraoxiong/flink fada049). FLIP: silent on savepoints; the
        counter counts checkpoints that may reference history, which a savepoint does not
        change (it is not in the store): unchanged."""
        if s.semantics == PR:
            self.consecutive_regional, self.force_global_next = 0, False
        self.failed_checkpoints = 0

    def aborted(self, s: CoordinatorSettings, reason: str, *, forced: bool, savepoint: bool) -> bool:
        """A checkpoint aborted for ``reason``: does the job fail (``abortPendingCheckpoint`` ->
        ``CheckpointFailureManager.handleCheckpointException``). A savepoint leaves the counter
        and the forced flag alone."""
        if not savepoint:
            self.consecutive_regional, self.force_global_next = after_abort(
                s, reason, forced=forced, counter=self.consecutive_regional, force_next=self.force_global_next)
        self.failed_checkpoints, job_failed = after_failure_count(
            s, self.failed_checkpoints, counted=counted(s, reason, forced=forced, savepoint=savepoint))
        return job_failed
