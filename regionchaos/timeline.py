"""Emulated time: one event queue over milliseconds, as FoundationDB's and TigerBeetle's simulators keep.

In:  actions (callables with their arguments) scheduled at an emulated instant, in ms since the
     run started, by the control plane (`regionchaos.emulator`) and the rooms it drives.
Out: the actions run one at a time in (time, sequence) order: two actions due at the same
     millisecond run in the order they were scheduled. Nothing here reads the wall clock or
     draws a number: every delay comes from the caller, which draws it from the seed's streams
     (`regionchaos.faultkinds.Stream`), so a seed replays event for event.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(eq=False)
class Scheduled:
    """One queued action. ``cancelled`` ones are skipped when they come up (a canceller whose
    checkpoint was decided first, a response of a task that restarted)."""

    time_ms: int
    seq: int
    action: Callable[..., Any]
    args: tuple = ()
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class Timeline:
    def __init__(self) -> None:
        self.now_ms = 0
        self._queue: list[tuple[int, int, Scheduled]] = []  # (time, seq, entry): tuples compare fast
        self._seq = 0

    def at(self, time_ms: int, action: Callable[..., Any], *args: Any) -> Scheduled:
        """Run ``action(*args)`` at ``time_ms`` (never earlier than now: the past is done)."""
        entry = Scheduled(max(int(time_ms), self.now_ms), self._seq, action, args)
        self._seq += 1
        heapq.heappush(self._queue, (entry.time_ms, entry.seq, entry))
        return entry

    def after(self, delay_ms: int, action: Callable[..., Any], *args: Any) -> Scheduled:
        return self.at(self.now_ms + max(0, int(delay_ms)), action, *args)

    def __bool__(self) -> bool:
        return any(not e.cancelled for _, _, e in self._queue)

    def step(self) -> bool:
        """Run the next action that is not cancelled; False when none is left."""
        while self._queue:
            _, _, entry = heapq.heappop(self._queue)
            if entry.cancelled:
                continue
            self.now_ms = entry.time_ms
            entry.action(*entry.args)
            return True
        return False

    def clear(self) -> None:
        """Forget everything queued (a JobManager that dies takes its timers with it; the caller
        schedules what survives again)."""
        self._queue.clear()
