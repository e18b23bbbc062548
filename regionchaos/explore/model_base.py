"""What every part of the explorer's run model shares: the kinds of event on its queue, and the records of an
attempt in flight and of what one step did.

In:  nothing.
Out: the event kinds (the emulator's actions: ``(time_ms, seq, kind, args)`` on `Model.queue`), `Attempt`,
     `Step` (see `regionchaos.explore.model`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..faultkinds import AttemptFaults
from ..protocol.coordinator import PendingCheckpoint


# the events of the queue, as the emulator's actions: (time_ms, seq, kind, args); ``notify``: a completed
# checkpoint's notifications reaching the tasks (bounded jobs only: a source finishes, the job finishes)
INTERVAL, DUE, ARRIVE, CANCELLER, FALLBACK_DONE, FINALIZED, LAND_REST, RESTART, NOTIFY = (
    "interval", "due", "arrive", "canceller", "fallback_done", "finalized", "land_rest", "restart", "notify")


@dataclass
class Attempt:
    """One checkpoint attempt in flight (`regionchaos.checkpointing.Attempt` without its data)."""

    index: int
    checkpoint_id: int
    life: int  # the JobManager life that triggered it (the emulator compares coordinator objects)
    faults: AttemptFaults
    pending: PendingCheckpoint
    arrived: int = 0
    ended: str | None = None  # GLOBAL, REGIONAL, ABORTED, or None while in flight
    sources_done: frozenset[int] = frozenset()  # bounded: source subtasks whose input had ended at the trigger
    notified: bool = False  # its tasks were told of its end already (the ``notify-before-metadata`` mutant)


@dataclass
class Step:
    """What one step did: ``log`` the decisions and restores in order (`judging.conformance` compares them with
    the real emulation's history), ``completions`` per completed checkpoint (REGIONAL streak, ref-chain depth),
    ``shape`` the same without ids and with what a decision read and a failure interrupted: each decision's
    status, reason, forced flag, failed and timed-out regions, counter moves and job failure; each restore with
    the phases of the checkpoints pending when it came (the kinds of step `regionchaos.explore.search` judges)."""

    log: list[tuple] = field(default_factory=list)
    completions: list[tuple[int, int]] = field(default_factory=list)
    shape: list[tuple] = field(default_factory=list)
