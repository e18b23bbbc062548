"""Custom Great Expectations pieces of the invariant suites.

In:  the Spark batch of a validation (the ``run`` table: one row per run judged) and the
     SQL of each suite's rules (``expectations/sql/<suite>/<rule>.sql``), registered here
     by ``regionchaos.validate`` with `register_suite`.
Out: `ExpectRuleHolds`, an ``UnexpectedRowsExpectation`` subclass: "rule R of invariant
     suite S finds no violating row", and the metric behind it.

Why a custom metric: a plain ``UnexpectedRowsExpectation`` runs two Spark jobs per
expectation (the rows, then their count). Here every rule of a suite depends on the same
metric configuration (``regionchaos.suite_violations`` with ``suite=S``), which GX's
validation graph resolves once: one Spark job per suite computes, per run and rule, the
number of violating rows and up to `EXAMPLES_PER_RUN` examples. Each expectation then
reads its own rule's share. ``unexpected_rows_query`` still holds the rule's own SQL so
Data Docs show it.

Every rule query returns the same columns, in the FLIP's terms:
``run_id, checkpoint_id, region, subtask, operator, split, detail``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Optional, Tuple, Union

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine import ExecutionEngine, SparkDFExecutionEngine
from great_expectations.expectations.core.unexpected_rows_expectation import UnexpectedRowsExpectation
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.query_metric_provider import QueryMetricProvider

EXAMPLES_PER_RUN = 5
BATCH_VIEW = "rc_batch"  # the {batch} placeholder of the rule SQL (the run table)
COLUMNS = ("run_id", "checkpoint_id", "region", "subtask", "operator", "split", "detail")

SUITE_SQL: dict[str, str] = {}  # suite name -> the UNION ALL of its rules, tagged with ``rule``
SUITE_RULES: dict[str, tuple[str, ...]] = {}  # suite name -> its rule names (the evaluability probe included)


def register_suite(name: str, combined_sql: str, rules: tuple[str, ...]) -> None:
    SUITE_SQL[name] = combined_sql
    SUITE_RULES[name] = tuple(rules)


def violations_query(combined_sql: str, rules: tuple[str, ...], batch_view: str = BATCH_VIEW) -> str:
    """One query: for EVERY run of the batch and every rule, the count of violating rows (0
    included, so a run with no result row is a rule that did not answer) and the first examples."""
    body = combined_sql.replace("{batch}", batch_view)
    order = "checkpoint_id NULLS FIRST, region NULLS FIRST, subtask NULLS FIRST, operator, split NULLS FIRST, detail"
    names = ", ".join(f"('{r}')" for r in rules)
    ranked = (
        "SELECT v.*, count(*) OVER (PARTITION BY v.run_id, v.rule) AS violations,"
        f" row_number() OVER (PARTITION BY v.run_id, v.rule ORDER BY {order}) AS rn"
        f" FROM ({body}) v"
    )
    return (
        "SELECT r.rule, b.run_id, coalesce(x.violations, 0) AS violations, x.checkpoint_id, x.region, x.subtask,"
        " x.operator, x.split, x.detail"
        f" FROM (SELECT DISTINCT run_id FROM {batch_view}) b CROSS JOIN (VALUES {names}) AS r(rule)"
        f" LEFT JOIN (SELECT * FROM ({ranked}) WHERE rn <= {EXAMPLES_PER_RUN}) x"
        " ON x.run_id = b.run_id AND x.rule = r.rule"
    )


def collect_violations(spark, combined_sql: str, rules: tuple[str, ...],
                       batch_view: str = BATCH_VIEW) -> dict[str, dict[str, dict]]:
    """rule -> run_id -> {"count": n, "examples": [row dicts]}, an entry for every rule and run."""
    out: dict[str, dict[str, dict]] = {}
    for row in spark.sql(violations_query(combined_sql, rules, batch_view)).collect():
        d = row.asDict()
        rule, run_id, n = d.pop("rule"), d["run_id"], int(d.pop("violations"))
        entry = out.setdefault(rule, {}).setdefault(run_id, {"count": n, "examples": []})
        if n:
            entry["examples"].append(d)
    return out


class SuiteViolations(QueryMetricProvider):
    """Violating rows of every rule of one suite, computed in one Spark job."""

    metric_name = "regionchaos.suite_violations"
    value_keys = ("suite",)

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(
        cls,
        execution_engine: SparkDFExecutionEngine,
        metric_domain_kwargs: dict,
        metric_value_kwargs: dict,
        metrics: Dict[str, Any],
        runtime_configuration: dict,
    ) -> dict:
        suite = metric_value_kwargs["suite"]
        if suite not in SUITE_SQL:
            raise KeyError(f"suite {suite!r} is not registered (regionchaos.validate loads the suites)")
        df, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        df.createOrReplaceTempView(BATCH_VIEW)
        return collect_violations(execution_engine.spark, SUITE_SQL[suite], SUITE_RULES[suite])


class ExpectRuleHolds(UnexpectedRowsExpectation):
    """Rule ``rule`` of invariant suite ``suite`` holds: its SQL finds no violating row.

    ``unexpected_rows_query`` is the rule's own SQL (``{batch}`` = the run table, other
    tables as ``rc_<table>`` views); the rows are computed for the whole suite at once
    by the ``regionchaos.suite_violations`` metric.
    """

    suite: str
    rule: str

    metric_dependencies: ClassVar[Tuple[str, ...]] = ("regionchaos.suite_violations",)
    success_keys: ClassVar[Tuple[str, ...]] = ("suite", "rule", "unexpected_rows_query")

    def _validate(
        self,
        metrics: dict,
        runtime_configuration: Optional[dict] = None,
        execution_engine: Optional[ExecutionEngine] = None,
    ) -> Union[dict, Any]:
        per_run = metrics["regionchaos.suite_violations"].get(self.rule, {})
        total = sum(v["count"] for v in per_run.values())
        examples = [row for run in sorted(per_run) for row in per_run[run]["examples"]]
        return {  # a rule that answered for no run at all has not held: not a success
            "success": bool(per_run) and total == 0,
            "result": {
                "observed_value": total,
                "details": {
                    "unexpected_rows": examples[: 4 * EXAMPLES_PER_RUN],
                    "by_run": {run: v for run, v in sorted(per_run.items())},
                },
            },
        }
