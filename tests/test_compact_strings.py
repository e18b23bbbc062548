"""tables.compact_strings: a big run's frames hold each text value once, in objects made after the history.

No Spark: plain pandas frames of the shape `frame_of` builds (object columns of text and nulls).
"""

from __future__ import annotations

import pandas as pd

from regionchaos.tables import compact_strings, frame_of


def _texts(n: int) -> list[str]:
    """``n`` equal texts, each its own object (as decoding JSON row by row makes them)."""
    return ["".join(["notif", "ication"]) for _ in range(n)]


def test_each_distinct_text_is_one_new_object_and_the_values_stay():
    causes = _texts(500) + [None] * 3 + ["rescale-" + str(i % 2) for i in range(4)]
    frame = pd.DataFrame({"cause": causes, "n": range(len(causes))}, index=range(10, 10 + len(causes)))
    before = frame.copy(deep=True)
    originals = {id(v) for v in causes if v is not None}
    assert len(originals) > 3  # the input really has one object per row

    out = compact_strings(frame)

    assert out is frame
    pd.testing.assert_frame_equal(frame, before)  # same values, dtypes and index
    held = [v for v in frame["cause"] if v is not None]
    assert len({id(v) for v in held}) == 3  # "notification", "rescale-0", "rescale-1"
    assert not {id(v) for v in held} & originals  # made now, not one of the originals kept
    assert frame["cause"].isna().sum() == 3


def test_a_column_with_anything_but_text_is_left_as_it_is():
    mixed = _texts(3) + [[1, 2]]  # a list among texts: not a text column
    frame = pd.DataFrame({"mixed": mixed})
    compact_strings(frame)
    assert [id(v) for v in frame["mixed"]] == [id(v) for v in mixed]


def test_a_table_frame_of_the_real_schema_keeps_its_values():
    rows = [("run-1", "sink/commits/1.json", i, 1, 0, i, i + 1, 0, 0, 2, "".join(["notifi", "cation"]), 1,
             "".join(["[", "]"]), 0) for i in range(50)]
    frame = frame_of("commits", rows)
    expected = frame.copy(deep=True)
    compact_strings(frame)
    pd.testing.assert_frame_equal(frame, expected)
    assert len({id(v) for v in frame["lost"]}) == 1 and len({id(v) for v in frame["cause"]}) == 1
