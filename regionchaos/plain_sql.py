"""The suites' rules as plain Spark SQL, without Great Expectations: a reference, never a verdict anyone reads.

In:  a SparkSession, the tables as Spark DataFrames (every row with its ``run_id``), optionally the run ids to
     answer for and the suites to run (default: all, `regionchaos.judge.suites.load_suites`).
Out: `plain_sql_checks(...)` -> run id -> its checks (`regionchaos.judge.checks.check_of`), the same rule SQL
     and the same session tuning as a GX pass (`regionchaos.judge.engine`), so ``bench/validate_cost.py``
     measures what GX adds, and a test can judge one suite of a tampered run in a second;
     `plain_sql_results` adds each run's merged verdict (`regionchaos.judge.checks.merged`).

The judge (`regionchaos.judge`) never calls this: every run's verdict comes from GX's results.
"""

from __future__ import annotations

from .judge.checks import check_of, merged, rule_result
from .judge.engine import prepare_tables, register_views, tuned_session
from .judge.suites import Suite, load_custom, load_suites


def plain_sql_checks(spark, tables: dict, run_ids: list[str] | None = None, *, suites: list[Suite] | None = None,
                     total_rows: int = 0) -> dict[str, list[dict]]:
    """Run id -> checks, one per suite; ``{batch}`` is the ``rc_run`` view. A run asked for but not in the
    tables has no answer from any rule: unknown."""
    custom = load_custom()
    suites = suites or load_suites()
    tables = prepare_tables(tables, total_rows)
    register_views(tables)
    with tuned_session(spark, total_rows):
        batch = custom.batch_runs(spark, "rc_run")  # the runs the rules see: one asked for but not there is unknown
        out: dict[str, list] = {run_id: [] for run_id in (batch if run_ids is None else run_ids)}
        for suite in suites:
            error = None
            try:
                found = custom.collect_violations(spark, suite.combined_sql(), suite.rule_names, batch_view="rc_run",
                                                  runs=batch)
                found = {rule: rule_result(all(v["count"] == 0 for v in by_run.values()), custom.by_run_details(by_run))
                         for rule, by_run in found.items()}
            except Exception as exc:  # noqa: BLE001 - the suite's check is unknown, with why
                found, error = {}, f"{type(exc).__name__}: {exc}"
            for run_id, checks in out.items():
                checks.append(check_of(suite, run_id, found, error))
    return out


def plain_sql_results(spark, tables: dict, run_ids: list[str], *, total_rows: int = 0) -> dict[str, dict]:
    """`plain_sql_checks`, each run's checks merged: run id -> ``{"checks", "verdict"}``."""
    return {run_id: merged(checks) for run_id, checks in
            plain_sql_checks(spark, tables, run_ids, total_rows=total_rows).items()}
