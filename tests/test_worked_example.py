"""The seed's worked example (FLIP-600 thread): P=4 -> 2 -> 1 with checkpoints
100 (GLOBAL), 101 and 102 (REGIONAL), driven through the CheckpointCoordinator.

The example's job at P=1 has a single subtask; the coordinator aborts a
regional checkpoint of a single-region job (PROTOCOL.md 3.4), so the job here
also runs an independent side pipeline (one more region, parallelism fixed at
1) that acks every checkpoint. The example's operator, its elements, refs and
chain are exactly the seed's.
"""

from __future__ import annotations

import pytest

from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL
from regionchaos.protocol.coordinator import CheckpointCoordinator, CoordinatorSettings
from regionchaos.protocol.state import EVEN_SPLIT, UNION, OperatorSubtaskState, StateHandle
from regionchaos.protocol.store import CompletedCheckpointStore
from regionchaos.protocol.topology import JobGraph, JobVertex


def _coordinator(mode: str) -> CheckpointCoordinator:
    g = JobGraph((JobVertex("op", 4, ("state",)), JobVertex("side", 1, ("side",))))
    return CheckpointCoordinator(
        g,
        CoordinatorSettings(region_enabled=True, max_failure_ratio=0.5, max_consecutive_failures=2,
                            forced_global_policy="reset-counter"),
        CompletedCheckpointStore(num_retained=3),
        operator_modes={"state": mode, "side": EVEN_SPLIT},
        next_checkpoint_id=100,
    )


def _st(cid: int, sub: int, elements) -> dict:
    return {"state": OperatorSubtaskState((StateHandle(f"chk-{cid}/tm-0.state", f"state/{sub}", cid, tuple(elements)),))}


def _side(cid: int) -> dict:
    return {"side": OperatorSubtaskState((StateHandle(f"chk-{cid}/tm-0.state", "side/0", cid, (f"S{cid}",)),))}


def _checkpoint(coord, acks: dict[int, list[str]], declines: list[int]):
    pending = coord.trigger_checkpoint()
    cid = pending.checkpoint_id
    for sub, elements in acks.items():
        coord.receive_acknowledge(pending, ("op", sub), _st(cid, sub, elements))
    for sub in declines:
        coord.receive_decline(pending, ("op", sub), "CHECKPOINT_DECLINED")
    coord.receive_acknowledge(pending, ("side", 0), _side(cid))
    return coord.complete_pending_checkpoint(pending)


def _entry(outcome, sub):
    st = outcome.checkpoint.operator_states[("state", sub)]
    return [e for e in st.elements], st.ref_checkpoint_id, [(e, h.checkpoint_id) for h in st.handles for e in h.elements]


ABCD = {0: ["A0", "A1"], 1: ["B0", "B1"], 2: ["C0", "C1"], 3: ["D0", "D1"]}
ALL8 = ["A0", "A1", "B0", "B1", "C0", "C1", "D0", "D1"]


def test_even_split_worked_example():
    coord = _coordinator(EVEN_SPLIT)
    c100 = _checkpoint(coord, ABCD, [])
    assert (c100.checkpoint_id, c100.status) == (100, GLOBAL)

    restored = coord.restore_global(2, fixed_vertices=("side",))
    assert restored[("op", 0)]["state"].elements == ("A0", "A1", "B0", "B1")
    assert restored[("op", 1)]["state"].elements == ("C0", "C1", "D0", "D1")

    c101 = _checkpoint(coord, {0: ["E0", "E1", "E2", "E3"]}, [1])
    assert (c101.checkpoint_id, c101.status) == (101, REGIONAL)
    assert _entry(c101, 0)[:2] == (["E0", "E1", "E2", "E3"], None)
    elements, ref, origin = _entry(c101, 1)
    assert (elements, ref) == (["C0", "C1", "D0", "D1"], 100)
    assert {cid for _, cid in origin} == {100}  # the same physical handles, pre-merged

    restored = coord.restore_global(1, fixed_vertices=("side",))
    assert restored[("op", 0)]["state"].elements == ("E0", "E1", "E2", "E3", "C0", "C1", "D0", "D1")

    c102 = _checkpoint(coord, {}, [0])
    assert (c102.checkpoint_id, c102.status) == (102, REGIONAL)
    elements, ref, origin = _entry(c102, 0)
    assert elements == ["E0", "E1", "E2", "E3", "C0", "C1", "D0", "D1"]
    assert ref == 101
    # which time point each element comes from
    assert origin == [("E0", 101), ("E1", 101), ("E2", 101), ("E3", 101),
                      ("C0", 100), ("C1", 100), ("D0", 100), ("D1", 100)]

    # the ref chain 102 -> 101 -> 100 lives in the store's metadata
    chain, cp = [], coord.store.get(102)
    while cp is not None:
        chain.append(cp.checkpoint_id)
        refs = cp.ref_ids()
        assert len(refs) <= 1
        cp = coord.store.get(refs.pop()) if refs else None
    assert chain == [102, 101, 100]


def test_union_worked_example():
    coord = _coordinator(UNION)
    assert _checkpoint(coord, ABCD, []).status == GLOBAL

    restored = coord.restore_global(2, fixed_vertices=("side",))
    assert [restored[("op", i)]["state"].elements for i in (0, 1)] == [tuple(ALL8)] * 2

    c101 = _checkpoint(coord, {0: [f"E{i}" for i in range(8)]}, [1])
    assert c101.status == REGIONAL
    assert _entry(c101, 1)[:2] == (ALL8, 100)

    restored = coord.restore_global(1, fixed_vertices=("side",))
    assert list(restored[("op", 0)]["state"].elements) == [f"E{i}" for i in range(8)] + ALL8

    c102 = _checkpoint(coord, {}, [0])
    assert c102.status == REGIONAL
    assert _entry(c102, 0)[:2] == ([f"E{i}" for i in range(8)] + ALL8, 101)
    assert coord.store.get(102).ref_ids() == {101}
    assert coord.store.get(101).ref_ids() == {100}
    assert coord.store.get(100).ref_ids() == set()


@pytest.mark.parametrize("mutant", ["split-drops-remainder", "union-as-split"])
def test_redistribution_mutants_break_the_example(mutant):
    """The same example with a broken redistribution rule no longer matches the seed."""
    from regionchaos import redistribute

    old = [ABCD[i] for i in range(4)]
    mode = UNION if mutant == "union-as-split" else EVEN_SPLIT
    correct = redistribute(old, 3 if mode == EVEN_SPLIT else 2, mode)
    broken = redistribute(old, 3 if mode == EVEN_SPLIT else 2, mode, mutant=mutant)
    assert broken != correct
