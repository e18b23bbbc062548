"""The ways into the judge: each path's runs judged by one GX pass, a `Judgement` per run.

In:  a SparkSession and, per path: a deep run's store and Scenario (`judge_deep_run`: the runner, the
     cluster's validate job); several runs' stores (`judge_stores`: the seeds matrix); a swarm's keyed
     tables and its seeds' records (`judge_keyed`); runs given as rows (`judge_rows`: shrink's candidates).
Out: `Judgement`s (`regionchaos.judge.judgement`); a deep run's also carries its stats, wall seconds per
     phase and its frames (for the report), and has written ``validation/results.json``, GX's result per
     suite and Data Docs under the run's prefix (`regionchaos.judge.upload`). A swarm seed's record is
     `seed_result`. A run with no rows (its emulation raised) is judged unknown with its error.

Real Flink's runs come in through `regionchaos.flink.judging` (the suites that apply to that backend).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from .. import tables as tables_mod
from ..scenario import Scenario, ScenarioError, from_dict
from . import engine, intake
from .judgement import Judgement, crashed, judgement_of
from .stats import run_stats
from .upload import upload

ScenarioOf = Callable[[dict], "Scenario | None"]  # a seed's record -> the Scenario it ran


def results_doc(judged: Judgement) -> dict[str, Any]:
    """``validation/results.json``: the judgement's fields, its checks, stats and wall seconds."""
    return {**judged.fields(), "checks": judged.checks, "stats": judged.stats, "wall_seconds": judged.wall_seconds}


def judge_deep_run(spark, store, run_id: str, *, scenario: Scenario, mutant: str | None, docs: bool = True,
                   write: bool = True) -> Judgement:
    """Load a run's tables from its prefix, run every suite with GX, and (``write``) store the results and
    (``docs``) the Data Docs under the run."""
    walls: dict[str, float] = {}
    docs_dir = Path(tempfile.mkdtemp(prefix="regionchaos-datadocs-")) if docs else None
    doc = {"run_id": run_id, "scenario": scenario.to_dict(), "seed": scenario.seed, "mutant": mutant}
    try:
        with tables_mod.spill_directory(spark) as spill_dir:
            run = intake.deep_run(spark, store, run_id, spill_dir=spill_dir, scenario_doc=doc)
            walls.update(read=run.read_seconds, tables=run.tables_seconds)
            checks, timings, result = engine.judge(spark, run.tables, [run_id], docs_dir=docs_dir,
                                                   total_rows=run.total_rows)
            walls.update(timings)
            stats = {**run_stats(run.frames), "table_rows": run.rows, "validation_s3_requests": run.requests}
            judged = judgement_of(run_id, checks[run_id], scenario=scenario, mutant=mutant, stats=stats,
                                  wall_seconds=walls, frames=run.frames)
            if write:
                started = time.perf_counter()
                upload(store, results_doc(judged), result, docs_dir)
                judged = replace(judged, wall_seconds={**walls, "upload": round(time.perf_counter() - started, 3)})
    finally:
        if docs_dir is not None:
            shutil.rmtree(docs_dir, ignore_errors=True)
    return judged


def stored_scenario(doc: dict) -> tuple[Scenario | None, str | None]:
    """(the Scenario, the mutant) a run's ``scenario.json`` records; no Scenario when it does not read as one
    (then nothing is excused by a finding)."""
    try:
        return from_dict(doc["scenario"]), doc.get("mutant") or None
    except (ScenarioError, KeyError, TypeError, ValueError):
        return None, (doc.get("mutant") if isinstance(doc, dict) else None) or None


def judge_stores(spark, stores: list) -> dict[str, Judgement]:
    """Many stored runs judged by one pass of the suites (the seeds matrix, the tests' pool): run id ->
    judgement, each held to the scenario and mutant its ``scenario.json`` records. Nothing is written."""
    if not stores:
        return {}
    with tables_mod.spill_directory(spark) as spill_dir:
        tables, frames, docs = intake.many_runs(spark, stores, spill_dir=spill_dir)
        checks, _, _ = engine.judge(spark, tables, list(docs), total_rows=sum(len(f) for f in frames.values()))
    out = {}
    for run_id, doc in docs.items():
        scenario, mutant = stored_scenario(doc)
        out[run_id] = judgement_of(run_id, checks[run_id], scenario=scenario, mutant=mutant)
    return out


def record_key(record: dict) -> str:
    """A seed's key among the judged: its run id, or ``seed-N`` for a seed that crashed before it had one."""
    return record["run_id"] or f"seed-{record['seed']}"


def judge_keyed(spark, tables: dict, records: list[dict], total_rows: int, keys: dict[str, int], *,
                scenario_of: ScenarioOf, mutant: str | None) -> dict[str, Judgement]:
    """A swarm's pass: ``tables`` name each run by its key (``keys``, `intake.run_keys`); run id ->
    judgement. A seed whose emulation raised (``error`` in its record) has no rows: unknown, with its error,
    keyed by its run id (or ``seed-N``). A pass that raises leaves every seed unknown, never valid."""
    ids = [r["run_id"] for r in records if "error" not in r]
    try:
        by_key, _, _ = engine.judge(spark, tables, [keys[run_id] for run_id in ids], total_rows=total_rows,
                                    run_name=engine.gx_run_name(ids))
    except Exception as exc:  # noqa: BLE001 - nothing judged: every seed unknown
        error = f"validate failed: {type(exc).__name__}: {exc}"
        return {record_key(r): crashed(record_key(r), r.get("error", error), scenario=scenario_of(r), mutant=mutant)
                for r in records}
    out = {}
    for record in records:
        key = record_key(record)
        if "error" in record:
            out[key] = crashed(key, record["error"], scenario=scenario_of(record), mutant=mutant)
        else:
            out[key] = judgement_of(key, by_key[keys[key]], scenario=scenario_of(record), mutant=mutant)
    return out


def judge_rows(spark, rows: dict[str, list[tuple]], records: list[dict], *, scenario_of: ScenarioOf,
               mutant: str | None) -> dict[str, Judgement]:
    """Runs given as their rows (per table, tuples in `SCHEMAS` order, the run id first) judged in one pass:
    written keyed to a scratch directory, one file per table, then `judge_keyed`. Shrink's candidates and
    ``bench/mutation_score.py`` judge here."""
    keys = intake.run_keys(records)
    with tempfile.TemporaryDirectory(prefix="regionchaos-judge-") as directory:
        intake.write_keyed(directory, rows, keys)
        return judge_keyed(spark, intake.read_local_tables(spark, directory), records, sum(map(len, rows.values())),
                           keys, scenario_of=scenario_of, mutant=mutant)
