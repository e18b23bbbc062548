"""The handler's fallback, retention and split hand-back under both semantics (FINDINGS.md,
"The implementation PR's semantics"), and the hazard the hand-back opens (finding F10).

Each test runs the same schedule through the model's own APIs (CheckpointCoordinator,
CompletedCheckpointStore, SplitEnumerator; for the hazard, the emulator writing into an
in-memory store) under ``semantics: flip`` and ``semantics: pr`` and asserts what each one does:

- 2. apache/flink ``RegionalCheckpointHandler.tryCompleteRegionalCheckpoint`` step 11 (commit
  4e12013748c0af9c17eeafb5b6c28d1806f51973): the fallback is grafted per operator and subtask
  index only where the last completed checkpoint has an entry, so after an upscale an
  acknowledging task of a failed region keeps its fresh entry. Read from the handler's code:
  ``RegionalCheckpointStateAssemblyTest`` (commit c62a17254dbc69a2021226c2d2eb6a078a90df90) only
  asserts its abort paths, none of the grafting. The FLIP falls back to the restored state
  (PROTOCOL.md 5).
- 3. ``DefaultCompletedCheckpointStore.computeReferencedCheckpointIds``, as
  ``RegionalCheckpointCleanerTest`` (commit ea6bf33b47488efcaf83168968af88f8aa09fb5c) asserts it:
  a checkpoint referenced by a retained one is kept whole, transitively, beyond num-retained.
  The FLIP keeps only the referenced files (PROTOCOL.md 4).
- 5. ``SourceCoordinatorRegionalCheckpointTest.testCheckpointCoordinatorForRegionFallback`` /
  ``testRegionFallbackWithNoAssignmentsAfterCheckpoint`` / ``testRegionFallbackMultipleSubtasks``
  (commit ea6bf33b47488efcaf83168968af88f8aa09fb5c) with ``SplitAssignmentTracker.
  removeAssignmentsAfterCheckpoint`` (raoraoxiong/flink e354d1dcac38e3bbcb501e69b67181c31ebfb369):
  the failed subtasks' splits assigned after the fallback checkpoint go back to the live
  enumerator at once. The FLIP (PROTOCOL.md 3.7) only reports them unassigned in the
  checkpoint; the live enumerator gets them back when the region restarts.
"""

from __future__ import annotations

import pytest

from regionchaos import history
from regionchaos.protocol import coordinator as C
from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL, CompletedCheckpoint
from regionchaos.protocol.state import OperatorSubtaskState, StateHandle
from regionchaos.protocol.store import CompletedCheckpointStore, referenced_checkpoint_ids
from regionchaos.scenario import load
from tests import memrun

from .model_helpers import ack_states, coordinator, run_checkpoint, start

SEMANTICS = ("flip", "pr")


def _owned(restored):
    return {sub: list(states["source"].elements) for (v, sub), states in restored.items() if v == "src"}


# -- 2. the fallback, grafted per operator and subtask index ---------------------------------------


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_upscale_acknowledging_task_of_a_failed_region(semantics):
    """Upscale 2 -> 4, then source subtask 3 declines and process subtask 3 (same region) acks.
    PR: L (at P=2) has no entry at index 3, so process 3 keeps its fresh entry and source 3 has
    none. FLIP: both fall back to their restored state, referencing L."""
    coord = coordinator(2, semantics=semantics)
    owned = start(coord, 8)
    latest = run_checkpoint(coord, owned).checkpoint
    owned = _owned(coord.restore_global(4))
    o = run_checkpoint(coord, owned, fail={("src", 3)})
    assert (o.status, o.failed_regions) == (REGIONAL, (3,))
    entries = o.checkpoint.operator_states
    assert o.notifications[("proc", 3)] == C.N_FALLBACK
    if semantics == "pr":
        assert ("source", 3) not in entries
        for op in ("union", "rules"):
            assert entries[(op, 3)].ref_checkpoint_id is None
            assert {h.checkpoint_id for h in entries[(op, 3)].handles} == {o.checkpoint_id}
    else:
        assert entries[("source", 3)].ref_checkpoint_id == latest.checkpoint_id
        assert entries[("source", 3)].elements == tuple(owned[3])
        for op in ("union", "rules"):
            assert entries[(op, 3)].ref_checkpoint_id == latest.checkpoint_id
    # the healthy regions are fresh under both
    assert all(entries[(op, i)].ref_checkpoint_id is None for i in (0, 1, 2) for op in ("source", "union"))


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_acknowledging_task_of_a_failed_region_without_rescale_takes_the_fallback(semantics):
    """Where L has the entry, both graft it: the failed region's acking task is referenced."""
    coord = coordinator(4, semantics=semantics)
    owned = start(coord, 8)
    latest = run_checkpoint(coord, owned).checkpoint
    o = run_checkpoint(coord, owned, fail={("src", 1)})
    assert o.status == REGIONAL
    for op in ("union", "rules"):
        entry = o.checkpoint.operator_states[(op, 1)]
        assert entry.ref_checkpoint_id == latest.checkpoint_id
        assert entry.handles == latest.operator_states[(op, 1)].handles


def test_pr_fresh_entry_after_upscale_is_restored_by_its_region():
    """The fresh entry kept under PR is what the region restores from; the declined source
    subtask, with no entry, restores empty and its splits go back to the enumerator."""
    coord = coordinator(2, semantics="pr")
    owned = start(coord, 8)
    run_checkpoint(coord, owned)
    owned = _owned(coord.restore_global(4))
    o = run_checkpoint(coord, owned, fail={("src", 3)})
    restored = coord.restore_region(3)
    assert restored[("proc", 3)]["rules"] == o.checkpoint.operator_states[("rules", 3)]  # broadcast: its own entry
    assert restored[("src", 3)]["source"].elements == ()
    assert set(owned[3]) <= set(coord.enumerator.unassigned)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_a_region_failover_right_after_a_rescale_restores_the_redistributed_state(semantics):
    """Downscale 4 -> 2, then region 1 fails over before a checkpoint completes at the new parallelism: the
    restarted source subtask 1 reads the splits the rescale gave it (the scheduler's local failover restores through
    ``StateAssignmentOperation`` at the job's parallelism), under both semantics. Before, under the PR it restored
    old subtask 1's entry (the fallback table's old index): splits source 0 also read, and its own lost."""
    coord = coordinator(4, semantics=semantics)
    owned = start(coord, 8)
    run_checkpoint(coord, owned)
    rescaled = _owned(coord.restore_global(2))
    again = _owned(coord.restore_region(1))
    assert again == {1: rescaled[1]}, (again, rescaled)
    assert not set(again[1]) & set(rescaled[0])


# -- 3. retention: referenced checkpoints kept whole, transitively ----------------------------------


def _cp(cid: int, ref: int | None) -> CompletedCheckpoint:
    handle = StateHandle(f"chk-{ref or cid}/s", "s/0", ref or cid, (cid,))
    return CompletedCheckpoint(cid, REGIONAL if ref else GLOBAL, {"s": 1},
                               {("s", 0): OperatorSubtaskState((handle,), (), ref)})


def test_referenced_ids_follow_refs_transitively_and_keep_external_ids():
    """``computeReferencedCheckpointIds``: direct, transitive, none, and an id no longer stored."""
    assert referenced_checkpoint_ids([_cp(101, None), _cp(102, 101)], 1) == {101}
    assert referenced_checkpoint_ids([_cp(99, None), _cp(101, 99), _cp(102, 101)], 1) == {99, 101}
    assert referenced_checkpoint_ids([_cp(1, None), _cp(2, None), _cp(3, None)], 1) == set()
    assert referenced_checkpoint_ids([_cp(101, None), _cp(102, 50)], 1) == {50}


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_store_retention_of_a_referenced_chain(semantics):
    """num-retained 1; 102 refs 101 refs 99, then 103 is global (``testTransitiveReferenceProtection``,
    ``testReferenceChainBrokenAfterGlobalCheckpoint``). PR: 99 and 101 stay whole until 103; FLIP:
    only the newest is retained."""
    store = CompletedCheckpointStore(1, semantics=semantics)
    subsumed = []
    for cp in (_cp(99, None), _cp(101, 99), _cp(102, 101)):
        gone, _ = store.add(cp)
        subsumed += [c.checkpoint_id for c in gone]
    ids = [c.checkpoint_id for c in store.retained]
    assert ids == ([99, 101, 102] if semantics == "pr" else [102])
    assert subsumed == ([] if semantics == "pr" else [99, 101])
    gone, _ = store.add(_cp(103, None))
    assert [c.checkpoint_id for c in store.retained] == [103]
    assert [c.checkpoint_id for c in gone] == ([99, 101, 102] if semantics == "pr" else [102])


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_coordinator_keeps_the_referenced_checkpoint_whole_under_pr(semantics):
    """Through the coordinator, num-retained 1: 1 GLOBAL, 2 REGIONAL (region 0 refs 1). PR: 1 is
    not subsumed and none of its files is deleted; FLIP: 1 is subsumed and every file of 1 that 2
    does not name is deleted. Both keep what 2 names."""
    coord = coordinator(4, semantics=semantics, store=CompletedCheckpointStore(1, semantics=semantics))
    owned = start(coord, 8)
    first = run_checkpoint(coord, owned).checkpoint
    o = run_checkpoint(coord, owned, fail={("src", 0), ("proc", 0)})
    assert o.status == REGIONAL and o.checkpoint.ref_ids() == {first.checkpoint_id}
    only_in_first = first.object_keys() - o.checkpoint.object_keys()
    assert only_in_first  # regions 1-3 of checkpoint 1 are not referenced by 2
    if semantics == "pr":
        assert (o.subsumed, o.objects_to_delete) == ((), frozenset())
        assert [c.checkpoint_id for c in coord.store.retained] == [1, 2]
    else:
        assert o.subsumed == (1,) and o.objects_to_delete == only_in_first
    # a global checkpoint breaks the chain: under both, only it stays
    g = run_checkpoint(coord, owned)
    assert g.status == GLOBAL and [c.checkpoint_id for c in coord.store.retained] == [g.checkpoint_id]
    assert g.subsumed == ((1, 2) if semantics == "pr" else (2,))


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_recovered_store_keeps_the_referenced_chain(semantics):
    """A new JobManager's store applies the same retention to the metadata it finds."""
    store = CompletedCheckpointStore.recover([_cp(101, 99), _cp(99, None), _cp(102, 101)], 1, semantics=semantics)
    assert [c.checkpoint_id for c in store.retained] == ([99, 101, 102] if semantics == "pr" else [102])


# -- 5. the failed subtasks' splits back to the live enumerator -------------------------------------


def _discover(coord, owned, splits):
    coord.enumerator.add_splits(splits)
    for sub, new in coord.enumerator.assign_pending().items():
        owned.setdefault(sub, []).extend(new)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_splits_assigned_after_the_fallback_go_back_to_the_enumerator(semantics):
    """Splits 0-3 one per subtask; 1 GLOBAL; split 4 is assigned to subtask 0; 2: source 0 declines
    -> REGIONAL falling back to 1. PR: split 4 is unassigned in the live enumerator as the
    checkpoint completes. FLIP: subtask 0 still owns it until its region restarts."""
    coord = coordinator(4, semantics=semantics)
    owned = start(coord, 4)
    run_checkpoint(coord, owned)
    _discover(coord, owned, [4])
    assert owned[0] == [0, 4]
    o = run_checkpoint(coord, owned, fail={("src", 0)})
    assert o.status == REGIONAL
    assert 4 in o.checkpoint.coordinator_state["unassigned"]  # the mixed view, under both
    enum = coord.enumerator
    if semantics == "pr":
        assert (enum.unassigned, enum.owner.get(4)) == ([4], None)
    else:
        assert (enum.unassigned, enum.owner.get(4)) == ([], 0)
    coord.restore_region(0)  # the region restarts from 2 (source 0 holds split 0 only)
    assert (enum.unassigned, enum.owner.get(0)) == ([4], 0)


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_nothing_goes_back_without_assignments_after_the_fallback(semantics):
    """``testRegionFallbackWithNoAssignmentsAfterCheckpoint``: splits assigned before L stay."""
    coord = coordinator(4, semantics=semantics)
    owned = start(coord, 6)
    run_checkpoint(coord, owned)
    assert run_checkpoint(coord, owned, fail={("src", 0)}).status == REGIONAL
    assert coord.enumerator.unassigned == []
    assert sorted(coord.enumerator.owner) == list(range(6))


def test_pr_hands_back_only_the_failed_subtasks_splits():
    """``testRegionFallbackMultipleSubtasks``: subtasks 0 and 2 fail; each one's split assigned
    after L goes back, subtask 1's stays with it."""
    coord = coordinator(4, semantics="pr", ratio=0.5)
    owned = start(coord, 4)
    run_checkpoint(coord, owned)
    _discover(coord, owned, [4, 5, 6])
    assert {s: coord.enumerator.owner[s] for s in (4, 5, 6)} == {4: 0, 5: 1, 6: 2}
    o = run_checkpoint(coord, owned, fail={("src", 0), ("src", 2)})
    assert (o.status, o.failed_regions) == (REGIONAL, (0, 2))
    assert coord.enumerator.unassigned == [4, 6] and coord.enumerator.owner[5] == 1


# -- the hazard: a split handed back while its reader still runs (F10) -----------------------------


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_region_failed_by_timeout_keeps_its_splits_under_flip(semantics):
    """Source 0 stays silent (a timeout: it has not crashed). FLIP: its region fails, the checkpoint
    completes REGIONAL and the live enumerator keeps split 4 with it: no second reader can take it.
    PR: the splits go back exactly when the checkpoint completes REGIONAL with source 0's region
    failed (as modelled today a silent task expires the checkpoint, F8; where the canceller marks it
    declined instead, the region fails and the split goes back as after a decline)."""
    coord = coordinator(4, semantics=semantics)
    owned = start(coord, 4)
    run_checkpoint(coord, owned)
    _discover(coord, owned, [4])
    o = run_checkpoint(coord, owned, silent={("src", 0)})
    handed_back = coord.enumerator.owner.get(4) is None
    if semantics == "flip":
        assert (o.status, o.failed_regions, handed_back) == (REGIONAL, (0,), False)
    else:
        assert handed_back is (o.status == REGIONAL and 0 in o.failed_regions)


def _duplicated_commits(commits: list[dict]) -> list[tuple[int, tuple[int, int], tuple[int, int]]]:
    """Pairs of committed sink transactions of one split whose record ranges overlap."""
    out, seen = [], {}
    for c in commits:
        rng = (c["start"], c["end"])
        out += [(c["split"], old, rng) for old in seen.get(c["split"], []) if rng[0] < old[1] and old[0] < rng[1]]
        seen.setdefault(c["split"], []).append(rng)
    return out


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_hazard_split_handed_back_while_its_reader_runs(semantics):
    """Scenario ``pr-split-handed-back`` (seed 1): 1 GLOBAL; split 4 discovered -> source 0; 2:
    source 0 is silent (snapshot taken, ack late) -> REGIONAL (region 0 failed, process 0 pre-committed). Source 0 has not crashed and keeps reading split 4. PR: the
    split is back in the enumerator at 2's completion and is assigned again before 3; its new
    reader starts at the split's start, and the sink commits split 4's first records twice
    (read from the sink commits the emulation wrote). FLIP: split 4 stays with its reader; it
    is assigned once and nothing is committed twice."""
    sc = load("pr-split-handed-back", overrides={"execution.checkpointing.region.semantics": semantics})
    result, store = memrun.emulate(sc)
    events = result.events
    assigned = [(e["attempt"], e["subtask"]) for e in events if e["kind"] == "split_assigned" and e["split"] == 4]
    decided = {e["checkpoint_id"]: e["status"] for e in events if e["kind"] == "checkpoint_decided"}
    assert decided[2] == REGIONAL
    assert not any(e["kind"] in ("region_failover", "global_restore") for e in events)  # nobody restarted
    duplicates = _duplicated_commits(memrun.commits(store))
    if semantics == "pr":
        assert len(assigned) == 2
        assert duplicates and {d[0] for d in duplicates} == {4}
        assert all(d[1][0] == 0 or d[2][0] == 0 for d in duplicates[:1])  # read again from the split's start
    else:
        assert len(assigned) == 1
        assert duplicates == []


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_f10_scenario_keeps_fresh_state_in_a_failed_region_under_pr(semantics):
    """Scenario ``pr-upscale-fresh-fallback``: 1 GLOBAL at P=4; upscale to 6; 2: source 5 declines.
    Read from checkpoint 2's ``_metadata`` as written to storage, in the history objects (the
    ``_metadata`` object itself is subsumed and deleted by the end): PR,
    process 5's entries are fresh and source 5 has none; FLIP, every entry of region 5 references
    checkpoint 1."""
    sc = load("pr-upscale-fresh-fallback", overrides={"execution.checkpointing.region.semantics": semantics})
    _, store = memrun.emulate(sc)
    stored = history.decode(store.get_many(store.list_keys("history/")).values())
    written = [e["metadata"] for e in stored if e["kind"] == "checkpoint_completed" and e["checkpoint_id"] == 2]
    assert len(written) == 1
    meta = CompletedCheckpoint.from_json(written[0])
    assert (meta.checkpoint_type, meta.failed_regions) == (REGIONAL, (5,))
    region5 = {op: st.ref_checkpoint_id for (op, sub), st in meta.operator_states.items() if sub == 5}
    if semantics == "pr":
        assert region5 == {"counter": None, "epoch": None, "rules": None, "sink": None}
    else:
        assert region5 == {op: 1 for op in ("source", "offsets", "counter", "epoch", "rules", "sink")}


def test_pr_hands_back_after_the_checkpoint_its_decision_grafted_from():
    """The region-fallback call runs on the coordinator's thread after the decision, and checkpoint 3 completes
    GLOBAL in between. The call is handed the decision's ``fallbackCheckpointId`` (1), not the latest when it runs
    (3): split 4, assigned to source 0 after 1 and before 3's trigger, goes back."""
    coord = coordinator(4, semantics="pr")
    owned = start(coord, 4)
    run_checkpoint(coord, owned)  # 1
    _discover(coord, owned, [4])
    assert coord.enumerator.owner[4] == 0
    pending = coord.trigger_checkpoint()  # 2: source 0 declines
    for task in sorted(pending.expected):
        if task == ("src", 0):
            coord.receive_decline(pending, task, "CHECKPOINT_DECLINED")
        else:
            coord.receive_acknowledge(pending, task, ack_states(pending.checkpoint_id, task, owned))
    outcome, kind, _ = coord.decide(pending)
    assert (kind, outcome.failed_regions) == (REGIONAL, (0,))
    assert run_checkpoint(coord, owned).status == GLOBAL and coord.store.latest().checkpoint_id == 3
    assert coord.enumerator.owner[4] == 0  # nothing handed back before the call runs
    assert coord.region_fallback(pending, outcome, 1) is None
    assert coord.enumerator.owner.get(4) is None and 4 in coord.enumerator.unassigned
