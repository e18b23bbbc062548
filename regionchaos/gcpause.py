"""Bulk phases run with CPython's cyclic garbage collector paused.

In:  a phase of a run that allocates many small containers which live until the phase ends:
     the emulation (events, state rows, checkpoint metadata), reading a run back (decoding the
     history and the ``_metadata`` objects) and building its tables (rows as tuples).
Out: `paused`, a context manager and decorator that disables the collector for the phase and
     restores it afterwards. Nested phases leave it as the outermost found it.

Why: the generational collector is triggered by allocations and traverses the young objects
each time, then the older ones as they pile up. A phase that builds ten million objects that
all survive pays for those traversals again and again and reclaims nothing: measured on
``large`` (bench/results/run/large_profile.md), the control plane alone took 41 s with the collector on and
14 s with it off, at the same peak memory, and decoding the run's 200 MB history took 13 s
instead of 2 s. What these phases build is plain dicts, lists, tuples and frozen dataclasses,
freed by reference counting; the few cycles (the `Emulation` and its rooms refer to each other)
are reclaimed once the collector runs again.

Where: `regionchaos.runner` runs a deep run paused from start to end; a big one collects
explicitly between its phases (`release_memory`: after the emulation, whose objects are then
garbage, and before GX); the emulation, reading a run back, building its tables and the data plane's Spark
task pause on their own too, so the swarm's seeds and the report get the same.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from contextlib import ContextDecorator


class paused(ContextDecorator):  # noqa: N801 - used like a function: ``with paused():`` / ``@paused()``
    """Disable the cyclic garbage collector for the block (re-enable it after, if it was on)."""

    def _recreate_cm(self) -> paused:  # a decorated function gets a fresh one per call (threads, recursion)
        return type(self)()

    def __enter__(self) -> paused:
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc) -> bool:
        if self._was_enabled:
            gc.enable()
        return False


def release_memory() -> None:
    """Between two phases, once the first one's objects are dropped: collect the cycles among
    them, then hand the C heap's free pages back to the OS (glibc's ``malloc_trim``; a no-op
    elsewhere). Freed Python objects otherwise stay in the process's resident memory while
    the next phase (Spark's JVM judging the tables) grows beside it: measured on ``large``,
    the driver stayed at 2.7 GB through validation (bench/results/run/large_profile.md).

    A full collection costs ~0.2 s in a process that has imported GX and Spark: callers release
    after big phases only (a test suite makes hundreds of small runs)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
