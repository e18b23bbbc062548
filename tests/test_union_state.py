"""Union state as real operators use it, and finding F2 (Roman Khachatryan's objection).

In:  the CheckpointCoordinator's API (region failover of a job with union state); the control
     plane of `union-offsets-rescale` on its own seed (the shortest schedule we found); a valid
     smoke run on the embedded S3 whose union state object is edited; GX for the judgement (the
     session's pooled pass, tests/judge_pool.py).
Out: a region failover hands the restarted subtask every subtask's union list (Flink's
     StateAssignmentOperation repartitions union state on every restore); after a downscale,
     a REGIONAL checkpoint whose failed subtask falls back to its redistributed (whole) union
     list holds a split twice, and the last-entry-wins restore of the legacy Kafka consumer
     rewinds a healthy split, whose records are committed again; an edited union offset in a
     state object makes `union_offsets_reachable` fail.
"""

from __future__ import annotations

from pathlib import Path

import json
from collections import Counter

import pytest

from regionchaos import runner
from regionchaos.protocol.checkpoint import CompletedCheckpoint
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests import memrun
from tests.judge_pool import pooled

from .model_helpers import coordinator, run_checkpoint, start


def test_region_failover_restores_every_subtasks_union_list():
    coord = coordinator(4)
    owned = start(coord, 8)
    latest = run_checkpoint(coord, owned).checkpoint
    restored = coord.restore_region(2)
    whole = tuple(el for sub in range(4) for el in latest.operator_states[("union", sub)].elements)
    assert len(whole) == 4
    assert restored[("proc", 2)]["union"].elements == whole
    # even-split state still comes from the subtask's own entry
    assert restored[("src", 2)]["source"].elements == latest.operator_states[("source", 2)].elements


def _offsets(cp: CompletedCheckpoint) -> Counter:
    return Counter(el[1] for (op, _), st in cp.operator_states.items() if op == "offsets" for el in st.elements)


def test_f2_shortest_schedule_duplicates_a_split_and_rewinds_it():
    """union-offsets-rescale, seed 220: 101 GLOBAL at P=4; downscale to 2; 102 REGIONAL, subtask 1
    (region 1) declines and falls back to its whole redistributed union list; subtask 0 crashes
    and restarts from 102, where its splits' last entries are the stale ones of 101."""
    sc = load("union-offsets-rescale")
    result, store = memrun.emulate(sc)
    ev = result.events
    decided = {e["checkpoint_id"]: e for e in ev if e["kind"] == "checkpoint_decided"}
    assert decided[101]["status"] == "GLOBAL"
    restore = next(e for e in ev if e["kind"] == "global_restore")
    assert (restore["restore_from"], restore["old_parallelism"], restore["new_parallelism"]) == (101, 4, 2)
    assert (decided[102]["status"], decided[102]["failed_regions"]) == ("REGIONAL", [1])
    failovers = [(e["region"], e["restore_from"]) for e in ev if e["kind"] == "region_failover"]
    assert (0, 102) in failovers

    metadata = memrun.metadata(store)  # the _metadata objects retained at the end
    cp102 = CompletedCheckpoint.from_bytes(metadata[102])
    twice = sorted(split for split, n in _offsets(cp102).items() if n > 1)
    assert twice == sorted(cp102.operator_states[("source", 0)].elements)  # the healthy subtask's splits
    cp101 = CompletedCheckpoint.from_bytes(metadata[101])
    assert all(n == 1 for n in _offsets(cp101).values())  # a GLOBAL checkpoint holds each split once

    ranges: dict[int, list[tuple[int, int]]] = {}
    for txn in memrun.commits(store):
        ranges.setdefault(txn["split"], []).append((txn["start"], txn["end"]))
    overlapping = {s for s, rs in ranges.items() for (a, b), (c, d) in zip(sorted(rs), sorted(rs)[1:]) if c < b}
    assert overlapping and overlapping <= set(twice)


def test_f2_with_unaligned_channel_state_duplicates_and_loses_nothing():
    """unaligned-recovery-7-2, seed 155 of the swarm's fault mix, its faults pinned
    (tests/data/unaligned-recovery-7-2-s155-pinned.yaml, one checkpoint at a time): checkpoint 7 GLOBAL at P=7,
    downscale to 2; region 1 fails over and checkpoint 8 is REGIONAL with its fallback (the whole
    old union list); region 0 then restores from 8 with recovered channel state, and its splits'
    last union entries are 7's stale offsets. The recovered channel records still reach the
    counter and the sink before the source rewinds: F2 duplicates them, it must not drop any
    (the emulator once dropped [consumed, offset), e.g. records [19, 21) of split 0)."""
    sc = load(str(Path(__file__).parent / "data" / "unaligned-recovery-7-2-s155-pinned.yaml"))
    result, store = memrun.emulate(sc)
    ev = result.events
    restore = next(e for e in ev if e["kind"] == "global_restore" and e["cause"] == "rescale")
    assert (restore["restore_from"], restore["old_parallelism"], restore["new_parallelism"]) == (7, 7, 2)
    decided = {e["checkpoint_id"]: e for e in ev if e["kind"] == "checkpoint_decided"}
    assert (decided[8]["status"], decided[8]["failed_regions"]) == ("REGIONAL", [1])
    assert (0, 8) in [(e["region"], e["restore_from"]) for e in ev if e["kind"] == "region_failover"]
    cp8 = CompletedCheckpoint.from_json(next(e["metadata"] for e in ev
                                             if e["kind"] == "checkpoint_completed" and e["checkpoint_id"] == 8))
    assert any(n > 1 for n in _offsets(cp8).values())  # F2's premise: the union list holds a split twice

    assert not [e for e in ev if e["kind"] == "records_lost"]
    assert not [t for t in memrun.commits(store) if t["lost"]]
    ranges: dict[int, list[tuple[int, int]]] = {}
    for txn in memrun.commits(store):
        ranges.setdefault(txn["split"], []).append((txn["start"], txn["end"]))
    holes, overlaps = set(), set()
    for split, rs in ranges.items():
        reached = 0
        for lo, hi in sorted(rs):
            (holes if lo > reached else overlaps if lo < reached else set()).add(split)
            reached = max(reached, hi)
    assert not holes
    assert {0, 3} <= overlaps  # the splits the old model lost records of are duplicated instead


def _build(config, spark) -> list[ObjectStore]:
    """Smoke seed 2 twice, one copy's union offset edited in its stored state object (judged in the session's
    pooled pass, tests/judge_pool.py)."""
    stores = {}
    for tag in ("intact", "edited"):
        store = ObjectStore.for_run(config, f"union-tamper-{tag}")
        runner.start(store, load("smoke", seed=2), run_id=f"union-tamper-{tag}", mutant=None, replay="-")
        stores[tag] = store
    store = stores["edited"]
    latest = max(int(k.split("/")[1][4:]) for k in store.list_keys("checkpoints/") if k.endswith("/_metadata"))
    key = next(k for k in sorted(store.list_keys(f"checkpoints/chk-{latest}/"))
               if not k.endswith("_metadata") and "offsets/0" in json.loads(store.get(k))["segments"])
    doc = json.loads(store.get(key))
    doc["segments"]["offsets/0"][0]["value"] += 1  # the raw state object, not the emulator
    store.put(key, json.dumps(doc).encode())
    return list(stores.values())


pooled(__name__, _build)


@pytest.mark.spark
def test_edited_union_offset_breaks_union_offsets_reachable(judge_pool):
    judged = judge_pool.results(__name__)
    intact = {c["name"]: c for c in judged["union-tamper-intact"].checks}
    edited = {c["name"]: c for c in judged["union-tamper-edited"].checks}
    assert intact["reachable_global_state"]["success"] is True
    assert edited["reachable_global_state"]["success"] is False
    assert edited["reachable_global_state"]["failed_rules"] == ["union_offsets_reachable"]
