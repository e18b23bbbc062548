"""Checkpoint state: handles, OperatorSubtaskState, and state redistribution.

In:  per-subtask operator list state (elements inside physical state handles).
Out: the state each new subtask restores after a restore at a new parallelism,
     following PROTOCOL.md section 5:
     - even-split: concatenate in subtask order, cut into contiguous runs; with
       ``total = q*P' + r`` the first ``r`` new subtasks get ``q+1`` elements;
     - union: every new subtask gets the whole concatenated list;
     - broadcast: new subtask ``i`` gets old subtask ``i mod P``'s copy;
     - channel state: by channel identity, never by time.

Handles are never copied: a redistributed handle names the same physical object
and segment, restricted to a subset of its elements (like Flink's
OperatorStreamStateHandle offsets).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Hashable, Iterable, Sequence

EVEN_SPLIT = "even-split"
UNION = "union"
BROADCAST = "broadcast"
MODES = (EVEN_SPLIT, UNION, BROADCAST)


@dataclass(frozen=True)
class StateHandle:
    """A list of state elements stored in ``segment`` of physical object ``object_key``,
    written by the snapshot of checkpoint ``checkpoint_id``."""

    object_key: str
    segment: str
    checkpoint_id: int
    elements: tuple[Hashable, ...]


@dataclass(frozen=True)
class ChannelStateHandle:
    """In-flight records of one input channel captured by an unaligned checkpoint."""

    object_key: str
    segment: str
    checkpoint_id: int
    channel: Hashable  # InputChannelInfo: stays with the channel across rescale
    records: tuple[int, int]  # [first, end) sequence numbers in flight on the channel


@dataclass(frozen=True)
class OperatorSubtaskState:
    """One operator x subtask entry of a checkpoint.

    ``ref_checkpoint_id`` is None for fresh state; otherwise the completed
    checkpoint this (pre-merged) entry was taken from.
    """

    handles: tuple[StateHandle, ...] = ()
    channel_state: tuple[ChannelStateHandle, ...] = ()
    ref_checkpoint_id: int | None = None

    @property
    def elements(self) -> tuple[Hashable, ...]:
        return tuple(e for h in self.handles for e in h.elements)

    def object_keys(self) -> set[str]:
        return {h.object_key for h in self.handles} | {c.object_key for c in self.channel_state}

    def as_reference(self, ref_checkpoint_id: int) -> OperatorSubtaskState:
        """The same physical handles, tagged as taken from ``ref_checkpoint_id``."""
        return replace(self, ref_checkpoint_id=ref_checkpoint_id)


def _cut(total: int, parallelism: int, drop_remainder: bool) -> list[tuple[int, int]]:
    q, r = divmod(total, parallelism)
    if drop_remainder:  # mutant split-drops-remainder
        return [(i * q, (i + 1) * q) for i in range(parallelism)]
    bounds, start = [], 0
    for i in range(parallelism):
        size = q + 1 if i < r else q
        bounds.append((start, start + size))
        start += size
    return bounds


def redistribute(
    states: Sequence[Sequence[Any]], new_parallelism: int, mode: str, *, mutant: str | None = None
) -> list[list[Any]]:
    """Redistribute per-old-subtask element lists to ``new_parallelism`` subtasks."""
    if new_parallelism < 1:
        raise ValueError(f"new_parallelism must be >= 1, got {new_parallelism}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == BROADCAST:
        if not states:
            return [[] for _ in range(new_parallelism)]
        return [list(states[i % len(states)]) for i in range(new_parallelism)]
    flat = [e for s in states for e in s]
    if mode == UNION and mutant != "union-as-split":
        return [list(flat) for _ in range(new_parallelism)]
    bounds = _cut(len(flat), new_parallelism, mutant == "split-drops-remainder")
    return [flat[a:b] for a, b in bounds]


def redistribute_handles(
    states: Sequence[OperatorSubtaskState], new_parallelism: int, mode: str, *, mutant: str | None = None
) -> list[tuple[StateHandle, ...]]:
    """Redistribute at handle level: the same element rules, each element
    staying in the physical handle it came from (no copy)."""
    tagged = [[(h, e) for h in s.handles for e in h.elements] for s in states]
    out = []
    for part in redistribute(tagged, new_parallelism, mode, mutant=mutant):
        handles: list[StateHandle] = []
        for handle, element in part:
            if handles and handles[-1][0] == handle:
                handles[-1][1].append(element)
            else:
                handles.append((handle, [element]))
        out.append(tuple(replace(h, elements=tuple(els)) for h, els in handles))
    return out


def assign_channel_state(
    states: Iterable[OperatorSubtaskState], owner: Callable[[Hashable], int], new_parallelism: int
) -> list[tuple[ChannelStateHandle, ...]]:
    """Reassign channel state handles by channel identity: ``owner(channel)``
    is the new subtask that reads that channel. Time of origin is irrelevant."""
    out: list[list[ChannelStateHandle]] = [[] for _ in range(new_parallelism)]
    for s in states:
        for c in s.channel_state:
            out[owner(c.channel)].append(c)
    return [tuple(sorted(x, key=lambda c: repr(c.channel))) for x in out]
