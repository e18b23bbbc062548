"""A recursive rule's steps run once each in a GX pass (`regionchaos.judge.engine.tuned_session`).

Spark runs a recursive CTE step by step (``UnionLoopExec``): it counts each step's rows and, at
``spark.sql.cteRecursionAnchorRowsLimitToConvertToLocalRelation`` rows or fewer (100 by default),
collects them by running the step a second time. The rules that follow ref chains (``flip_bounds``
and the findings' chain mechanisms) scan and join the tables again in every step, so the pass sets
that limit to 0 (bench/results/probes/README.md, "Recursive steps run once"). Real Spark (the shared session):
the same rows either way, and fewer jobs with the pass's settings than with Spark's default."""

from __future__ import annotations

import pytest

import itertools

from regionchaos.judge import engine as E

LIMIT = "spark.sql.cteRecursionAnchorRowsLimitToConvertToLocalRelation"
# a chain 9 -> 7 -> 4 -> 2 -> 1 per run, as rc_entries' links; depth of each head as in ref_chain_depth_within_bound
CHAIN = """
WITH RECURSIVE links AS (
  SELECT DISTINCT run_id, checkpoint_id, ref_id FROM rc_probe_links WHERE ref_id < checkpoint_id
),
chain (run_id, head, cur, depth) AS (
  SELECT run_id, checkpoint_id, ref_id, 1 FROM links
  UNION ALL
  SELECT c.run_id, c.head, l.ref_id, c.depth + 1
  FROM chain c JOIN links l ON l.run_id = c.run_id AND l.checkpoint_id = c.cur
)
SELECT run_id, head, max(depth) AS depth FROM chain GROUP BY run_id, head
"""
_group = itertools.count()


def _run(spark) -> tuple[list[tuple], int]:
    """(the query's rows, sorted; how many Spark jobs it took)."""
    group = f"recursion-steps-{next(_group)}"
    spark.sparkContext.setJobGroup(group, "tests/test_recursion_steps.py")
    try:
        rows = sorted(tuple(r) for r in spark.sql(CHAIN).collect())
    finally:
        spark.sparkContext.setJobGroup("", "")
    return rows, len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


@pytest.mark.spark
def test_each_recursive_step_runs_once_with_the_same_rows(spark):
    links = [(run, n, ref) for run in ("run-a", "run-b") for n, ref in ((9, 7), (7, 4), (4, 2), (2, 1))]
    spark.createDataFrame(links, "run_id string, checkpoint_id int, ref_id int").createOrReplaceTempView("rc_probe_links")
    expected = sorted((run, head, depth) for run in ("run-a", "run-b")
                      for head, depth in ((9, 4), (7, 3), (4, 2), (2, 1)))
    before = spark.conf.get(LIMIT, None)
    with E.tuned_session(spark, 1_000):
        assert spark.conf.get(LIMIT) == "0"
        tuned_rows, tuned_jobs = _run(spark)
        spark.conf.set(LIMIT, "100")  # Spark's default, inside the same settings otherwise
        default_rows, default_jobs = _run(spark)
    assert tuned_rows == default_rows == expected
    # 4 steps with rows and an empty fifth: each step with rows is one job fewer (no second run to collect it)
    assert tuned_jobs < default_jobs, (tuned_jobs, default_jobs)
    assert spark.conf.get(LIMIT, None) == before  # restored afterwards
