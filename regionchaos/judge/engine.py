"""The engine: one Great Expectations pass over a set of tables judges every run in them.

In:  a SparkSession, the tables as Spark DataFrames (every row carries its ``run_id``: a run id, or a
     swarm's bigint key), the run ids, their rows in all (how the session is tuned), the backend the runs
     come from; optionally a folder for GX's Data Docs.
Out: `judge(...)` -> (run id -> ``{"checks", "verdict"}`` (`regionchaos.judge.checks.merged`; ``error``
     when an invariant has no check), GX's timings, GX's checkpoint result); `GXValidator` (the GX
     context, suites and validation definitions of this process, built once), `tuned_session` and
     `session_settings` (Spark SQL settings for the pass), `judging_session` (the Spark session with
     GX set up meanwhile on another thread).

GX is built once per process (`GXValidator.get`): an ephemeral context, one suite and one validation
definition per invariant (and, the first time another backend is judged, one per suite that applies to
it, with only its rules there: `GXValidator.checkpoint_for`), all on a Spark dataframe asset whose batch
is the ``run`` table (one row per run judged); rules read the other tables as ``rc_<table>`` temp views,
so one validation judges one run or thousands. Each suite costs one Spark job (``expectations/custom.py``).
Temp views are per Spark session: do not validate two table sets concurrently in one session.

Great Expectations and pyspark are imported inside the functions that use them: importing GX takes
seconds, and a command refused before its judging answers without it.
"""

from __future__ import annotations

import datetime
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import datadocs, sparkrules
from .. import tables as tables_mod
from ..spark import get_spark
from .checks import check_of, rule_result
from .suites import DEFAULT_BACKEND, EVALUABLE, Suite, gx_suite_name, load_custom, load_suites, strip_comments

SMALL_TABLES_ROWS = 1_000_000  # below this Spark's per-job cost dominates (bench/results/validate_cost/README.md)
SUITE_WORKERS = 6  # suites judged at once on small tables (bench/results/judge_profile/)
# ... and on big ones: one suite's job left a core idle a sixth of the time (1.72 of 2 busy over the 12 suites'
# SQL on 3,000 swarm seeds' tables); two at once kept 1.95 busy for the same CPU, the warm pass 27.9-28.6 s
# instead of 30.4-31.8, alternating (bench/results/probes/README.md). Local mode runs two tasks at
# a time either way, so the jobs share the same task memory.
BIG_SUITE_WORKERS = 2
# A small pass's time is mostly Spark planning its suites' queries (analysis and optimisation of plans of dozens
# of joins), not running them: the optimiser rules that only prune data it does not have are off. Measured on the
# tests' pooled pass (166 runs, 295 k rows; bench/results/judge_profile/README.md): 161 -> 138-152 CPU s, every
# check the same.
PLANNING_CONF = {"spark.sql.constraintPropagation.enabled": "false",
                 "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
                 "spark.sql.optimizer.dynamicPartitionPruning.enabled": "false"}
BIG_PASS_BROADCAST_BYTES = "10MB"  # a big pass broadcasts a join side this small once its size is known (Spark's default)


def register_views(tables: dict) -> None:
    for name, df in tables.items():
        df.createOrReplaceTempView(f"rc_{name}")


@contextmanager
def tuned_session(spark, total_rows: int):
    """Spark SQL settings for many joins of small tables, restored afterwards. Below
    `SMALL_TABLES_ROWS` rows in all, Spark's cost per job and stage dominates: no adaptive
    re-planning (each adaptive stage is a job of its own), no broadcasts (a job each), one
    shuffle partition (see also `prepare_tables`, which puts each table in one partition), none of
    the optimiser rules that only prune data (`PLANNING_CONF`: planning, not running, is most of a small pass), and
    no whole-stage code generation: compiling the generated Java of every stage costs more
    than running it on a few thousand rows (measured on `smoke`: the 12 suites as plain SQL
    in 27 s instead of 41-49 s, bench/results/validate_cost/README.md), and for the same reason interpreted
    expressions instead of compiled ones (``codegen.factoryMode``: a warm smoke validation in
    9.4-9.7 s instead of 11.4-12.3 s, bench/results/validate_cost/README.md); both still win at ~1 M rows (a
    600-seed swarm: 39.3 s of GX instead of 47.7 s). Below `sparkrules.MAX_ROWS` rows, also the judge's plan
    rule (`regionchaos.sparkrules`, where its jar is built): no shuffle from one partition into one partition
    unless Spark reuses its output, with unions reporting the partitions they run as.

    Always: no level limit on recursive CTEs
    (``flip_bounds.ref_chain_depth_within_bound`` follows ref chains, only to older checkpoints
    and at most max-consecutive-failures + 1 links, which may be more than Spark's default 100), and no
    recursive step's rows turned into a local relation (``cteRecursionAnchorRowsLimitToConvertToLocalRelation``
    0): Spark counts each step's rows, then, at 100 rows or fewer, collects them by running the step a second
    time, and each step of these rules scans and joins the tables again (``flip_bounds`` and the findings'
    chain mechanisms: bench/results/probes/README.md).

    At or above `SMALL_TABLES_ROWS`, a table is broadcast only when the adaptive planner has seen its real size
    (``spark.sql.adaptive.autoBroadcastJoinThreshold``), never on the planner's estimate of a Parquet file: the
    swarm's tables compress some hundred times (``rc_entries`` of 1,000 smoke seeds: under 0.25 MB of Parquet for
    about 0.4 M rows), so ``final_checkpoint.finished_on_fresh_entry``'s ``LEFT JOIN rc_entries`` was planned as a
    broadcast of ``rc_entries``, and 10,000 seeds ran out of a 1 GB heap building a broadcast: that suite unknown
    for every seed (bench/results/probes/README.md)."""
    conf = {"spark.sql.cteRecursionLevelLimit": "-1",
            "spark.sql.cteRecursionAnchorRowsLimitToConvertToLocalRelation": "0"}
    if total_rows < SMALL_TABLES_ROWS:
        conf.update({"spark.sql.adaptive.enabled": "false", "spark.sql.autoBroadcastJoinThreshold": "-1",
                     "spark.sql.shuffle.partitions": "1", "spark.sql.codegen.wholeStage": "false",
                     "spark.sql.codegen.factoryMode": "NO_CODEGEN", **PLANNING_CONF,
                     **sparkrules.pass_conf(spark, total_rows)})
    else:
        conf.update({"spark.sql.autoBroadcastJoinThreshold": "-1",
                     "spark.sql.adaptive.autoBroadcastJoinThreshold": BIG_PASS_BROADCAST_BYTES})
    with session_settings(spark, conf):
        yield


@contextmanager
def session_settings(spark, conf: dict[str, str]):
    """``conf`` set on the session for the block, each key restored afterwards (unset where it was unset)."""
    old = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def suite_workers(total_rows: int) -> int:
    """How many suites' Spark jobs a GX pass runs at once: `SUITE_WORKERS` below `SMALL_TABLES_ROWS`
    rows (each job is latency, not data), `BIG_SUITE_WORKERS` above."""
    return SUITE_WORKERS if total_rows < SMALL_TABLES_ROWS else BIG_SUITE_WORKERS


def table_rows(frames: dict) -> int:
    return sum(len(f) for f in frames.values())


def prepare_tables(tables: dict, total_rows: int) -> dict:
    """Small tables in one partition each: joins, windows and aggregates then need few stages."""
    if total_rows < SMALL_TABLES_ROWS:
        return {name: df.coalesce(1) for name, df in tables.items()}
    return tables



def rule_results_from_gx(result) -> tuple[dict[str, dict], dict[str, str]]:
    """GX's checkpoint result -> (suite -> rule -> `rule_result`, suite -> error)."""
    rules: dict[str, dict] = {}
    errors: dict[str, str] = {}
    for vr in result.run_results.values():
        suite = vr.suite_name.split(".")[0]  # another backend's GX suite is SUITE.BACKEND (gx_suite_name)
        rules[suite] = {}
        for r in vr.results:
            raised = raised_by(r.exception_info)
            if raised is not None:  # GX reports a failed metric as success false: it is unknown
                errors[suite] = raised[:2000]
                continue
            rules[suite][r.expectation_config.kwargs["rule"]] = rule_result(r.success, (r.result or {}).get("details"))
    return rules, errors



# -- Great Expectations ------------------------------------------------------------------------


class GXValidator:
    """The GX context, suites and validation definitions of this process, built once."""

    _instance: GXValidator | None = None
    _lock = threading.Lock()
    SITE = "regionchaos"

    @classmethod
    def get(cls) -> GXValidator:
        with cls._lock:
            if cls._instance is None:
                cls._instance = GXValidator()
            return cls._instance

    @classmethod
    def build_in_background(cls) -> threading.Thread | None:
        """Start `get` on a daemon thread, then `tables.warm_up` (None when the validator exists already).
        Importing GX and building its context and suites is seconds of Python (2.6-3.0 s of a deep ``smoke``
        run's validation, bench/results/probes/README.md) that can overlap the Spark driver's start (Python
        waits on the JVM meanwhile); the tables' first conversions in a fresh JVM (about 2 s for a deep
        ``smoke`` run's, then 0.6-0.9 s) overlap the emulation. The caller's thread imports pyspark.sql first,
        so the modules both threads need are in place before this one imports GX. A failure here is not kept:
        the later `get` builds again and raises where the judge's errors are handled (the run is unknown)."""
        if cls._instance is not None:
            return None
        import pyspark.sql  # noqa: F401  (in the caller's thread, before the other starts)

        def build() -> None:
            try:
                cls.get()
                tables_mod.warm_up(get_spark())
            except Exception:  # noqa: BLE001  (built again, and reported, by the judge's own get)
                pass

        thread = threading.Thread(target=build, name="regionchaos-judge-set-up", daemon=True)
        thread.start()
        return thread

    def __init__(self, directory: Path | None = None):
        started = time.perf_counter()
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        self.gx = gx
        self.suites = load_suites(directory)
        self.custom = load_custom(directory)
        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        self.context = context
        get_spark()  # GX's Spark data source starts a session of its own (local[*], no Arrow) if none runs
        asset = context.data_sources.add_spark("regionchaos").add_dataframe_asset("run")
        self.batch = asset.add_batch_definition_whole_dataframe("runs")
        self.definitions = self._definitions(self.suites, DEFAULT_BACKEND)
        self.checkpoint = context.checkpoints.add(gx.Checkpoint(
            name="invariants", validation_definitions=self.definitions, result_format="COMPLETE"))
        self.checkpoints = {DEFAULT_BACKEND: self.checkpoint}  # every suite judges the emulation (_applies_to)
        self.build_seconds = round(time.perf_counter() - started, 3)

    def _definitions(self, suites: list[Suite], backend: str) -> list:
        """A GX suite and validation definition per suite, with its rules that judge ``backend``: the
        emulation's under the suite's name, another backend's under `gx_suite_name` (its Data Docs pages
        show the rules that judge it, no others)."""
        gx, out = self.gx, []
        for whole in suites:
            suite = replace(whole, rules=whole.rules_for(backend))
            name = gx_suite_name(suite.name, backend)
            self.custom.register_suite(name, suite.combined_sql(), suite.rule_names, suite.rule_parts())
            views = sorted({view for rule in (suite.evaluable, *suite.rules)
                            for view in self.custom.VIEW_RE.findall(rule.sql)})
            gx_suite = self.context.suites.add(gx.ExpectationSuite(name=name, meta={
                "invariant": suite.invariant, "title": suite.title, "claim": suite.claim, "backend": backend,
                "broken_by_mutants": list(suite.mutants), "broken_by_findings": list(suite.findings),
                "batch": "run", "views": views}, notes=_tables_note(views)))
            for rule in (suite.evaluable, *suite.rules):
                gx_suite.add_expectation(self.custom.ExpectRuleHolds(
                    suite=name, rule=rule.name, unexpected_rows_query=strip_comments(rule.sql),
                    description=(f"Evaluable: {rule.description}" if rule.name == EVALUABLE else rule.description),
                    meta={"rule": rule.name, "invariant": suite.invariant,
                          "views": sorted(set(self.custom.VIEW_RE.findall(rule.sql)))}))
            out.append(self.context.validation_definitions.add(
                gx.ValidationDefinition(name=name, data=self.batch, suite=gx_suite)))
        return out

    def applicable(self, backend: str) -> list[Suite]:
        """The suites that judge a run of ``backend`` (their ``applies_to`` names it)."""
        return [suite for suite in self.suites if suite.rules_for(backend) is not None]

    def checkpoint_for(self, backend: str):
        """GX's checkpoint of the suites that apply to ``backend``, built once per backend: a real run's GX pass
        evaluates (and its Data Docs show) those suites only; the others are `not_applicable_check`s."""
        if backend not in self.checkpoints:
            self.checkpoints[backend] = self.context.checkpoints.add(self.gx.Checkpoint(
                name=f"invariants-{backend}", result_format="COMPLETE",
                validation_definitions=self._definitions(self.applicable(backend), backend)))
        return self.checkpoints[backend]

    def validate(self, run_df, *, workers: int = 1, run_name: str | None = None, backend: str = DEFAULT_BACKEND
                 ) -> tuple[dict[str, dict], dict[str, str], Any]:
        """Run the suites that apply to ``backend`` (`checkpoint_for`) on the batch ``run_df`` (views must be
        registered), the suites' Spark jobs ``workers`` at a time (``expectations/custom.py``: `SuitePass`).
        ``run_name``: GX's run name (Data Docs' "Run Name" and the folder of the validation pages), our run id.

        Returns (suite -> rule -> `rule_result`, suite -> error, checkpoint result)."""
        from great_expectations.core.run_identifier import RunIdentifier

        run_id = RunIdentifier(run_name=run_name, run_time=datetime.datetime.now(datetime.timezone.utc))
        with self.custom.suite_pass(workers):
            result = self.checkpoint_for(backend).run(batch_parameters={"dataframe": run_df}, run_id=run_id)
        name_data_assets(result)
        rules, errors = rule_results_from_gx(result)
        return rules, errors, result

    def build_docs(self, result, target: Path) -> Path:
        """Data Docs of this validation only, into ``target`` (index.html at its root)."""
        sites = self.context.get_config().data_docs_sites or {}
        if self.SITE in sites:
            self.context.delete_data_docs_site(self.SITE)
        self.context.add_data_docs_site(self.SITE, {
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(target)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        })
        ids = [vr_id for vr_id in result.run_results]
        store = self.context.validation_results_store
        for key in store.list_keys():  # the site shows this validation, not earlier ones of the process
            if key not in ids:
                store.remove_key(key)
        for key, vr in result.run_results.items():  # as `name_data_assets` left them (GX stored them before)
            store.set(key, vr)
        self.context.build_data_docs(site_names=[self.SITE])
        datadocs.make_offline(target)  # the stored copy and the local mirror render offline, as written
        return target / "index.html"


def _tables_note(views: list[str]) -> str:
    """The suite's note on its Data Docs page: which tables its rules read."""
    read = ", ".join(f"`{v}`" for v in views) or "no other table"
    return (f"Batch: the data asset `run`, the `run` table (one row per run judged; `{{batch}}` in the rules). "
            f"The rules also read the run's tables as Spark views `rc_<table>`: {read}.")


def name_data_assets(result) -> None:
    """Name each validation's data asset where Data Docs look for it (``meta.batch_spec.data_asset_name``):
    GX 1.24's Spark dataframe asset puts its name only in ``active_batch_definition``, so the page
    said "Data asset: None". In place, on the checkpoint result's validation results."""
    for vr in result.run_results.values():
        asset = (vr.meta.get("active_batch_definition") or {}).get("data_asset_name")
        spec = vr.meta.get("batch_spec") or {}
        if asset and not spec.get("data_asset_name"):
            vr.meta["batch_spec"] = {**spec, "data_asset_name": asset}


def judging_session(app_name: str = "regionchaos"):
    """The process's Spark session (`regionchaos.spark.get_spark`) for a caller that is about to judge: the judge's
    set-up (`GXValidator.build_in_background`) goes on meanwhile on another thread."""
    GXValidator.build_in_background()
    return get_spark(app_name)


def gx_run_name(run_ids: list[str]) -> str:
    """GX's run name for a pass over ``run_ids``: the run id, or "N runs" (a swarm's pass)."""
    return run_ids[0] if len(run_ids) == 1 else f"{len(run_ids)} runs"


def raised_by(info) -> str | None:
    """The message of an exception GX caught while validating an expectation, if any.

    ``exception_info`` is either one ``{raised_exception, exception_message, ...}`` or, for
    metric failures, a mapping from metric configuration id to such dicts."""
    if not isinstance(info, dict):
        return None
    candidates = [info] if "raised_exception" in info else [v for v in info.values() if isinstance(v, dict)]
    for c in candidates:
        if c.get("raised_exception"):
            return str(c.get("exception_message") or c.get("exception_traceback") or "exception")
    return None


def judge(spark, tables: dict, run_ids: list, *, total_rows: int, docs_dir: Path | None = None,
          backend: str = DEFAULT_BACKEND, run_name: str | None = None) -> tuple[dict[Any, list[dict]], dict, Any]:
    """The one GX pass of every path (a deep run, many runs, the swarm, shrink, real Flink) over ``tables``
    (every row carries its ``run_id``). Returns (run id -> its checks, one per suite (`check_of`; a suite
    that does not apply to ``backend``: `not_applicable_check`), GX's timings, GX's checkpoint result for
    Data Docs and upload). ``run_ids`` are what the tables' ``run_id`` column holds: the run ids, or the
    swarm's bigint keys (`regionchaos.judge.intake.run_keys`, with ``run_name``: GX's name of the pass,
    default `gx_run_name`). A pass that raises leaves every check unknown with its error, never valid."""
    if not run_ids:
        return {}, {}, None
    timings = {}
    started = time.perf_counter()
    validator = GXValidator.get()
    timings["gx_setup"] = round(time.perf_counter() - started, 3)
    tables = prepare_tables(tables, total_rows)
    register_views(tables)
    started = time.perf_counter()
    try:
        with tuned_session(spark, total_rows):
            rules, errors, result = validator.validate(tables["run"], workers=suite_workers(total_rows),
                                                       run_name=run_name or gx_run_name(run_ids), backend=backend)
    except Exception as exc:  # the whole validation failed: every check unknown
        rules, errors, result = {}, {s.name: f"{type(exc).__name__}: {exc}" for s in validator.suites}, None
    timings["gx_validate"] = round(time.perf_counter() - started, 3)
    if docs_dir is not None and result is not None:
        started = time.perf_counter()
        validator.build_docs(result, docs_dir)
        timings["gx_datadocs"] = round(time.perf_counter() - started, 3)
    out = {run_id: [check_of(s, run_id, rules.get(s.name), errors.get(s.name), backend) for s in validator.suites]
           for run_id in run_ids}
    return out, timings, result
