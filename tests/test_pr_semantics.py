"""The implementation PR's semantics (``execution.checkpointing.region.semantics: pr``) beside
the FLIP's, one difference per test, through the CheckpointCoordinator's own API.

Each difference was read in apache/flink's ``RegionalCheckpointHandler`` (FLIP-600's
implementation): the order of its abort rules, where it sets ``forceGlobalNextCheckpoint``, its
in-memory counter, its fallback lookup ``lastCompleted.getOperatorStates().get(op).getState(
subtaskIndex)``, its failed regions computed from declined tasks (the canceller marks the tasks
still silent at the timeout declined), and its region count over the running tasks; and in the
coordinator glue of the PR author's fork (raoraoxiong/flink fada049, ``CheckpointCoordinator``):
the canceller, the decline buffering (not for savepoints, not with regional checkpoints off), the
counter reset of any fully acknowledged checkpoint, and the failure manager's accounting. Every
test runs the same schedule under both semantics and asserts what each says; where the two agree
the test says so.
"""

from __future__ import annotations

import dataclasses

import pytest

from regionchaos.protocol import coordinator as C
from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL

from .model_helpers import ack_states, coordinator, run_checkpoint, start

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
    assert new.counters.consecutive_regional == (2 if semantics == "flip" else 0)
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
def test_silent_task_fails_its_region(semantics):
    """Both: a task that neither acks nor declines fails its region. PR: the checkpoint timeout's
    CheckpointCanceller marks it declined (``PendingCheckpoint.markUnacknowledgedTasksAsDeclined``,
    raoraoxiong/flink fada049) and evaluates the regional completion; no expiry (F8 withdrawn)."""
    coord, owned = _fresh(semantics)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, silent={("src", 3)})
    assert (o.status, o.failed_regions, o.timed_out, o.reason) == (REGIONAL, (3,), (("src", 3),), None)
    assert o.checkpoint.operator_states[("source", 3)].ref_checkpoint_id == 1


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_silent_task_in_a_forced_checkpoint_is_tier_2(semantics):
    """A forced checkpoint whose task stays silent aborts as a failed forced checkpoint and resets
    the counter (and the PR's flag): the PR's RegionalCheckpointTimeoutTest.
    testTimeoutDuringForcedGlobalTriggersTier2Reset; the FLIP's tier 2."""
    coord, owned = _fresh(semantics, max_consecutive=1)
    run_checkpoint(coord, owned)
    assert run_checkpoint(coord, owned, fail=_region_tasks(0)).status == REGIONAL
    o = run_checkpoint(coord, owned, silent={("proc", 2)})
    assert (o.status, o.forced_global, o.reason, o.counter_after) == (C.ABORTED, True, C.R_FORCED_GLOBAL, 0)
    if semantics == "pr":
        assert not coord.counters.force_global_next
    assert not coord.trigger_checkpoint().forced_global


def _finish(coord, owned, *regions):
    for r in regions:
        for v in ("src", "proc"):
            coord.task_finished((v, r), ack_states(0, (v, r), owned))


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_finished_tasks_belong_to_no_region_in_the_ratio(semantics):
    """Behaviour 1. Regions 0 and 1 finished; region 2 declines at max-failure-ratio 0.3. PR: the
    handler counts the regions of the plan's tasksToWaitFor (running tasks): 1/2 > 0.3, abort.
    FLIP: silent (PROTOCOL.md counts "all regions"): 1/4 <= 0.3, REGIONAL."""
    coord, owned = _fresh(semantics, ratio=0.3)
    run_checkpoint(coord, owned)
    _finish(coord, owned, 0, 1)
    o = run_checkpoint(coord, owned, fail=_region_tasks(2))
    if semantics == "pr":
        assert (o.status, o.reason, o.num_regions) == (C.ABORTED, C.R_FAILURE_RATIO, 2)
    else:
        assert (o.status, o.num_regions) == (REGIONAL, 4)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_finished_tasks_belong_to_no_region_in_the_single_region_rule(semantics):
    """Behaviour 1. Regions 0-2 finished; the last running region declines. PR: one region in the
    plan, ``totalRegions <= 1``: abort. FLIP: the job has four regions: REGIONAL at ratio 0.5."""
    coord, owned = _fresh(semantics, ratio=0.5)
    run_checkpoint(coord, owned)
    _finish(coord, owned, 0, 1, 2)
    o = run_checkpoint(coord, owned, fail=_region_tasks(3))
    if semantics == "pr":
        assert (o.status, o.reason, o.num_regions) == (C.ABORTED, C.R_SINGLE_REGION, 1)
    else:
        assert o.status == REGIONAL and o.checkpoint.operator_states[("source", 3)].ref_checkpoint_id == 1


def _tolerating(coord, n):
    coord.settings = dataclasses.replace(coord.settings, tolerable_failed_checkpoints=n)
    return coord


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_failed_forced_checkpoint_and_tolerable_failures(semantics):
    """Behaviour 4. tolerable-failed-checkpoints 0. PR: the tier-2 abort goes through
    abortPendingCheckpoint (CHECKPOINT_DECLINED), CheckpointFailureManager counts it: 1 > 0, the job
    fails. FLIP (PROTOCOL.md 3.5): a failed forced checkpoint is "not a job failure"."""
    coord, owned = _fresh(semantics, max_consecutive=1)
    _tolerating(coord, 0)
    run_checkpoint(coord, owned)
    assert run_checkpoint(coord, owned, fail=_region_tasks(0)).status == REGIONAL
    o = run_checkpoint(coord, owned, fail=_region_tasks(0))
    assert (o.status, o.reason) == (C.ABORTED, C.R_FORCED_GLOBAL)
    assert o.job_failed is (semantics == "pr")
    assert o.failures_after == 0  # PR: cleared when it failed the job; FLIP: never counted


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_regional_completion_clears_the_failure_count(semantics):
    """Behaviour 4. tolerable 1: two failure-ratio aborts in a row fail the job; a REGIONAL
    completion between them clears the count (completeRegionalCheckpoint -> reportCompletedCheckpoint
    -> handleCheckpointSuccess). Both semantics: the FLIP leaves Flink's failure manager as it is."""
    coord, owned = _fresh(semantics, max_consecutive=10)
    _tolerating(coord, 1)
    run_checkpoint(coord, owned)
    first = run_checkpoint(coord, owned, fail=_region_tasks(0, 1, 2))
    assert (first.reason, first.failures_after, first.job_failed) == (C.R_FAILURE_RATIO, 1, False)
    regional = run_checkpoint(coord, owned, fail=_region_tasks(0))
    assert (regional.status, regional.failures_after) == (REGIONAL, 0)
    second = run_checkpoint(coord, owned, fail=_region_tasks(0, 1, 2))
    assert (second.failures_after, second.job_failed) == (1, False)
    third = run_checkpoint(coord, owned, fail=_region_tasks(0, 1, 2))
    assert (third.reason, third.job_failed, third.failures_after) == (C.R_FAILURE_RATIO, True, 0)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_savepoint_decline_aborts_at_once(semantics):
    """Behaviour 6. A savepoint takes the non-regional path under both: the first decline aborts it
    (receiveDeclineMessage buffers only ``!isSavepoint()``), it does not count toward
    tolerable-failed-checkpoints (CheckpointFailureManager skips savepoints) nor touch the counter."""
    coord, owned = _fresh(semantics, max_consecutive=3)
    _tolerating(coord, 0)
    run_checkpoint(coord, owned)
    run_checkpoint(coord, owned, fail=_region_tasks(1))
    sp = coord.trigger_savepoint()
    o = coord.receive_decline(sp, ("src", 2), "CHECKPOINT_DECLINED")
    assert o is not None and (o.status, o.reason, o.savepoint, o.job_failed) == (
        C.ABORTED, C.R_SAVEPOINT_DECLINED, True, False)
    assert (coord.counters.consecutive_regional, coord.counters.failed_checkpoints) == (1, 0)
    for task in sorted(sp.expected - {("src", 2)}):
        coord.receive_acknowledge(sp, task, ack_states(sp.checkpoint_id, task, owned))
    assert coord.complete_pending_checkpoint(sp) is o  # later acks do not revive it


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_completed_savepoint_and_the_counter(semantics):
    """Behaviour 6. PR: completePendingCheckpoint resets the counter and the forced flag for any
    fully acknowledged checkpoint, a savepoint too: the forced global checkpoint is skipped while
    the store's chain still ends in a REGIONAL checkpoint. FLIP: silent; the savepoint is not in
    the store and changes nothing the counter bounds: the next checkpoint is still forced."""
    coord, owned = _fresh(semantics, max_consecutive=1)
    run_checkpoint(coord, owned)
    assert run_checkpoint(coord, owned, fail=_region_tasks(0)).status == REGIONAL
    sp = coord.trigger_savepoint()
    assert not sp.forced_global
    for task in sorted(sp.expected):
        coord.receive_acknowledge(sp, task, ack_states(sp.checkpoint_id, task, owned))
    o = coord.complete_pending_checkpoint(sp)
    assert (o.status, o.savepoint) == (GLOBAL, True)
    assert coord.store.latest().checkpoint_id == 2  # not added to the store
    assert coord.trigger_checkpoint().forced_global is (semantics == "flip")


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_decline_with_regional_off_aborts_at_once(semantics):
    """Behaviour 7. Regional checkpoints off: the first decline aborts the checkpoint before the
    other tasks respond; their later acks do not change the decision."""
    coord, owned = _fresh(semantics, region=False)
    run_checkpoint(coord, owned)
    pending = coord.trigger_checkpoint()
    o = coord.receive_decline(pending, ("proc", 0), "CHECKPOINT_DECLINED")
    assert o is not None and (o.status, o.reason, o.failed_regions) == (C.ABORTED, C.R_REGIONAL_OFF, (0,))
    for task in sorted(pending.expected - {("proc", 0)}):
        coord.receive_acknowledge(pending, task, ack_states(pending.checkpoint_id, task, owned))
    assert coord.complete_pending_checkpoint(pending) is o and o.status == C.ABORTED


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_decline_with_regional_on_waits_for_every_task(semantics):
    """Behaviour 7's other side: with regional checkpoints on a decline is buffered."""
    coord, owned = _fresh(semantics)
    run_checkpoint(coord, owned)
    pending = coord.trigger_checkpoint()
    assert coord.receive_decline(pending, ("proc", 0), "CHECKPOINT_DECLINED") is None
    for task in sorted(pending.expected - {("proc", 0)}):
        coord.receive_acknowledge(pending, task, ack_states(pending.checkpoint_id, task, owned))
    assert coord.complete_pending_checkpoint(pending).status == REGIONAL


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_silent_task_with_regional_off(semantics):
    """PR, regional off: the canceller aborts as Flink always did, CHECKPOINT_EXPIRED
    (RegionalCheckpointTimeoutTest.testTimeoutFollowsOriginalPathWhenDisabled). FLIP: abort."""
    coord, owned = _fresh(semantics, region=False)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, silent={("src", 1)})
    assert o.status == C.ABORTED and o.counter_after == 0
    assert o.reason == (C.R_EXPIRED if semantics == "pr" else C.R_REGIONAL_OFF)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_availability_with_one_region_failing_every_checkpoint(semantics):
    """The Availability hazard, through the coordinator. Region 0 declines every checkpoint after
    the first (a slow region: the case the FLIP promises progress for, at max-failure-ratio 0.5 with
    1 of 4 regions failed). tolerable-failed-checkpoints 0, Flink's default. Tier 1 forces every third
    checkpoint (max-consecutive-failures 2); the forced one fails on region 0. PR: each of those
    aborts fails the job (F9). FLIP: aborted, never a job failure; the other regions keep completing."""
    coord, owned = _fresh(semantics, max_consecutive=2)
    _tolerating(coord, 0)
    run_checkpoint(coord, owned)
    outcomes = [run_checkpoint(coord, owned, fail=_region_tasks(0)) for _ in range(12)]
    forced = [o for o in outcomes if o.forced_global]
    assert [o.status for o in outcomes].count(REGIONAL) == 8 and len(forced) == 4
    assert all((o.status, o.reason) == (C.ABORTED, C.R_FORCED_GLOBAL) for o in forced)
    failures = sum(o.job_failed for o in outcomes)
    assert failures == (4 if semantics == "pr" else 0)
