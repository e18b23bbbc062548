"""Validation: the twelve invariant suites of PROTOCOL.md section 9, run with Great Expectations.

In:  a SparkSession and a run's prefix on S3 (or already loaded tables, `regionchaos.tables`);
     the suites in ``expectations/`` (``suites/NN_<name>.yaml`` lists the rules of a suite,
     ``sql/<name>/<rule>.sql`` holds each rule's query, ``custom.py`` the GX expectation).
Out: ``validate_run(...) -> {"checks", "verdict", "stats", "wall_seconds"}``, with
     ``validation/results.json`` (+ one GX result per suite under ``validation/``) and the GX
     Data Docs (``datadocs/index.html``) uploaded under the run's prefix.
     ``plain_sql_checks(spark, tables)`` runs the same rule SQL without GX (cost benchmark).

A check is the verdict of one suite for one run (Jepsen's checker), taken from GX's own
validation result: each expectation's ``success`` and its per-run unexpected rows (every rule
answers for every run of the batch, 0 rows included). ``success`` is true, false, or None
(unknown) when the suite could not be evaluated (its ``_evaluable.sql`` found a reason), raised,
has no rules, or a rule has no result for the run. Checks merge false > unknown > true into the
run's verdict; no checks at all, or no check for one of the registry's invariants
(`EXPECTED_INVARIANTS`), is unknown, never valid. `load_suites` refuses (SuiteError: the run is
unknown) suite files that do not cover the registry: a suite missing, ``rules: []``, a rule
whose SQL file is missing.

GX is built once per process (`GXValidator.get`): an ephemeral context, one suite and one
validation definition per invariant (and, the first time another backend is judged, one per suite
that applies to it, with only its rules there: `GXValidator.checkpoint_for`), all on a Spark
dataframe asset whose batch is the ``run`` table (one row per run judged); rules read the other tables as ``rc_<table>``
temp views, so one validation judges one run or thousands. Each suite costs one Spark job
(see ``expectations/custom.py``). Temp views are per Spark session: do not validate two
table sets concurrently in one session.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from . import datadocs, sparkrules
from . import tables as tables_mod
from .gcpause import release_memory
from .history import Kind
from .run import NOT_APPLICABLE, Verdict, unknown_result  # NOT_APPLICABLE: a check's state, its suite not applying
from .scenario import BACKENDS as SCENARIO_BACKENDS
from .scenario import INVARIANTS

# The registry: the twelve invariants of PROTOCOL.md section 9, in order, each judged by the suite of
# that name (scenario.INVARIANTS). A verdict is valid only if every one of them has a check and every
# rule its suite file names has a result; a suite or rule file that is missing is unknown, never a
# smaller "valid" (load_suites, merge_verdict).
EXPECTED_INVARIANTS = INVARIANTS
EXPECTATIONS_ENV = "REGIONCHAOS_EXPECTATIONS"
CUSTOM_MODULE = "regionchaos_expectations_custom"
EXAMPLES_IN_CHECK = 5
EVALUABLE = "_evaluable"
RULE_COLUMNS = ("run_id", "checkpoint_id", "region", "subtask", "operator", "split", "detail")
UNUSED_AFTER_LOAD = ("entries", "entry_splits", "truth", "task_responses")  # the big ones; Spark-only
SMALL_TABLES_ROWS = 1_000_000  # below this Spark's per-job cost dominates (bench/results/validate_cost/README.md)
SUITE_WORKERS = 6  # suites judged at once on small tables (bench/results/judge_profile/)
# ... and on big ones: one suite's job left a core idle a sixth of the time (1.72 of 2 busy over the 12 suites'
# SQL on 3,000 swarm seeds' tables); two at once kept 1.95 busy for the same CPU, the warm pass 27.9-28.6 s
# instead of 30.4-31.8, alternating (bench/results/probes/README.md, 34th session). Local mode runs two tasks at
# a time either way, so the jobs share the same task memory.
BIG_SUITE_WORKERS = 2
BIG_PASS_BROADCAST_BYTES = "10MB"  # a big pass broadcasts a join side this small once its size is known (Spark's default)
# Where a run's artifacts come from; a suite's ``applies_to`` (suite YAML) maps each backend it applies to onto
# ``all`` or the list of its rules that apply there; a suite without the key applies to the emulation only.
BACKENDS = SCENARIO_BACKENDS  # regionchaos.scenario.BACKENDS: a scenario's `backend`
DEFAULT_BACKEND = "emulation"
ALL_RULES = "all"


def expectations_dir() -> Path:
    """``$REGIONCHAOS_EXPECTATIONS``, else ``expectations/`` next to the package (the repo root)."""
    env = os.environ.get(EXPECTATIONS_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "expectations"


# -- suites as files ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    name: str
    sql: str
    description: str


@dataclass(frozen=True)
class Suite:
    name: str
    invariant: int
    title: str
    claim: str
    mutants: tuple[str, ...]
    findings: tuple[str, ...]
    rules: tuple[Rule, ...]
    evaluable: Rule
    applies_to: tuple[tuple[str, tuple[str, ...] | None], ...] = ((DEFAULT_BACKEND, None),)  # None: every rule

    @property
    def rule_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in (self.evaluable, *self.rules))

    def rules_for(self, backend: str) -> tuple[Rule, ...] | None:
        """The rules that judge a run of ``backend`` (None: the suite does not apply to it)."""
        mapping = dict(self.applies_to)
        if backend not in mapping:
            return None
        names = mapping[backend]
        return self.rules if names is None else tuple(r for r in self.rules if r.name in names)

    def rule_parts(self) -> dict[str, str]:
        """Per rule (and the evaluability probe), its query with the common columns, tagged with ``rule``."""
        cols = ", ".join(
            ["run_id", "CAST(checkpoint_id AS BIGINT) AS checkpoint_id", "CAST(region AS INT) AS region",
             "CAST(subtask AS INT) AS subtask", "CAST(operator AS STRING) AS operator",
             "CAST(split AS INT) AS split", "CAST(detail AS STRING) AS detail"])
        return {rule.name: f"SELECT '{rule.name}' AS rule, {cols} FROM (\n{_strip_comments(rule.sql)}\n) "
                           f"{rule.name.strip('_')}_rows" for rule in (self.evaluable, *self.rules)}

    def combined_sql(self) -> str:
        """Every rule (and the evaluability probe) in one query, tagged with ``rule``."""
        return "\nUNION ALL\n".join(self.rule_parts().values())


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--")).strip().rstrip(";")


def _description(sql: str) -> str:
    lines = []
    for line in sql.splitlines():
        if not line.lstrip().startswith("--"):
            break
        lines.append(line.lstrip()[2:].strip())
    return " ".join(lines)


def _rule(directory: Path, suite: str, name: str) -> Rule:
    path = directory / "sql" / suite / f"{name}.sql"
    sql = path.read_text()
    return Rule(name, sql, _description(sql))


class SuiteError(Exception):
    """The suites on disk do not cover the registry (`EXPECTED_INVARIANTS`): a suite missing, a
    suite without rules, a rule without its SQL. Validation cannot give a verdict: unknown."""


def _applies_to(doc: object, rule_names: list, where: str) -> tuple[tuple[str, tuple[str, ...] | None], ...]:
    """A suite's ``applies_to`` (backend -> ``all`` or a list of its rules), checked; absent: the emulation only.
    SuiteError names an unknown backend, an unknown rule, an empty list, or an emulation not judged in full."""
    if doc is None:
        return ((DEFAULT_BACKEND, None),)
    if not isinstance(doc, dict) or not doc:
        raise SuiteError(f"{where}: applies_to must map backends {list(BACKENDS)} to '{ALL_RULES}' or rule lists")
    out = []
    for backend, names in doc.items():
        if backend not in BACKENDS:
            raise SuiteError(f"{where}: applies_to names unknown backend {backend!r} (known: {list(BACKENDS)})")
        if names == ALL_RULES:
            out.append((backend, None))
            continue
        if not isinstance(names, list) or not names or set(map(str, names)) - set(map(str, rule_names)):
            raise SuiteError(f"{where}: applies_to.{backend} must be '{ALL_RULES}' or a non-empty list of its rules")
        out.append((backend, tuple(map(str, names))))
    if dict(out).get(DEFAULT_BACKEND, ()) is not None:  # the emulation's verdicts count every rule
        raise SuiteError(f"{where}: applies_to.{DEFAULT_BACKEND} must be '{ALL_RULES}'")
    return tuple(out)


def load_suites(directory: Path | None = None) -> list[Suite]:
    """The suites in file order (``suites/01_...yaml`` .. ``12_...``), checked against the registry:
    exactly one suite per invariant of `EXPECTED_INVARIANTS`, numbered as there, each with at least
    one rule, every rule (and ``_evaluable``) with its SQL file. Anything else raises SuiteError
    naming every problem: a deleted suite or rule file must never shrink what "valid" means."""
    directory = directory or expectations_dir()
    suites, problems = [], []
    for path in sorted((directory / "suites").glob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text())
            name = str(doc["name"])
            broken = doc.get("broken_by") or {}
            rule_names = doc.get("rules") or []
            if not isinstance(rule_names, list) or not rule_names:
                problems.append(f"{path.name}: suite {name} has no rules")
                continue
            if len(set(rule_names)) != len(rule_names):
                problems.append(f"{path.name}: suite {name} names a rule twice")
                continue
            suites.append(Suite(
                name=name, invariant=int(doc["invariant"]), title=doc["title"], claim=" ".join(doc["claim"].split()),
                mutants=tuple(broken.get("mutants") or ()), findings=tuple(broken.get("findings") or ()),
                rules=tuple(_rule(directory, name, str(r)) for r in rule_names),
                evaluable=_rule(directory, name, EVALUABLE),
                applies_to=_applies_to(doc.get("applies_to"), rule_names, f"{path.name}: suite {name}"),
            ))
        except FileNotFoundError as exc:
            problems.append(f"{path.name}: a rule's SQL is missing: {exc.filename}")
        except SuiteError as exc:
            problems.append(str(exc))
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(f"{path.name}: unreadable ({type(exc).__name__}: {exc})")
    by_name = {s.name: s for s in suites}
    for number, invariant in enumerate(EXPECTED_INVARIANTS, start=1):
        suite = by_name.get(invariant)
        if suite is None:
            if not any(p.startswith(f"{number:02d}_") or f"suite {invariant} " in p for p in problems):
                problems.append(f"no suite for invariant {number} ({invariant})")
        elif suite.invariant != number:
            problems.append(f"suite {invariant} says invariant {suite.invariant}, the registry {number}")
    for suite in suites:
        if suite.name not in EXPECTED_INVARIANTS:
            problems.append(f"suite {suite.name} is not an invariant of the registry")
    if len(by_name) != len(suites):
        problems.append("two suite files have the same name")
    if problems:
        raise SuiteError(f"the suites in {directory} do not cover every invariant and rule: " + "; ".join(problems))
    return sorted(suites, key=lambda s: s.invariant)


def load_custom(directory: Path | None = None):
    """``expectations/custom.py`` as a module (loaded once: GX registers its classes on import)."""
    if CUSTOM_MODULE in sys.modules:
        return sys.modules[CUSTOM_MODULE]
    path = (directory or expectations_dir()) / "custom.py"
    spec = importlib.util.spec_from_file_location(CUSTOM_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[CUSTOM_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[CUSTOM_MODULE]
        raise
    return module


# -- tables as views -------------------------------------------------------------------------


def register_views(tables: dict) -> None:
    for name, df in tables.items():
        df.createOrReplaceTempView(f"rc_{name}")


@contextmanager
def tuned_session(spark, total_rows: int):
    """Spark SQL settings for many joins of small tables, restored afterwards. Below
    `SMALL_TABLES_ROWS` rows in all, Spark's cost per job and stage dominates: no adaptive
    re-planning (each adaptive stage is a job of its own), no broadcasts (a job each), one
    shuffle partition (see also `prepare_tables`, which puts each table in one partition), and
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
    chain mechanisms: bench/results/probes/README.md, 34th session).

    At or above `SMALL_TABLES_ROWS`, a table is broadcast only when the adaptive planner has seen its real size
    (``spark.sql.adaptive.autoBroadcastJoinThreshold``), never on the planner's estimate of a Parquet file: the
    swarm's tables compress some hundred times (``rc_entries`` of 1,000 smoke seeds: under 0.25 MB of Parquet for
    about 0.4 M rows), so ``final_checkpoint.finished_on_fresh_entry``'s ``LEFT JOIN rc_entries`` was planned as a
    broadcast of ``rc_entries``, and 10,000 seeds ran out of a 1 GB heap building a broadcast: that suite unknown
    for every seed (bench/results/probes/README.md, 28th session)."""
    conf = {"spark.sql.cteRecursionLevelLimit": "-1",
            "spark.sql.cteRecursionAnchorRowsLimitToConvertToLocalRelation": "0"}
    if total_rows < SMALL_TABLES_ROWS:
        conf.update({"spark.sql.adaptive.enabled": "false", "spark.sql.autoBroadcastJoinThreshold": "-1",
                     "spark.sql.shuffle.partitions": "1", "spark.sql.codegen.wholeStage": "false",
                     "spark.sql.codegen.factoryMode": "NO_CODEGEN", **sparkrules.pass_conf(spark, total_rows)})
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


# -- checks from rule results ------------------------------------------------------------------


def not_applicable_check(suite: Suite, backend: str) -> dict:
    """The check of a suite that does not apply to the run's backend: neither passed nor failed
    (``state`` `NOT_APPLICABLE`); `merge_verdict` leaves it out."""
    return {"name": suite.name, "suite": suite.name, "invariant": suite.invariant, "title": suite.title,
            "success": None, "state": NOT_APPLICABLE, "unexpected_count": None, "examples": [], "rules": {},
            "reason": f"not applicable to this distribution: a {backend} run is not judged by this suite "
                      "(its applies_to)"}


def applies(check: dict) -> bool:
    """False for a `not_applicable_check`."""
    return check.get("state") != NOT_APPLICABLE


def _check(suite: Suite, run_id: str, rule_results: dict[str, dict] | None, error: str | None,
           backend: str = DEFAULT_BACKEND) -> dict:
    """One run's check for one suite from GX's results: rule -> `rule_result`; only the rules
    of the suite that apply to ``backend`` count (none: `not_applicable_check`).

    A rule passes for the run only if GX's expectation has a result, did not raise, and names the
    run explicitly as one with no unexpected rows (``held_by``, or a ``by_run`` entry counting 0),
    consistent with the expectation's own ``success``. A rule with no result, no answer for the run,
    two answers for it, or a result at odds with GX's success is unknown; the suite is false if a
    rule fails, else unknown if one is unknown."""
    rules = suite.rules_for(backend)
    if rules is None:
        return not_applicable_check(suite, backend)
    check: dict[str, Any] = {"name": suite.name, "suite": suite.name, "invariant": suite.invariant,
                             "title": suite.title}
    if len(rules) < len(suite.rules):
        check["not_applicable_rules"] = [r.name for r in suite.rules if r not in rules]
    if error is not None:
        return {**check, "success": None, "unexpected_count": None, "examples": [], "rules": {},
                "error": error}
    rule_results = rule_results or {}
    counts, examples, unknown, explained = {}, [], [], {}
    for rule in (suite.evaluable, *rules):
        verdict, got = _rule_for_run(rule_results.get(rule.name), run_id)
        if verdict is None:
            unknown.append(f"{rule.name}: {got}")
            continue
        if rule is suite.evaluable:
            if verdict is False:
                reasons = "; ".join(sorted({row["detail"] for row in got["examples"]}))
                return {**check, "success": None, "unexpected_count": None, "examples": [], "rules": {},
                        "error": f"cannot be evaluated: {reasons}"}
            continue
        counts[rule.name] = got["count"]
        if got["count"]:  # per findings' mechanism: rows each explains (expectations/custom.py)
            explained[rule.name] = dict(got.get("explained") or {})
        examples += [{"rule": rule.name, **{k: v for k, v in row.items() if k != "run_id"}}
                     for row in got["examples"]]
    if not rules:  # only the evaluability probe: nothing was judged
        unknown.append("the suite has no rules")
    failed = [name for name, n in counts.items() if n]
    check.update(unexpected_count=sum(counts.values()), rules=counts, examples=examples[:EXAMPLES_IN_CHECK],
                 failed_rules=failed, explained=explained)
    if failed:
        check["success"] = False
        if unknown:
            check["unknown_rules"] = unknown
    elif unknown:
        check.update(success=None, error="no result: " + "; ".join(unknown))
    else:
        check["success"] = True
    return check


# the entry of a run the rule's result names in ``held_by``: one for every such run, so read-only
HELD = MappingProxyType({"count": 0, "examples": (), "explained": MappingProxyType({})})


def _rule_for_run(result: dict | None, run_id: str) -> tuple[bool | None, Any]:
    """(True passes / False fails / None unknown, the run's entry or why unknown). The run's entry is its
    ``by_run`` one (violating rows), else `HELD` if ``held`` (a set: `rule_result`) names it."""
    if result is None:
        return None, "no result from GX"
    by_run = result.get("by_run") or {}
    entry, held = by_run.get(run_id), run_id in result.get("held", ())
    if held and entry is not None:
        return None, "the result names the run both with and without violating rows"
    entry = HELD if held else entry
    if entry is None or not isinstance(entry.get("count"), int):
        return None, "no result for this run"
    success = result.get("success")
    if success not in (True, False):
        return None, "GX gave no success value"
    if success and entry["count"] > 0:
        return None, "GX reports success but the run has unexpected rows"
    if not success and all(v.get("count") == 0 for v in by_run.values()):
        return None, "GX reports failure but no run has unexpected rows"
    return entry["count"] == 0, entry


def gx_suite_name(suite: str, backend: str) -> str:
    """GX's name of ``suite`` judging ``backend``: the suite's own for the emulation, else SUITE.BACKEND."""
    return suite if backend == DEFAULT_BACKEND else f"{suite}.{backend}"


def rule_result(success, details: dict | None) -> dict:
    """A rule's result as `_check` reads it: {"success", "by_run", "held"}, from its expectation's ``success``
    and ``details`` (`custom.by_run_details`; ``held`` a set of ``held_by``, looked up once per run)."""
    details = details or {}
    return {"success": success, "by_run": details.get("by_run"), "held": frozenset(details.get("held_by") or ())}


def rule_results_from_gx(result) -> tuple[dict[str, dict], dict[str, str]]:
    """GX's checkpoint result -> (suite -> rule -> `rule_result`, suite -> error)."""
    rules: dict[str, dict] = {}
    errors: dict[str, str] = {}
    for vr in result.run_results.values():
        suite = vr.suite_name.split(".")[0]  # another backend's GX suite is SUITE.BACKEND (gx_suite_name)
        rules[suite] = {}
        for r in vr.results:
            raised = _raised(r.exception_info)
            if raised is not None:  # GX reports a failed metric as success false: it is unknown
                errors[suite] = raised[:2000]
                continue
            rules[suite][r.expectation_config.kwargs["rule"]] = rule_result(r.success, (r.result or {}).get("details"))
    return rules, errors


def merge_verdict(checks: list[dict], expected: tuple[str, ...] = EXPECTED_INVARIANTS) -> str:
    """The checks' `Verdict.merge` (false > unknown > true); no checks at all, or no check for an
    `expected` invariant (by the check's ``name``), is unknown: a missing suite never leaves a
    smaller "valid". A `not_applicable_check` counts neither way (only the suites that apply judge the
    run; none applying is unknown)."""
    verdicts = [Verdict.of_success(c.get("success")) for c in checks if applies(c)]
    if missing_invariants(checks, expected):
        verdicts.append(Verdict.UNKNOWN.value)
    return Verdict.merge(verdicts)


def missing_invariants(checks: list[dict], expected: tuple[str, ...] = EXPECTED_INVARIANTS) -> list[str]:
    """The expected invariants without a check (the reason `merge_verdict` says unknown)."""
    have = {c.get("name") for c in checks}
    return [name for name in expected if name not in have]


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
                from .spark import get_spark

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

        from .spark import get_spark

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
            views = sorted({view for rule in (suite.evaluable, *suite.rules) for view in _VIEW_RE.findall(rule.sql)})
            gx_suite = self.context.suites.add(gx.ExpectationSuite(name=name, meta={
                "invariant": suite.invariant, "title": suite.title, "claim": suite.claim, "backend": backend,
                "broken_by_mutants": list(suite.mutants), "broken_by_findings": list(suite.findings),
                "batch": "run", "views": views}, notes=_tables_note(views)))
            for rule in (suite.evaluable, *suite.rules):
                gx_suite.add_expectation(self.custom.ExpectRuleHolds(
                    suite=name, rule=rule.name, unexpected_rows_query=_strip_comments(rule.sql),
                    description=(f"Evaluable: {rule.description}" if rule.name == EVALUABLE else rule.description),
                    meta={"rule": rule.name, "invariant": suite.invariant,
                          "views": sorted(set(_VIEW_RE.findall(rule.sql)))}))
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


_VIEW_RE = re.compile(r"\b(rc_[a-z_]+)\b")


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
    from .spark import get_spark

    GXValidator.build_in_background()
    return get_spark(app_name)


def gx_run_name(run_ids: list[str]) -> str:
    """GX's run name for a pass over ``run_ids``: the run id, or "N runs" (a swarm's pass)."""
    return run_ids[0] if len(run_ids) == 1 else f"{len(run_ids)} runs"


def _raised(info) -> str | None:
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


def gx_checks(spark, tables: dict, run_ids: list[str], *, docs_dir: Path | None = None, total_rows: int = 0,
              run_name: str | None = None, backend: str = DEFAULT_BACKEND):
    """All suites through GX; per run the list of checks. Returns (run -> checks, timings, result).
    ``run_name``: GX's run name (default `gx_run_name`: the run id, or how many runs); ``backend``: where
    the runs' artifacts come from (a suite that does not apply to it: `not_applicable_check`)."""
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
    out = {run_id: [_check(s, run_id, rules.get(s.name), errors.get(s.name), backend) for s in validator.suites]
           for run_id in run_ids}
    return out, timings, result


def judge(spark, tables: dict, run_ids: list, *, total_rows: int, docs_dir: Path | None = None,
          crashed: dict[str, str] | None = None, backend: str = DEFAULT_BACKEND,
          run_name: str | None = None) -> tuple[dict, dict, Any]:
    """The one judge of every path (a deep run, many runs, the swarm, shrink): one GX pass over
    ``tables`` (every row carries its ``run_id``). Returns (run id -> ``{"checks", "verdict"}``,
    with ``error`` when an expected invariant has no check; GX's timings; GX's result, for Data
    Docs). ``crashed``: run id -> why it has no rows (its emulation raised): unknown, never judged.
    ``backend``: where the runs' artifacts come from (`BACKENDS`); only the suites that apply to it count.
    ``run_ids`` are what the tables' ``run_id`` column holds: the run ids, or the swarm's bigint keys
    (`regionchaos.swarm.run_keys`, with ``run_name``: GX's name of the pass, default `gx_run_name`)."""
    per_run, timings, result = (gx_checks(spark, tables, run_ids, docs_dir=docs_dir, total_rows=total_rows,
                                          backend=backend, run_name=run_name) if run_ids else ({}, {}, None))
    out = {run_id: judged(checks) for run_id, checks in per_run.items()}
    out.update({run_id: unknown_result(error) for run_id, error in (crashed or {}).items()})
    return out, timings, result


def judged(checks: list[dict]) -> dict:
    """One run's judged result from its checks: their merged verdict, and why it is unknown when an
    expected invariant has no check."""
    out = {"checks": checks, "verdict": merge_verdict(checks)}
    if missing_invariants(checks):
        out["error"] = f"no check for invariants {', '.join(missing_invariants(checks))}"
    return out


def plain_sql_checks(spark, tables: dict, run_ids: list[str] | None = None, *, suites: list[Suite] | None = None,
                     total_rows: int = 0) -> dict:
    """The same rule SQL as plain Spark SQL, no GX: run -> checks (for the cost benchmark).

    ``{batch}`` is the ``rc_run`` view; the same session tuning as the GX path."""
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
            except Exception as exc:
                found, error = {}, f"{type(exc).__name__}: {exc}"
            for run_id, checks in out.items():
                checks.append(_check(suite, run_id, found, error))
    return out


# -- stats --------------------------------------------------------------------------------------


def _retained_bytes(inventory) -> int:
    """Bytes of checkpoint objects (state files, ``_metadata``) left in storage at the end of the
    run, from the final listing (the inventory): what retaining checkpoints costs."""
    if not len(inventory):
        return 0
    return int(inventory.loc[inventory["area"] == "checkpoints", "size_bytes"].fillna(0).sum())


def run_stats(frames: dict) -> dict:
    """Numbers for summary.json and the report, from the tables (pandas)."""
    cp = frames["checkpoints"]
    completed = cp[cp["completed"] == True]  # noqa: E712  (object column)
    commits = frames["commits"]
    tx = frames["transactions"]
    sv = frames["state_values"]

    def _max(series) -> int:
        s = series.dropna()
        return int(s.max()) if len(s) else 0

    streak = best = 0
    for status in completed.sort_values("checkpoint_id")["status"]:
        streak = streak + 1 if status == "REGIONAL" else 0
        best = max(best, streak)
    records_in = 0
    if len(tx):
        records_in = int(tx.groupby("split")["end"].max().sum())
    counter_readable = sv[(sv["operator"] == "counter") & (sv["found"] == True)]  # noqa: E712
    ev = frames["events"]
    kinds = ev["kind"].value_counts().to_dict() if len(ev) else {}
    restores = ev[ev["kind"] == Kind.GLOBAL_RESTORE] if len(ev) else ev
    history_counts = {  # the emulation's numbers as its history tells them (summary.json of the validate job)
        "triggered": int(kinds.get(Kind.CHECKPOINT_TRIGGERED, 0)),
        "global": int((cp["status"] == "GLOBAL").sum()), "regional": int((cp["status"] == "REGIONAL").sum()),
        "aborted": int((cp["status"] == "ABORTED").sum()),
        "region_failovers": int(kinds.get(Kind.REGION_FAILOVER, 0)),
        "jm_failovers": int(kinds.get(Kind.JOBMANAGER_FAILOVER, 0)),
        "rescales": int((restores["cause"] == "rescale").sum()) if len(restores) else 0,
        "global_restores": int(len(restores)),
        "finished": bool(kinds.get(Kind.JOB_FINISHED, 0)),
    }
    return {
        "history_counts": history_counts,
        "max_ref_chain_depth": _max(completed["ref_depth"]),
        "max_staleness": _max(completed["staleness"]),
        "max_consecutive_regional": best,
        "checkpoints_completed": int(len(completed)),
        "checkpoints_voided": int((cp["status"] == "VOIDED").sum()),
        "records_in_validated": records_in,
        "records_committed_validated": int((commits["end"] - commits["start"]).sum()) if len(commits) else 0,
        "commits": int(len(commits)),
        "checkpoints_with_readable_state": int(counter_readable["checkpoint_id"].nunique()),
        "retained_bytes_end": _retained_bytes(frames["inventory"]),
        "table_rows": {name: int(len(f)) for name, f in frames.items()},
    }


# -- one run --------------------------------------------------------------------------------------


def validate_run(spark, store, run_id: str, *, scenario=None, mutant: str | None = None, upload: bool = True,
                 docs: bool = True) -> dict:
    """Load a run's tables, run every suite with GX, write the results and Data Docs under the run."""
    walls: dict[str, float] = {}
    started = time.perf_counter()
    art = tables_mod.read_run(store, run_id)
    if not art.scenario_doc and scenario is not None:
        art.scenario_doc = {"run_id": run_id, "scenario": scenario.to_dict(), "seed": scenario.seed, "mutant": mutant}
    walls["read"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    docs_dir = Path(tempfile.mkdtemp(prefix="regionchaos-datadocs-")) if docs else None
    try:
        with tables_mod.spill_directory(spark) as spill_dir:
            tables, frames, rows = {}, {}, {}

            def load(name: str, table_rows: list[tuple]) -> None:
                rows[name] = len(table_rows)
                if name in UNUSED_AFTER_LOAD:  # straight to Spark: neither the stats nor the report read them
                    tables[name] = tables_mod.rows_to_spark(spark, name, table_rows, spill_dir=spill_dir)
                    frames[name] = tables_mod.frame_of(name, [])
                else:
                    frames[name] = tables_mod.frame_of(name, table_rows)
                    tables[name] = tables_mod.to_spark(spark, name, frames[name], spill_dir=spill_dir)

            # the biggest tables go to Spark while the rest is built (build_rows's done), the others after it
            all_rows = tables_mod.build_rows(art, done=load)
            requests = art.requests
            del art  # the parsed history and metadata (the largest objects of a run): the tables hold what is judged
            order = list(all_rows)
            for name in [n for n in order if n not in tables]:
                load(name, all_rows.pop(name))  # each table's tuples go once it is loaded
            del all_rows
            tables, frames, rows = ({n: d[n] for n in order} for d in (tables, frames, rows))  # the tables' order
            if sum(rows.values()) >= SMALL_TABLES_ROWS:  # a big run: hand back what building its tables freed,
                for frame in frames.values():  # (its frames' text first, or it keeps most of that resident)
                    tables_mod.compact_strings(frame)
                release_memory()  # before Spark's JVM grows to judge them (regionchaos.gcpause)
            tables_mod.remember_frames(store, frames)
            walls["tables"] = round(time.perf_counter() - started, 3)
            per_run, timings, result = judge(spark, tables, [run_id], docs_dir=docs_dir, total_rows=sum(rows.values()))
            walls.update(timings)
            stats = run_stats(frames)
            stats["table_rows"] = rows
            stats["validation_s3_requests"] = requests
            out = {**per_run[run_id], "stats": stats, "wall_seconds": walls}
            if upload:
                started = time.perf_counter()
                _upload(store, out, result, docs_dir)
                walls["upload"] = round(time.perf_counter() - started, 3)
    finally:
        if docs_dir is not None:
            shutil.rmtree(docs_dir, ignore_errors=True)
    return out


def load_many(spark, stores: list, *, spill_dir: str | None = None) -> tuple[dict, dict, dict]:
    """Tables of several runs at once (one DataFrame per table, every row with its run_id).

    Returns (tables, frames, artifacts by run id). Big tables go through Parquet files in
    ``spill_dir`` when given (see `regionchaos.tables.to_spark`)."""
    import pandas as pd

    arts = {store.run_prefix.rstrip("/").rsplit("/", 1)[-1]: None for store in stores}
    frames_by_table: dict[str, list] = {name: [] for name in tables_mod.TABLES}
    for store in stores:
        run_id = store.run_prefix.rstrip("/").rsplit("/", 1)[-1]
        art = tables_mod.read_run(store, run_id)
        arts[run_id] = art
        for name, frame in tables_mod.build_frames(art).items():
            frames_by_table[name].append(frame)
    with warnings.catch_warnings():  # all-null columns of some runs' frames: the schema fixes the types anyway
        warnings.simplefilter("ignore", FutureWarning)
        frames = {name: pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
                  for name, parts in frames_by_table.items()}
    tables = {name: tables_mod.to_spark(spark, name, frame, spill_dir=spill_dir) for name, frame in frames.items()}
    return tables, frames, arts


def validate_runs(spark, stores: list, *, plain_sql: bool = False) -> dict[str, dict]:
    """Judge many runs with one pass of the suites (GX, or plain Spark SQL): run id ->
    {"checks", "verdict"}. Nothing is written (swarm, tests, benchmarks)."""
    with tables_mod.spill_directory(spark) as spill_dir:
        tables, frames, arts = load_many(spark, stores, spill_dir=spill_dir)
        run_ids = list(arts)
        if plain_sql:  # the cost benchmark's reference, not a verdict anyone reads
            per_run = plain_sql_checks(spark, tables, run_ids, total_rows=table_rows(frames))
            return {run_id: judged(checks) for run_id, checks in per_run.items()}
        return judge(spark, tables, run_ids, total_rows=table_rows(frames))[0]


def _upload(store, out: dict, result, docs_dir: Path | None) -> None:
    items = [("validation/results.json", json.dumps(out, indent=1, sort_keys=True, default=str).encode())]
    if result is not None:
        for vr in result.run_results.values():
            items.append((f"validation/{vr.suite_name}.json",
                          json.dumps(vr.to_json_dict(), indent=1, sort_keys=True, default=str).encode()))
    if docs_dir is not None and docs_dir.exists():
        for path in sorted(docs_dir.rglob("*")):
            if path.is_file():
                items.append((f"datadocs/{path.relative_to(docs_dir).as_posix()}", path.read_bytes()))
    store.put_many(items)
