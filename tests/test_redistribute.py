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
