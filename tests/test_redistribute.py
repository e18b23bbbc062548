"""``regionchaos.redistribute``: PROTOCOL.md section 5, element by element."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regionchaos import redistribute

lists = st.lists(st.lists(st.integers(0, 999), max_size=6), min_size=1, max_size=8)


def test_examples():
    old = [["A0", "A1"], ["B0", "B1"], ["C0", "C1"], ["D0", "D1"]]
    assert redistribute(old, 2, "even-split") == [["A0", "A1", "B0", "B1"], ["C0", "C1", "D0", "D1"]]
    assert redistribute(old, 3, "even-split") == [["A0", "A1", "B0"], ["B1", "C0", "C1"], ["D0", "D1"]]
    assert redistribute([[1, 2, 3, 4, 5]], 3, "even-split") == [[1, 2], [3, 4], [5]]
    assert redistribute([[1], [2]], 3, "union") == [[1, 2]] * 3
    assert redistribute([["x"], ["y"]], 5, "broadcast") == [["x"], ["y"], ["x"], ["y"], ["x"]]
    assert redistribute([[1]], 3, "even-split") == [[1], [], []]


@settings(max_examples=300, deadline=None)
@given(lists, st.integers(1, 9))
def test_even_split_is_contiguous_cut_of_concatenation(old, p):
    flat = [e for s in old for e in s]
    new = redistribute(old, p, "even-split")
    assert len(new) == p and [e for s in new for e in s] == flat
    q, r = divmod(len(flat), p)
    assert [len(s) for s in new] == [q + 1] * r + [q] * (p - r)


@settings(max_examples=200, deadline=None)
@given(lists, st.integers(1, 9))
def test_union_and_broadcast(old, p):
    flat = [e for s in old for e in s]
    assert redistribute(old, p, "union") == [flat] * p
    assert redistribute(old, p, "broadcast") == [list(old[i % len(old)]) for i in range(p)]


def test_bad_arguments():
    with pytest.raises(ValueError, match="new_parallelism"):
        redistribute([[1]], 0, "union")
    with pytest.raises(ValueError, match="mode"):
        redistribute([[1]], 1, "keyed")


def test_mutants_change_the_result():
    old = [[1, 2, 3], [4, 5]]
    assert sum(map(len, redistribute(old, 2, "even-split", mutant="split-drops-remainder"))) == 4
    assert redistribute(old, 2, "union", mutant="union-as-split") == [[1, 2, 3], [4, 5]]


def test_a_restore_after_a_rescale_redistributes_from_the_parallelism_its_state_was_written_at():
    """rescale-4-2-1, seed 36 with the swarm's fault mix: after the rescale to 1 a crash restores
    checkpoint 107 again, written at parallelism 2, before any checkpoint at parallelism 1 has
    completed. The redistribution rows must carry the checkpoint's parallelism (2 -> 1), not the
    job's (1 -> 1): with the job's, `elements_follow_mode` failed the correct protocol on 5 of 200
    seeds of a sweep (bench/results/seeds_matrix/mix_flip.md)."""
    from regionchaos.runner import emulate_in_memory
    from regionchaos.scenario import load
    from regionchaos.tables import column_names

    result, rows = emulate_in_memory(load("rescale-4-2-1", {"faults.swarm": True}, seed=36), None)
    entries = [dict(zip(column_names("entries"), r)) for r in rows["entries"]]
    written_at: dict[tuple[int, str], set[int]] = {}
    for en in entries:  # the subtasks each checkpoint holds state for, per operator
        written_at.setdefault((en["checkpoint_id"], en["operator"]), set()).add(en["subtask"])
    redis = [dict(zip(column_names("redistributions"), r)) for r in rows["redistributions"]]
    assert redis
    for r in redis:
        assert r["old_parallelism"] == len(written_at[(r["restore_from"], r["operator"])]), r
    job_side = {e["restore_id"]: e["old_parallelism"] for e in result.events if e["kind"] == "global_restore"}
    assert any(job_side[r["restore_id"]] != r["old_parallelism"] for r in redis)  # the case this is about
