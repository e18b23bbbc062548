"""A checkpoint's end, written down: its decision in the history, and what happens to the state its
tasks uploaded for it.

In:  the run being emulated (`regionchaos.emulator.Emulation`: its log, clock and open storage batch), a
     checkpoint attempt that ended (`regionchaos.checkpointing.Attempt`) and its outcome, or one of its
     acknowledgements arriving after that end.
Out: the ``checkpoint_decided`` (and ``checkpoint_completed``) events; and the deletes of state objects
     the checkpoint does not use: those uploaded by its end go with its directory (`stray`), those
     uploaded later are discarded by the JobManager when their acknowledgement arrives
     (``CheckpointCoordinator.discardSubtaskState``; the ``late-ack-kept`` mutant keeps them) or, when
     none will, by their TaskManager when the upload completes (`discard_unacknowledged`); at the job's end,
     what is still uploading then (`discard_at_finish`); after a restore, what only the final states of the
     finished tasks it started again kept (`discard_unpinned`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from .history import Kind
from .protocol.coordinator import ABORTED, CheckpointOutcome

if TYPE_CHECKING:
    from .checkpointing import Attempt
    from .emulator import Emulation
    from .task_side import Response


def log_outcome(em: Emulation, attempt: Attempt, o: CheckpointOutcome) -> None:
    """N's end in the history: its decision, and its metadata when it completed."""
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


def stray(attempt: Attempt, live: set[str]) -> set[str]:
    """The checkpoint's directory at its end: what its tasks uploaded by then that no retained checkpoint uses."""
    return {k for k, at in attempt.written_at.items() if at <= attempt.ended_ms} - live


def late_ack(em: Emulation, attempt: Attempt, r: Response) -> None:
    """An ack for a checkpoint no longer pending (or already decided, under ``flip``): discarded, its state
    object deleted now if it was uploaded after the checkpoint ended."""
    if attempt.ended_status == ABORTED:
        em.interleaving("ack_after_abort")
    if not r.ack or attempt.ended_ms is None or r.key is None:
        return
    if attempt.written_at.get(r.key, 0) > attempt.ended_ms and em.mutant != "late-ack-kept":
        attempt.written_at[r.key] = -1  # discarded once
        _delete(em, attempt.checkpoint_id, r.key)


def discard_unacknowledged(em: Emulation, attempt: Attempt) -> None:
    """A state object uploaded after its checkpoint ended whose acknowledgement never reaches the
    JobManager is discarded by its TaskManager when the upload completes (the task learned of the end: its
    AsyncCheckpointRunnable cleans up the state of a checkpoint no longer pending); one whose ack arrives
    is the JobManager's to discard then (`late_ack`)."""
    acked = {r.key for r in attempt.responses.values() if r.at_ms is not None}
    for key, at in attempt.written_at.items():
        if at > attempt.ended_ms and key not in acked:
            em.clock.at(at, _delete, em, attempt.checkpoint_id, key)


def discard_at_finish(em: Emulation, attempts: Iterable[Attempt]) -> None:
    """The job finishes now: the state objects of ended checkpoints still uploading are discarded now, as their
    late acks or their TaskManagers would have done after this instant. A finishing task waits for its running
    asynchronous uploads before it ends (``StreamTask.afterInvoke``: ``waitForPendingCheckpoints()`` when
    checkpoints after tasks finished are on, FLIP-147), so each such ack still reaches a running coordinator,
    which discards it (`late_ack`); a lost ack's object its TaskManager cleans up (`discard_unacknowledged`)."""
    now = em.clock.now_ms
    for attempt in attempts:
        if attempt.ended_ms is None:
            continue
        for r in attempt.responses.values():
            if r.key is None or attempt.written_at.get(r.key, -1) <= now:
                continue  # nothing uploaded, uploaded by now (gone with its directory or discarded), or discarded
            if r.at_ms is not None:
                late_ack(em, attempt, r)
            else:
                attempt.written_at[r.key] = -1
                _delete(em, attempt.checkpoint_id, r.key)


def discard_unpinned(em: Emulation, pinned: set[str]) -> None:
    """A restore started finished tasks again, so their final states are reused no more: an object only those
    states kept live (``pinned``, `regionchaos.protocol.coordinator.final_state_objects`) is
    named by no retained checkpoint now, and the cleaner deletes it."""
    for key in sorted(pinned - em.coordinator.store.live_objects()):
        _delete(em, int(key.split("/")[1].removeprefix("chk-")), key)


def _delete(em: Emulation, checkpoint_id: int, key: str) -> None:
    em.batch.steps.append({"op": "delete", "checkpoint_id": checkpoint_id, "keys": [key], "subsumed": []})
