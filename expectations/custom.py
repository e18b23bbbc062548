"""Custom Great Expectations pieces of the invariant suites.

In:  the Spark batch of a validation (the ``run`` table: one row per run judged) and the
     SQL of each suite's rules (``expectations/sql/<suite>/<rule>.sql``), registered here
     by ``regionchaos.judge.engine`` with `register_suite`.
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

Findings' mechanisms (``mechanisms/<finding>/<name>.sql``, `load_mechanisms`; the first line
``-- explains: suite.rule, ...`` names the rules it explains, the next comment lines say how): a query
returning the rule's violations a recorded finding's mechanism explains, as keys (``run_id,
checkpoint_id, region, subtask, operator, split``; NULL in a key column matches any value). Each
violating row is tagged with the findings whose mechanism explains it (``explained_by``, ids
joined by commas, "" for none), and the metric counts, per run and rule, the rows of each tag
(``explained``: tag -> rows). A row is tagged only with findings that apply to its run: the run table's
``findings`` column (`regionchaos.findings.applicable_ids`, from the run's scenario.json) names them, so a run's
tags do not depend on the runs judged beside it. ``regionchaos.findings.meets_expectation`` excuses a violation
only if a finding that applies to the run names its rule and explains the row.
"""

from __future__ import annotations

import html
import itertools
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Dict, Iterator, Optional, Tuple, Union

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine import ExecutionEngine, SparkDFExecutionEngine
from great_expectations.expectations.core.unexpected_rows_expectation import UnexpectedRowsExpectation
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.query_metric_provider import QueryMetricProvider
from great_expectations.render import LegacyDiagnosticRendererType, RenderedStringTemplateContent, RenderedTableContent
from great_expectations.render.renderer.renderer import renderer

EXAMPLES_PER_RUN = 5
Runs = Union[list, Future, None]  # the batch's run ids, a future of them, or None (query them): `collect_violations`
BATCH_VIEW = "rc_batch"  # the {batch} placeholder of the rule SQL (the run table)
COLUMNS = ("run_id", "checkpoint_id", "region", "subtask", "operator", "split", "detail")

SUITE_SQL: dict[str, str] = {}  # suite name -> the UNION ALL of its rules, tagged with ``rule``
SUITE_PARTS: dict[str, dict[str, str]] = {}  # suite name -> rule -> its part of SUITE_SQL
SUITE_MECHANISMS: dict[str, list] = {}  # suite name -> [(finding, the suite's rules it explains, sql)]
SUITE_RULES: dict[str, tuple[str, ...]] = {}  # suite name -> its rule names (the evaluability probe included)


MECHANISMS_DIR = Path(__file__).resolve().parent / "mechanisms"
KEYS = ("checkpoint_id", "region", "subtask", "operator", "split")  # besides run_id: NULL in a mechanism matches any


INCLUDE_RE = re.compile(r"^-- include: (_[\w.-]+\.sql)$", re.M)


SHARED_PARTS = "_shared"  # mechanisms/_shared/: parts the mechanisms of several findings include


def _with_includes(path: Path) -> str:
    """A mechanism's SQL, each ``-- include: _part.sql`` line replaced by that file of its folder, else of
    ``mechanisms/_shared/``: CTEs a finding's mechanisms share, or several findings' (a file whose name starts with
    ``_`` is such a part, not a mechanism; its own includes are looked up from its folder the same way)."""
    def part(match: re.Match) -> str:
        found = [f for f in (path.parent / match.group(1), path.parent.parent / SHARED_PARTS / match.group(1))
                 if f.is_file()]
        if not found:
            raise ValueError(f"{path}: includes {match.group(1)}, which is not in {path.parent} "
                             f"nor in {path.parent.parent / SHARED_PARTS}")
        return _with_includes(found[0]).rstrip("\n")  # a part may include parts too
    return INCLUDE_RE.sub(part, path.read_text())


def mechanism_files(directory: Path | None = None) -> list[tuple[str, tuple[str, ...], str, Path]]:
    """[(finding, rules it explains as ``suite.rule``, sql, path)] from ``mechanisms/<finding>/*.sql``, whose
    first line names the rules: ``-- explains: suite.rule, suite.rule``; ``_*.sql`` files are parts they include."""
    out = []
    for path in sorted((directory or MECHANISMS_DIR).glob("*/*.sql")):
        if path.name.startswith("_") or path.parent.name == SHARED_PARTS:
            continue
        sql = _with_includes(path)
        head = sql.splitlines()[0] if sql else ""
        if not head.startswith("-- explains:"):
            raise ValueError(f"{path}: the first line must be '-- explains: suite.rule, ...'")
        rules = tuple(r.strip() for r in head.removeprefix("-- explains:").split(",") if r.strip())
        out.append((path.parent.name, rules, sql, path))
    return out


def load_mechanisms(directory: Path | None = None) -> dict[str, list[tuple[str, tuple[str, ...], str]]]:
    """suite -> [(finding, the suite's rules the query explains, sql)]."""
    out: dict[str, list[tuple[str, tuple[str, ...], str]]] = {}
    for finding, rules, sql, _ in mechanism_files(directory):
        by_suite: dict[str, list[str]] = {}
        for r in rules:
            suite, rule = r.split(".", 1)
            by_suite.setdefault(suite, []).append(rule)
        for suite, names in by_suite.items():
            out.setdefault(suite, []).append((finding, tuple(names), sql))
    return out


def _strip(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--")).strip().rstrip(";")


Mechanisms = list[tuple[str, tuple[str, ...], str]]  # [(finding, the rules it is run for, its sql)]


def with_mechanisms(combined_sql: str, mechanisms: Mechanisms) -> str:
    """The suite's rows, each tagged ``explained_by``: the findings that apply to its run (the run table's
    ``findings``) and whose mechanism query names it."""
    if not mechanisms:
        return f"SELECT v.*, '' AS explained_by FROM ({combined_sql}) v"
    # run_id as the tables hold it (every mechanism reads it from one): a run id, or the swarm's bigint key
    # (regionchaos.swarm.run_keys), never cast to another type for the join with the rule's rows below
    cols = ("run_id, CAST(checkpoint_id AS BIGINT) AS checkpoint_id, CAST(region AS INT) AS region,"
            " CAST(subtask AS INT) AS subtask, CAST(operator AS STRING) AS operator, CAST(split AS INT) AS split")
    parts = [f"SELECT '{finding}' AS finding, explode(array({', '.join(repr(r) for r in rules)})) AS rule, {cols}"
             f" FROM (\n{_strip(sql)}\n) m{i}" for i, (finding, rules, sql) in enumerate(mechanisms)]
    match = " AND ".join(f"(m.{k} IS NULL OR m.{k} = v.{k})" for k in KEYS)
    picked = ", ".join(f"first(v.{c}) AS {c}" for c in ("rule", "run_id", *KEYS, "detail"))
    return (
        f"WITH v AS (SELECT monotonically_increasing_id() AS vid, x.* FROM ({combined_sql}) x),\n"
        f"m AS (SELECT mm.* FROM (\n{' UNION ALL '.join(parts)}\n) mm\n"
        "  JOIN {batch} fb ON fb.run_id = mm.run_id WHERE array_contains(split(fb.findings, ','), mm.finding))\n"
        f"SELECT {picked}, concat_ws(',', array_sort(collect_set(m.finding))) AS explained_by\n"
        f"FROM v LEFT JOIN m ON m.run_id = v.run_id AND m.rule = v.rule AND {match}\n"
        "GROUP BY v.vid"
    )


def register_suite(name: str, combined_sql: str, rules: tuple[str, ...], parts: dict[str, str] | None = None) -> None:
    """A suite's rules for `suite_violations`: their UNION ALL, names and (for the tagging pass) each
    rule's own part of the union; without ``parts`` the tagging pass re-runs the whole union."""
    SUITE_SQL[name] = combined_sql
    SUITE_RULES[name] = tuple(rules)
    SUITE_PARTS[name] = dict(parts or {})
    SUITE_MECHANISMS[name] = load_mechanisms().get(name, [])


def mechanisms_for(suite: str, present: dict[str, set[str]]) -> Mechanisms:
    """The mechanisms of ``suite`` a tagging query runs: each finding's, for the rules it names that fail in
    some run it applies to (``present``: failing rule -> the findings that apply to some run violating it)."""
    out = []
    for finding, rules, sql in SUITE_MECHANISMS.get(suite, []):
        named = tuple(r for r in rules if finding in present.get(r, ()))
        if named:
            out.append((finding, named, sql))
    return out


def mechanism_rules(mechanisms: Mechanisms) -> set[str]:
    """The rules the ``mechanisms`` are run for."""
    return {rule for _, named, _ in mechanisms for rule in named}


def tagged_sql(suite: str, mechanisms: Mechanisms) -> str:
    """The rules of ``suite`` the ``mechanisms`` are run for (all of them without registered parts), each
    violating row tagged ``explained_by`` by those mechanisms (`with_mechanisms`)."""
    failing = mechanism_rules(mechanisms)
    parts = SUITE_PARTS.get(suite) or {}
    if parts and failing <= set(parts):
        body = "\nUNION ALL\n".join(parts[r] for r in SUITE_RULES[suite] if r in failing)
    else:
        body = SUITE_SQL[suite]
    return with_mechanisms(body, mechanisms)


def explained_rules(suite: str) -> set[str]:
    """The rules of ``suite`` that some finding's mechanism names."""
    return {rule for _, rules, _ in SUITE_MECHANISMS.get(suite, []) for rule in rules}


def suite_violations(spark, suite: str, runs: Runs = None,
                     applicable: Callable[[], dict] | None = None) -> dict[str, dict[str, dict]]:
    """`collect_violations` for a registered suite. The findings' mechanism queries (a join per
    violating row, recursive ones in flip_bounds) only matter for rows that exist: the suite's
    rules run first on their own, and only the rules with a violating row in a run that a finding
    applies to AND whose mechanism names them are run again, their rows tagged by those mechanisms
    (`mechanisms_for`, `tagged_sql`), over those runs only (`only_runs`: the runs with a violating row of
    those rules that one of those findings applies to); their entries replace the untagged ones. Any other failing rule
    would come back from that second query exactly as from the first (every row tagged ""), so it is
    not run again. A suite that holds everywhere (most runs) costs what it did before the mechanisms;
    the counts and examples are the same either way. ``runs``: see `collect_violations`;
    ``applicable``: returns run -> the findings that apply to it (`batch_findings`, asked once per pass
    by `SuitePass`; None: queried here)."""
    rules = SUITE_RULES[suite]
    plain = collect_violations(spark, SUITE_SQL[suite], rules, runs=runs)
    failing = {rule for rule, per_run in plain.items() if any(entry["count"] for entry in per_run.values())}
    failing &= explained_rules(suite)
    if not failing:
        return plain
    findings_of = applicable() if applicable is not None else batch_findings(spark)
    present = {rule: set().union(*(findings_of.get(run, ()) for run, entry in plain[rule].items() if entry["count"]))
               for rule in failing}
    mechanisms = mechanisms_for(suite, present)
    if not mechanisms:
        return plain
    tagged_rules = tuple(r for r in rules if r in mechanism_rules(mechanisms))
    tagging = {f for f, _, _ in mechanisms}
    subset = sorted({run for rule in tagged_rules for run, entry in plain[rule].items()
                     if entry["count"] and findings_of.get(run, frozenset()) & tagging})
    with only_runs(spark, tagged_sql(suite, mechanisms), subset) as sql:
        tagged = collect_violations(spark, sql, tagged_rules, runs=subset)
    return {**plain, **{rule: {**plain[rule], **tagged[rule]} for rule in tagged_rules}}


_views_seq = itertools.count()
VIEW_RE = re.compile(r"\b(rc_[a-z_]+)\b")  # a table view the rule SQL reads (``rc_<table>``)


@contextmanager
def only_runs(spark, sql: str, runs: list) -> Iterator[str]:
    """``sql`` (``{batch}`` for the batch) reading only the rows of ``runs``: each ``rc_<table>`` view it names
    replaced, for the block, by a temp view of that table's rows of those runs. Every rule and mechanism reads
    only its own run's rows (a run's answer does not depend on the runs judged beside it), so a run's rows come
    out as from the whole batch, and the tagging query's joins see only the runs it tags: in the tests' pooled
    pass, where most suites have some failing run, tagging every run had cost two thirds of the pass
    (bench/results/judge_profile/README.md)."""
    from pyspark.sql import functions as F

    body = sql.replace("{batch}", BATCH_VIEW)
    prefix = f"rcs{next(_views_seq)}_"
    names = sorted(set(VIEW_RE.findall(body)))
    for name in names:
        spark.table(name).where(F.col("run_id").isin(runs)).createOrReplaceTempView(prefix + name[3:])
    try:
        yield VIEW_RE.sub(lambda m: prefix + m.group(1)[3:], body)
    finally:
        for name in names:
            spark.catalog.dropTempView(prefix + name[3:])


def violations_query(combined_sql: str, rules: tuple[str, ...], batch_view: str = BATCH_VIEW) -> str:
    """One query over the violating rows of ``rules``: per run and rule its first `EXAMPLES_PER_RUN` rows in
    order (``rn``), and per ``explained_by`` tag one row carrying the tag's row count (``rn_by`` 1,
    ``n_by``). A run and rule with no violating row has no row here (`collect_violations` gives it a
    zero entry). ``combined_sql`` without an ``explained_by`` column (`with_mechanisms` not applied: a suite's
    first query) counts every row as "", with windows over (run, rule) only. A rule's total is the sum of its
    tags' counts. (Windows over both partitionings, and a join of the batch's runs with the rule names giving
    the zeros in SQL, cost 0.9 of a warm pass's 4.8 s of suite queries on smoke:
    bench/results/probes/README.md.)"""
    body = combined_sql.replace("{batch}", batch_view)
    order = "checkpoint_id NULLS FIRST, region NULLS FIRST, subtask NULLS FIRST, operator, split NULLS FIRST, detail"
    only = f" WHERE v.rule IN ({', '.join(repr(r) for r in rules)})" if rules else ""
    if "explained_by" not in body:  # every row tagged "": a rule's rows are its one tag's, one partitioning does
        return (
            "SELECT *, rn AS rn_by FROM (SELECT v.*, '' AS explained_by,"
            f" row_number() OVER (PARTITION BY v.run_id, v.rule ORDER BY {order}) AS rn,"
            " count(*) OVER (PARTITION BY v.run_id, v.rule) AS n_by"
            f" FROM ({body}) v{only})"
            f" WHERE rn <= {EXAMPLES_PER_RUN}"
        )
    return (
        "SELECT * FROM (SELECT v.*,"
        f" row_number() OVER (PARTITION BY v.run_id, v.rule ORDER BY {order}) AS rn,"
        " count(*) OVER (PARTITION BY v.run_id, v.rule, v.explained_by) AS n_by,"
        f" row_number() OVER (PARTITION BY v.run_id, v.rule, v.explained_by ORDER BY {order}) AS rn_by"
        f" FROM ({body}) v{only})"
        f" WHERE rn <= {EXAMPLES_PER_RUN} OR rn_by = 1"
    )


def batch_runs(spark, batch_view: str = BATCH_VIEW) -> list[str]:
    """The run ids of the batch (the run table's view): every rule gets an entry for each."""
    return sorted(row[0] for row in spark.sql(f"SELECT DISTINCT run_id FROM {batch_view}").collect())


def batch_findings(spark, batch_view: str = BATCH_VIEW) -> dict[Any, frozenset[str]]:
    """Run id -> the findings that apply to it (the run table's ``findings``; none where it is NULL)."""
    rows = spark.sql(f"SELECT run_id, findings FROM {batch_view}").collect()
    return {row[0]: frozenset(filter(None, (row[1] or "").split(","))) for row in rows}


def collect_violations(spark, combined_sql: str, rules: tuple[str, ...], batch_view: str = BATCH_VIEW,
                       runs: Runs = None) -> dict[str, dict[str, dict]]:
    """rule -> run_id -> {"count": n, "examples": [row dicts], "explained": {tag: rows}}, an entry for
    every rule and every run of the batch, 0 and no examples where the rule found nothing (``explained``:
    see the module docstring). Rows of a run outside the batch are not counted. Examples in the rule's
    order (``rn``). ``runs``: the batch's run ids (`batch_runs`), or a future of them (read once the
    rows are in: a pass computes them beside its first suites), None to query them here."""
    rows = spark.sql(violations_query(combined_sql, rules, batch_view)).collect()
    if runs is None:
        runs = batch_runs(spark, batch_view)
    elif isinstance(runs, Future):
        runs = runs.result()
    out = {rule: {run_id: {"count": 0, "examples": [], "explained": {}} for run_id in runs} for rule in rules}
    ranked: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for row in rows:
        d = row.asDict()
        rule, run_id = d.pop("rule"), d["run_id"]
        rn, tag, n_by, rn_by = d.pop("rn"), d.pop("explained_by"), d.pop("n_by"), d.pop("rn_by")
        entry = out.get(rule, {}).get(run_id)
        if entry is None:  # not the batch's run (or not a rule asked for): as the rules' joins would drop it
            continue
        if rn <= EXAMPLES_PER_RUN:
            ranked.setdefault((rule, run_id), []).append((rn, d))
        if rn_by == 1:
            entry["explained"][tag or ""] = int(n_by)
            entry["count"] += int(n_by)
    for (rule, run_id), examples in ranked.items():
        out[rule][run_id]["examples"] = [d for _, d in sorted(examples, key=lambda pair: pair[0])]
    return out


class SuitePass:
    """One GX pass over one batch, its suites' Spark jobs run side by side.

    GX resolves the 12 suites' metrics one after the other, and each is one Spark job of a few dozen
    small stages over tables of a few thousand rows: its time is planning and per-stage latency, not
    data, so one job leaves the cores mostly idle (bench/results/judge_profile/). When GX asks for the
    first suite's metric, the pass submits a small query for the batch's run ids (`batch_runs`: each
    suite's zeros) and then every registered suite's job to a pool of ``workers`` threads, in GX's
    order; each suite's metric then waits for its own job. The jobs, their SQL and
    the values GX judges are the same as one at a time; a job that raises raises in its own suite's
    metric only (that suite is unknown). ``workers`` 1 computes each suite when GX asks. A big pass
    (`regionchaos.judge.engine.suite_workers`) runs two at once: one job alone left a core idle a sixth
    of the time. The findings that apply to each run (`batch_findings`) are asked once, by the first
    suite with a failing rule a mechanism names."""

    def __init__(self, workers: int):
        self.workers = max(1, int(workers))
        self.pool: ThreadPoolExecutor | None = None
        self.jobs: dict[str, Future] = {}
        self.runs: Runs = None  # the batch's run ids (`batch_runs`), once per pass
        self._findings: dict | None = None  # run -> the findings that apply to it (`batch_findings`), once per pass
        self._findings_lock = threading.Lock()

    def applicable(self, spark) -> dict:
        with self._findings_lock:
            if self._findings is None:
                self._findings = batch_findings(spark)
            return self._findings

    def violations(self, spark, suite: str, register_batch) -> dict:
        applicable = partial(self.applicable, spark)
        if self.workers == 1:
            register_batch()
            self.runs = batch_runs(spark) if self.runs is None else self.runs
            return suite_violations(spark, suite, self.runs, applicable)
        if self.pool is None:  # the first suite GX asks for: the batch view once, then the jobs
            register_batch()
            self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="regionchaos-suite")
            self.runs = self.pool.submit(batch_runs, spark)  # first in the queue: no suite's job waits on a job not started
            self.jobs = {name: self.pool.submit(suite_violations, spark, name, self.runs, applicable)
                         for name in SUITE_SQL}
        job = self.jobs.get(suite)
        return job.result() if job is not None else suite_violations(spark, suite, self.runs, applicable)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


_pass_lock = threading.Lock()
_active_pass: SuitePass | None = None


@contextmanager
def suite_pass(workers: int) -> Iterator[SuitePass]:
    """Scope one GX checkpoint run over one batch (`SuitePass`); the jobs end with it."""
    global _active_pass
    with _pass_lock:
        if _active_pass is not None:
            raise RuntimeError("a GX pass is already running in this process (temp views are per session)")
        _active_pass = SuitePass(workers)
    try:
        yield _active_pass
    finally:
        with _pass_lock:
            done, _active_pass = _active_pass, None
        done.close()


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
            raise KeyError(f"suite {suite!r} is not registered (regionchaos.judge.engine loads the suites)")
        df, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
        active = _active_pass or SuitePass(1)
        return active.violations(execution_engine.spark, suite, lambda: df.createOrReplaceTempView(BATCH_VIEW))


class ExpectRuleHolds(UnexpectedRowsExpectation):
    """Rule ``rule`` of invariant suite ``suite`` holds: its SQL finds no violating row.

    ``unexpected_rows_query`` is the rule's own SQL (``{batch}`` = the run table, other
    tables as ``rc_<table>`` views); the rows are computed for the whole suite at once
    by the ``regionchaos.suite_violations`` metric.

    Data Docs: GX's validation page draws a failed expectation's rows only from the
    column-map keys (``partial_unexpected_list``, ...), which a query expectation has not; its
    unexpected-table renderer is replaced here by one drawing ``details.unexpected_rows``
    (`unexpected_rows_table`) under a line saying how many rows violate the rule, per run.
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
                    **by_run_details(per_run),
                },
            },
        }

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(
        cls,
        configuration: Optional[Any] = None,
        result: Optional[Any] = None,
        runtime_configuration: Optional[dict] = None,
    ) -> Optional[list]:
        """The failed rule's violating rows on the validation page: a count line, then the rows."""
        return unexpected_rows_table((result.result or {}) if result is not None else {})


def by_run_details(per_run: dict[Any, dict]) -> dict:
    """A rule's answer for each run of the batch, as its result's ``details`` carry it: ``by_run`` (run -> its
    count, examples and tags) for the runs with violating rows, ``held_by`` (the sorted run ids) for the runs
    with none. GX copies and serialises every result it stores (``store_validation_results``): an entry per run
    of a 2,000-seed swarm cost its driver 10 of its 18 CPU seconds and the pass 7 of its 40 s (bench/results/
    probes/README.md, "A rule's result names the runs"); a run id each is a small part of that. A run in
    neither has no answer (`regionchaos.judge.checks` calls its rule unknown)."""
    return {"by_run": {run: v for run, v in sorted(per_run.items()) if v["count"]},
            "held_by": sorted(run for run, v in per_run.items() if not v["count"])}


def unexpected_rows_table(result: dict) -> Optional[list]:
    """GX render blocks of a rule's result (``observed_value``, ``details.unexpected_rows`` /
    ``by_run``): a line with the number of violating rows (per run when several) and how many
    are shown, then a table of them, one column per `COLUMNS` entry that has a value (``run_id``
    only when the rows are of several runs; values HTML-escaped: GX's page view puts table cells
    in the page as they are). None when no row violates the rule."""
    details = result.get("details") or {}
    rows = details.get("unexpected_rows") or []
    total = result.get("observed_value")
    if not rows:
        return None
    by_run = {run: v.get("count", 0) for run, v in (details.get("by_run") or {}).items() if v.get("count")}
    columns = [c for c in COLUMNS if any(row.get(c) is not None for row in rows)]
    if len(by_run) <= 1 and len({row.get("run_id") for row in rows}) <= 1 and "run_id" in columns:
        columns.remove("run_id")
    counts = "" if len(by_run) <= 1 else " (" + ", ".join(f"{run}: {n}" for run, n in sorted(by_run.items())) + ")"
    statement = RenderedStringTemplateContent(
        content_block_type="string_template",
        string_template={
            "template": f"$total violating row{'' if total == 1 else 's'}$counts"
                        + (":" if len(rows) >= (total or 0) else "; the first $shown:"),
            "params": {"total": str(total if total is not None else len(rows)), "counts": counts,
                       "shown": str(len(rows))},
            "tag": "strong",
            "styling": {"classes": ["text-danger"]},
        },
    )
    table = RenderedTableContent(
        content_block_type="table",
        table=[["null" if row.get(c) is None else html.escape(str(row.get(c))) for c in columns] for row in rows],
        header_row=list(columns),
        styling={"body": {"classes": ["table-bordered", "table-sm", "mt-3"]}},
    )
    return [statement, table]
