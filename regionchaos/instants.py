"""Faults that land inside a pending checkpoint, at their instant.

In:  a checkpoint attempt in flight (`regionchaos.checkpointing.Attempt`) and its faults' placements
     (`regionchaos.faultkinds.AttemptFaults.inside`: after some responses, at the next region fallback, while
     the metadata is written), told by `regionchaos.checkpointing` when each instant comes.
Out: each fault landed through the failover (`regionchaos.failover.Failover.land`) at its instant, or right
     after its checkpoint ended if that instant never came; and the JobManager crash between state upload
     and metadata commit (``crash_before_metadata``), which voids the checkpoint being finalized.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .faultkinds import AttemptFaults
from .history import Kind
from .outcomes import log_outcome
from .protocol.checkpoint import REGIONAL
from .protocol.pending import ABORTED
from .protocol.rules import PR, R_FINALIZE

if TYPE_CHECKING:
    from .emulator import Emulation


class Instants:
    def __init__(self, em: Emulation):
        self.em = em
        self.awaiting_fallback: list[tuple[str, Any]] = []  # faults placed at the next region fallback
        self.crashed_in: set[int] = set()  # attempts whose JobManager crash (crash_before_metadata) happened

    def land_rest(self, attempt) -> None:
        """What was placed inside a checkpoint that ended before its instant came lands right after it."""
        for instant in ("pending", "finalize"):
            self.land_inside(attempt, instant, None)

    def land_inside(self, attempt, instant: str, arrived: int | None) -> None:
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


    def await_fallback(self, faults: AttemptFaults) -> None:
        """The faults of an attempt placed at ``fallback`` wait for the next region fallback."""
        waiting = [(k, t) for k, t, _ in faults.landing("fallback")]
        for key in waiting:
            faults.inside.pop(key, None)
        self.awaiting_fallback += waiting

    def land_at_fallback(self, attempt) -> None:
        """A REGIONAL decision asked for its region fallback: the faults waiting for one land now (after a
        JobManager crash among them, the rest wait for the next one)."""
        while self.awaiting_fallback and self.em.coordinator is attempt.coordinator:
            kind, target = self.awaiting_fallback.pop(0)
            self.em.failover.land(kind, target, f"{kind} while checkpoint {attempt.checkpoint_id} falls back")

    def crash_before_metadata(self, attempt, kind: str | None) -> bool:
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
            log_outcome(em, attempt, outcome)
            em.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": outcome.checkpoint.to_bytes()})
        else:
            coord.pending.pop(cid, None)
            em.log(Kind.CHECKPOINT_VOIDED, checkpoint_id=cid, status=kind or ABORTED)
        em.log(Kind.JOBMANAGER_CRASHED, checkpoint_id=cid, phase="between state upload and metadata commit")
        em.interleaving("jobmanager_crash_while_finalizing")  # N was finalizing
        em.failover.jobmanager_failover("crash between state upload and metadata commit")
        return True

    def store_failed(self, attempt, kind: str):
        """N's metadata is written, and the completed checkpoint store refuses it: N is discarded (its
        ``_metadata`` and its own state objects, ``discardOnFailedStoring``) and aborted,
        FINALIZE_CHECKPOINT_FAILURE. Under the PR a REGIONAL one stays in the pending table for good:
        ``completeRegionalCheckpoint`` calls ``removePendingCheckpoint`` inside its ``try``, after the store add,
        and the failed store add has disposed the checkpoint, which ``abortPendingCheckpoint`` then skips
        (apache/flink 4e12013748c0af9c17eeafb5b6c28d1806f51973; ``completePendingCheckpoint`` removes it in a
        ``finally``): its concurrency slot is held until a new JobManager."""
        em, coord, pending, cid = self.em, attempt.coordinator, attempt.pending, attempt.checkpoint_id
        attempt.faults.store_failure = False
        body = coord.complete_copy(pending, pending.decision, kind).to_bytes()
        em.batch.steps.append({"op": "metadata", "checkpoint_id": cid, "body": body})
        em.log(Kind.STORE_FAILED, checkpoint_id=cid, type=kind)
        outcome = coord.abort(pending, pending.decision, R_FINALIZE)
        outcome.subsumed = (cid,)  # its _metadata goes with it
        if kind == REGIONAL and em.settings.semantics == PR:
            coord.leaked.add(cid)
        return outcome
