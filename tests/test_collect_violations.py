"""What one suite query gives GX (expectations/custom.py `collect_violations`), on Spark.

In:  a batch view of three runs and a suite's rows written out as VALUES: rule `a` violated 8 times
     in run r1 (three tags), rule `b` once in r2, rows of a run outside the batch, rows of a rule not asked for.
Out: an entry for every rule asked and every run of the batch (zeros where nothing violated), the count
     per tag and in all, the first EXAMPLES_PER_RUN examples in the rule's order, nothing of the run
     outside the batch or of the rule not asked for.
"""

from __future__ import annotations

import pytest

from expectations import custom

BATCH = "rc_test_collect_batch"
ROWS = [  # rule, run_id, checkpoint_id, region, subtask, operator, split, detail, explained_by
    ("a", "r1", 9, 0, None, "sink", None, "ninth", "F1"),
    ("a", "r1", 3, 1, None, "sink", None, "third, region 1", ""),
    ("a", "r1", 3, 0, None, "sink", None, "third, region 0", "F1"),
    ("a", "r1", None, None, None, "sink", None, "no checkpoint", ""),
    ("a", "r1", 7, 0, None, "sink", None, "seventh", ""),
    ("a", "r1", 1, 0, None, "sink", None, "first", "F1"),
    ("a", "r1", 8, 0, None, "sink", None, "eighth", ""),
    ("a", "r1", 7, 1, None, "sink", None, "seventh, region 1: sixth in order, its tag's first", "F2"),
    ("b", "r2", 4, 2, 1, "source", 5, "one", ""),
    ("a", "r9", 1, 0, None, "sink", None, "a run outside the batch", ""),
    ("z", "r1", 1, 0, None, "sink", None, "a rule not asked for", ""),
]


def _sql(rows, tagged: bool = True) -> str:
    """The rows as a suite's query; ``tagged`` False: without the ``explained_by`` column (no mechanisms)."""
    def lit(v):
        return "NULL" if v is None else (repr(v) if isinstance(v, str) else str(v))
    values = ",\n".join("(" + ", ".join(lit(v) for v in (row if tagged else row[:-1])) + ")" for row in rows)
    tag = ", explained_by" if tagged else ""
    return ("SELECT rule, run_id, CAST(checkpoint_id AS BIGINT) AS checkpoint_id, CAST(region AS INT) AS region,"
            f" CAST(subtask AS INT) AS subtask, operator, CAST(split AS INT) AS split, detail{tag} FROM VALUES\n"
            f"{values}\nAS t(rule, run_id, checkpoint_id, region, subtask, operator, split, detail{tag})")


@pytest.mark.spark
def test_every_run_and_rule_gets_an_entry_counted_by_tag_with_the_first_examples_in_order(spark):
    spark.sql("SELECT * FROM VALUES ('r1'), ('r2'), ('r3') AS t(run_id)").createOrReplaceTempView(BATCH)
    out = custom.collect_violations(spark, _sql(ROWS), ("a", "b", "c"), batch_view=BATCH)

    assert sorted(out) == ["a", "b", "c"]  # the rule not asked for is not there
    assert all(sorted(per_run) == ["r1", "r2", "r3"] for per_run in out.values())  # nor the run outside
    nothing = {"count": 0, "examples": [], "explained": {}}
    assert out["c"] == {"r1": nothing, "r2": nothing, "r3": nothing}
    assert out["a"]["r2"] == nothing and out["b"]["r1"] == nothing

    a = out["a"]["r1"]
    assert a["count"] == 8 and a["explained"] == {"F1": 3, "": 4, "F2": 1}
    assert [e["detail"] for e in a["examples"]] == ["no checkpoint", "first", "third, region 0", "third, region 1",
                                                    "seventh"]
    assert set(a["examples"][0]) == {"run_id", "checkpoint_id", "region", "subtask", "operator", "split", "detail"}
    assert out["b"]["r2"] == {"count": 1, "explained": {"": 1}, "examples": [
        {"run_id": "r2", "checkpoint_id": 4, "region": 2, "subtask": 1, "operator": "source", "split": 5,
         "detail": "one"}]}


@pytest.mark.spark
def test_rows_without_a_tag_count_as_untagged(spark):
    spark.sql("SELECT * FROM VALUES ('r1') AS t(run_id)").createOrReplaceTempView(BATCH)
    out = custom.collect_violations(spark, _sql(ROWS, tagged=False), ("a",), batch_view=BATCH)
    assert out["a"]["r1"]["count"] == 8 and out["a"]["r1"]["explained"] == {"": 8}
    assert [e["detail"] for e in out["a"]["r1"]["examples"]] == ["no checkpoint", "first", "third, region 0",
                                                                 "third, region 1", "seventh"]
