"""Section 3 of PROTOCOL.md, rule by rule, through the CheckpointCoordinator's
own API (trigger_checkpoint / receive_acknowledge / receive_decline /
complete_pending_checkpoint)."""

from __future__ import annotations

import pytest

from regionchaos.protocol import coordinator as C
from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL
from regionchaos.protocol.topology import ALL_TO_ALL

from tests import memrun

from .model_helpers import coordinator, run_checkpoint, start

R0 = {("src", 0), ("proc", 0)}  # the tasks of region 0


def _fresh(splits=8, **kw):
    coord = coordinator(**kw)
    return coord, start(coord, splits)


def test_all_regions_ack_is_global_and_resets_counter():
    coord, owned = _fresh()
    assert run_checkpoint(coord, owned).status == GLOBAL
    assert run_checkpoint(coord, owned, fail={("src", 1)}).status == REGIONAL
    assert coord.counters.consecutive_regional == 1
    o = run_checkpoint(coord, owned)
    assert (o.status, o.counter_before, o.counter_after) == (GLOBAL, 1, 0)
    assert all(s.ref_checkpoint_id is None for s in o.checkpoint.operator_states.values())


def test_regional_takes_failed_region_entries_from_latest_completed():
    coord, owned = _fresh()
    first = run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, fail={("proc", 2)})
    assert o.status == REGIONAL and o.failed_regions == (2,)
    for (op, sub), st in o.checkpoint.operator_states.items():
        if sub == 2:
            assert st.ref_checkpoint_id == first.checkpoint_id
            assert st.handles == first.checkpoint.operator_states[(op, sub)].handles  # same physical handles
        else:
            assert st.ref_checkpoint_id is None
            assert {h.checkpoint_id for h in st.handles} == {o.checkpoint_id}
    assert o.notifications[("proc", 2)] == C.N_FALLBACK
    assert o.notifications[("proc", 0)] == C.N_REGIONAL_COMPLETE


def test_timeout_fails_the_region_like_a_decline():
    coord, owned = _fresh()
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, silent={("src", 3)})
    assert o.status == REGIONAL and o.timed_out == (("src", 3),) and o.failed_regions == (3,)


def test_decline_does_not_abort_before_every_task_responded():
    coord, owned = _fresh()
    run_checkpoint(coord, owned)
    pending = coord.trigger_checkpoint()
    coord.receive_decline(pending, ("src", 0), "CHECKPOINT_DECLINED")
    with pytest.raises(ValueError):
        coord.receive_decline(pending, ("src", 0), "again")  # one response per task
    assert pending.declines and not pending.acks  # still pending, nothing decided


# -- every abort condition of section 3.4 ------------------------------------------


def test_abort_regional_disabled():
    coord, owned = _fresh(region=False)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, fail={("src", 0)})
    assert (o.status, o.reason) == (C.ABORTED, C.R_REGIONAL_OFF)
    assert all(kind == C.N_ABORTED for kind in o.notifications.values())


def test_abort_single_region_job():
    coord, owned = _fresh(partitioning=ALL_TO_ALL)
    assert coord.num_regions == 1
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, fail={("src", 0)})
    assert (o.status, o.reason) == (C.ABORTED, C.R_SINGLE_REGION)


def test_abort_when_every_region_failed_even_at_ratio_one():
    coord, owned = _fresh(ratio=1.0)
    run_checkpoint(coord, owned)
    everyone = {("src", i) for i in range(4)}
    o = run_checkpoint(coord, owned, fail=everyone)
    assert (o.status, o.reason) == (C.ABORTED, C.R_ALL_FAILED)


def test_abort_without_earlier_completed_checkpoint():
    coord, owned = _fresh()
    o = run_checkpoint(coord, owned, fail={("src", 0)})
    assert (o.status, o.reason) == (C.ABORTED, C.R_NO_PREVIOUS)


def test_abort_failure_ratio_exceeded_and_boundary():
    coord, owned = _fresh(ratio=0.5)
    run_checkpoint(coord, owned)
    at_bound = run_checkpoint(coord, owned, fail={("src", 0), ("src", 1)})  # 2/4 == 0.5: allowed
    assert at_bound.status == REGIONAL
    over = run_checkpoint(coord, owned, fail={("src", 0), ("src", 1), ("proc", 2)})  # 3/4 > 0.5
    assert (over.status, over.reason) == (C.ABORTED, C.R_FAILURE_RATIO)


def test_forced_global_tier1_and_tier2_resets_counter():
    coord, owned = _fresh(max_consecutive=2, policy="reset-counter")
    run_checkpoint(coord, owned)
    assert run_checkpoint(coord, owned, fail={("src", 0)}).status == REGIONAL
    assert run_checkpoint(coord, owned, fail={("src", 0)}).status == REGIONAL
    o = run_checkpoint(coord, owned, fail={("src", 0)})  # counter 2 >= 2: forced (tier 1), fails
    assert o.forced_global and (o.status, o.reason) == (C.ABORTED, C.R_FORCED_GLOBAL)
    assert o.counter_after == 0  # tier 2: aborted normally, counter reset
    nxt = run_checkpoint(coord, owned, fail={("src", 0)})
    assert not nxt.forced_global and nxt.status == REGIONAL


def test_forced_global_keep_forcing_alternative():
    coord, owned = _fresh(max_consecutive=1, policy="keep-forcing")
    run_checkpoint(coord, owned)
    run_checkpoint(coord, owned, fail={("src", 0)})
    for _ in range(3):
        o = run_checkpoint(coord, owned, fail={("src", 0)})
        assert o.forced_global and o.reason == C.R_FORCED_GLOBAL and o.counter_after == 1
    o = run_checkpoint(coord, owned)
    assert o.forced_global and o.status == GLOBAL and o.counter_after == 0


def test_max_consecutive_zero_forces_every_checkpoint():
    coord, owned = _fresh(max_consecutive=0)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, fail={("src", 1)})
    assert o.forced_global and o.reason == C.R_FORCED_GLOBAL


def test_abort_coordinator_without_region_fallback():
    coord, owned = _fresh(fallback=False)
    run_checkpoint(coord, owned)
    o = run_checkpoint(coord, owned, fail={("src", 1)})
    assert (o.status, o.reason) == (C.ABORTED, C.R_NO_COORDINATOR_FALLBACK)


def test_abort_final_checkpoint_of_bounded_job():
    coord, owned = _fresh()
    run_checkpoint(coord, owned)
    coord.sources_exhausted = True
    o = run_checkpoint(coord, owned, fail={("src", 1)})
    assert o.final and (o.status, o.reason) == (C.ABORTED, C.R_FINAL)
    assert run_checkpoint(coord, owned).status == GLOBAL  # the retry succeeds globally


def test_limitation_blocking_edges_disable_regional():
    from regionchaos.scenario import load

    sc = load("smoke", overrides={"topology.exchange": "blocking", "faults.decline": 0.3, "checkpoints": 6})
    assert sc.warnings and not sc.region_enabled_effective
    result, _ = memrun.emulate(sc)
    decided = [e for e in result.events if e["kind"] == "checkpoint_decided"]
    assert {e["status"] for e in decided} <= {"GLOBAL", "ABORTED"}
    assert any(e["reason"] == C.R_REGIONAL_OFF for e in decided)


# -- the coordinator's region fallback state -------------------------------------


def test_enumerator_fallback_state_reports_late_splits_unassigned():
    coord, owned = _fresh(splits=4)
    run_checkpoint(coord, owned)
    coord.enumerator.add_splits([4, 5])
    for sub, new in coord.enumerator.assign_pending().items():
        owned.setdefault(sub, []).extend(new)
    late = {s for s in (4, 5)}
    holder = {coord.enumerator.owner[s] for s in late}
    failing = {("src", sub) for sub in holder}
    o = run_checkpoint(coord, owned, fail=failing)
    assert o.status == REGIONAL
    state = o.checkpoint.coordinator_state
    held = {e for (op, _), st in o.checkpoint.operator_states.items() if op == "source" for e in st.elements}
    assert late <= set(state["unassigned"])
    assert set(state["discovered"]) == held | set(state["unassigned"])
    assert not held & set(state["unassigned"])


def test_enumerator_mutant_reports_live_assignment():
    coord, owned = _fresh(splits=4, mutant="enumerator-no-fallback")
    run_checkpoint(coord, owned)
    coord.enumerator.add_splits([4])
    for sub, new in coord.enumerator.assign_pending().items():
        owned.setdefault(sub, []).extend(new)
    o = run_checkpoint(coord, owned, fail={("src", coord.enumerator.owner[4])})
    state = o.checkpoint.coordinator_state
    held = {e for (op, _), st in o.checkpoint.operator_states.items() if op == "source" for e in st.elements}
    assert 4 not in held and 4 not in state["unassigned"]  # split 4 is lost


# -- FLIP-147 trigger roots -----------------------------------------------------------


def test_finished_tasks_are_not_triggered_and_next_roots_are():
    coord, owned = _fresh()
    first = run_checkpoint(coord, owned)
    coord.task_finished(("src", 1), {"source": first.checkpoint.operator_states[("source", 1)]})
    pending = coord.trigger_checkpoint()
    assert ("src", 1) not in pending.triggered and ("proc", 1) in pending.triggered
    assert ("proc", 0) not in pending.triggered  # its source still runs
    assert ("src", 1) in pending.acks  # the finished task's final state is reused


# -- finding: tier 2 lets the ref chain outgrow max-consecutive-failures -------------


def _chain_depth(store, cp):
    refs = cp.ref_ids()
    return 0 if not refs else 1 + max(_chain_depth(store, store.get(r)) for r in refs)


@pytest.mark.parametrize("policy,expect_depth", [("reset-counter", 3), ("keep-forcing", None)])
def test_finding_tier2_reset_lets_ref_chain_exceed_bound(policy, expect_depth):
    """The shortest schedule (max-consecutive-failures = 2): G, R, R, forced
    global fails (abort, tier 2 resets the counter), R again: chain 5 -> 3 -> 2 -> 1
    (checkpoint 4 was aborted, so no chain passes through it) has depth 3 > 2. The dev
    list's alternative (keep forcing) keeps the bound."""
    coord, owned = _fresh(max_consecutive=2, policy=policy, retained=10)
    r0 = {("src", 0)}
    statuses = [run_checkpoint(coord, owned).status]
    statuses += [run_checkpoint(coord, owned, fail=r0).status for _ in range(4)]
    last = coord.store.latest()
    if expect_depth is None:
        assert statuses == [GLOBAL, REGIONAL, REGIONAL, C.ABORTED, C.ABORTED]
        assert _chain_depth(coord.store, last) <= 2
    else:
        assert statuses == [GLOBAL, REGIONAL, REGIONAL, C.ABORTED, REGIONAL]
        assert _chain_depth(coord.store, last) == expect_depth > coord.settings.max_consecutive_failures
