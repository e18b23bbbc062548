"""The implementation PR's semantics (``execution.checkpointing.region.semantics: pr``) beside
the FLIP's, one difference per test, through the CheckpointCoordinator's own API.

Each difference was read in apache/flink's ``RegionalCheckpointHandler`` (FLIP-600's
implementation): the order of its abort rules, where it sets ``forceGlobalNextCheckpoint``, its
in-memory counter, its fallback lookup ``lastCompleted.getOperatorStates().get(op).getState(
subtaskIndex)``, and its failed regions computed from declined tasks only. Every test runs the
same schedule under both semantics and asserts the two outcomes differ as the code says.
"""

from __future__ import annotations

import pytest

from regionchaos.protocol import coordinator as C
from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL

from .model_helpers import coordinator, run_checkpoint, start

SEMANTICS = ("flip", "pr")


def _fresh(semantics, splits=8, **kw):
    coord = coordinator(semantics=semantics, **kw)
    return coord, start(coord, splits)


def _region_tasks(*regions):
    return {(v, r) for r in regions for v in ("src", "proc")}


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_forced_checkpoint_aborted_by_the_failure_ratio(semantics):
    """FLIP: any failed forced checkpoint is tier 2 (counter reset, the next one is free).
    PR: the ratio rule fires before tier 2 and leaves the forced flag set."""
    coord, owned = _fresh(semantics, max_consecutive=1, ratio=0.5)
    assert run_checkpoint(coord, owned).status == GLOBAL
    assert run_checkpoint(coord, owned, fail=_region_tasks(0)).status == REGIONAL
    o = run_checkpoint(coord, owned, fail=_region_tasks(0, 1, 2))
    assert (o.status, o.forced_global, o.reason) == (C.ABORTED, True, C.R_FAILURE_RATIO)
    following = coord.trigger_checkpoint()
    assert following.forced_global is (semantics == "pr")


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_max_consecutive_zero(semantics):
    """FLIP: with max-consecutive-failures = 0 every checkpoint is forced global. PR: the flag is
    set only after a regional checkpoint completed, so one regional checkpoint goes through."""
    coord, owned = _fresh(semantics, max_consecutive=0)
    assert run_checkpoint(coord, owned).status == GLOBAL
    o = run_checkpoint(coord, owned, fail=_region_tasks(1))
    if semantics == "flip":
        assert (o.status, o.forced_global, o.reason) == (C.ABORTED, True, C.R_FORCED_GLOBAL)
    else:
        assert (o.status, o.forced_global) == (REGIONAL, False)
        assert coord.trigger_checkpoint().forced_global


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_counter_after_jobmanager_failover(semantics):
    """FLIP: a new JobManager rebuilds the consecutive counter from the store (the latest
    checkpoint's metadata). PR: the counter lives in the handler's memory and restarts at 0."""
    coord, owned = _fresh(semantics, max_consecutive=2)
    run_checkpoint(coord, owned)
    assert run_checkpoint(coord, owned, fail=_region_tasks(0)).status == REGIONAL
    assert run_checkpoint(coord, owned, fail=_region_tasks(0)).status == REGIONAL
    new = coordinator(semantics=semantics, max_consecutive=2, store=coord.store, first_id=coord.next_checkpoint_id)
    assert new.consecutive_regional == (2 if semantics == "flip" else 0)
    assert new.trigger_checkpoint().forced_global is (semantics == "flip")


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_fallback_after_rescale(semantics):
    """After a downscale 4 -> 2, subtask 1 fails its first checkpoint. FLIP (PROTOCOL.md 5): it
    falls back to its redistributed restored state. PR: to subtask 1's entry in the latest
    checkpoint, taken at the old parallelism (other splits)."""
    coord, owned = _fresh(semantics)
    latest = run_checkpoint(coord, owned).checkpoint
    restored = coord.restore_global(2)
    owned = {sub: list(states["source"].elements) for (v, sub), states in restored.items() if v == "src"}
    o = run_checkpoint(coord, owned, fail=_region_tasks(1))
    assert o.status == REGIONAL
    entry = o.checkpoint.operator_states[("source", 1)]
    if semantics == "flip":
        assert entry.elements == restored[("src", 1)]["source"].elements
    else:
        assert entry.elements == latest.operator_states[("source", 1)].elements
        assert entry.elements != restored[("src", 1)]["source"].elements


def test_upscale_fallback_has_no_entry_under_pr():
    """PR after an upscale 2 -> 4: a failed subtask whose index did not exist in L gets no entry."""
    coord, owned = _fresh("pr", parallelism=2, ratio=1.0)
    run_checkpoint(coord, owned)
    restored = coord.restore_global(4)
    owned = {sub: list(states["source"].elements) for (v, sub), states in restored.items() if v == "src"}
    o = run_checkpoint(coord, owned, fail=_region_tasks(3))
    assert o.status == REGIONAL
    assert ("source", 3) not in o.checkpoint.operator_states and ("source", 2) in o.checkpoint.operator_states


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_every_region_failed_at_ratio_one(semantics):
    """FLIP (as modelled, FINDINGS.md notes): abort, nothing fresh. PR: no such rule; the
    checkpoint completes REGIONAL with every entry referenced."""
    coord, owned = _fresh(semantics, ratio=1.0)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, fail=_region_tasks(0, 1, 2, 3))
    if semantics == "flip":
        assert (o.status, o.reason) == (C.ABORTED, C.R_ALL_FAILED)
    else:
        assert o.status == REGIONAL
        assert all(st.ref_checkpoint_id is not None for st in o.checkpoint.operator_states.values())


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_silent_task(semantics):
    """FLIP: a task that neither acks nor declines fails its region. PR: the handler counts
    declined tasks only; a silent task lets the whole checkpoint expire."""
    coord, owned = _fresh(semantics)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, silent={("src", 3)})
    if semantics == "flip":
        assert (o.status, o.failed_regions) == (REGIONAL, (3,))
    else:
        assert (o.status, o.reason) == (C.ABORTED, C.R_EXPIRED)
