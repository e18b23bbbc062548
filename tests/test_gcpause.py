"""regionchaos.gcpause: the collector paused for a bulk phase and restored after it; freed
memory handed back between phases, cycles included."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from regionchaos.gcpause import paused, release_memory


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_paused_disables_the_collector_and_restores_it_even_on_error():
    with pytest.raises(ValueError):
        with paused():
            assert not gc.isenabled()
            raise ValueError("inside the phase")
    assert gc.isenabled()


def test_a_nested_phase_leaves_the_collector_as_the_outer_phase_found_it():
    with paused():
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer phase is still running
    assert gc.isenabled()
    gc.disable()
    with paused():
        pass
    assert not gc.isenabled()  # it was off before: it stays off


def test_a_decorated_function_pauses_per_call_across_threads():
    seen = []
    inside, leave = threading.Event(), threading.Event()

    @paused()
    def phase(wait: bool) -> None:
        seen.append(gc.isenabled())
        if wait:
            inside.set()
            leave.wait(5)

    worker = threading.Thread(target=phase, args=(True,))
    worker.start()
    inside.wait(5)
    phase(False)  # a second call while the first one is still inside: each restores its own state
    leave.set()
    worker.join(5)
    assert seen == [False, False]
    assert gc.isenabled()  # the first call found the collector on and turned it back on (one state per call)


def test_release_memory_collects_cycles_made_while_paused():
    class Node:
        pass

    with paused():
        c, d = Node(), Node()
        c.other, d.other = d, c  # a cycle: reference counting alone never frees it
        alive = weakref.ref(c)
        del c, d
        assert alive() is not None  # paused: nothing collected it
        release_memory()
        assert alive() is None

