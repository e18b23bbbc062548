"""The swarm's fast path: thousands of seeds in one Spark job, judged by one GX pass.

In:  a base scenario (with ``faults.swarm=true``, so each seed also draws its own fault mix),
     ``--set`` overrides for every seed, a range of seeds, an optional mutant, where storage is
     (`StorageConfig`; None = the embedded S3 server for the duration) and a SparkSession.
Out: `fast_swarm(...) -> dict`: per seed its record (run id, drawn fault mix, protocol stats,
     replay line) and its judgement's fields (verdict, failed and unknown invariants, standing,
     the findings that showed), the failing seeds, the seeds that show only a recorded finding,
     the swarm's ``outcome`` (`regionchaos.judge.policy.swarm_outcome`) and wall times by phase.
     Written under the swarm's own prefix ``swarms/SWARM_ID/`` on the store:
     ``tables/<table>/part-NNNNN.parquet`` (every table the suites read, one file per Spark
     partition, every row with its ``run_id``), ``summary.json`` and ``report/index.html``
     (`regionchaos.swarm_report`), each written once.

How (the seeds are the Spark tasks): the seed range is cut into partitions; a task runs, per
seed, the control plane and the data plane in memory (`regionchaos.storage.memory`: the
same emulator, dataplane and `regionchaos.tables.read_run` / `build_rows` code a deep run
executes, on a dict instead of S3, so the rows are the deep run's rows), gathers the rows
of all its seeds, and PUTs one Parquet file per table: no per-seed objects, no per-checkpoint
request. The driver then reads the tables into Spark, each run by its key
(`regionchaos.judge.intake.read_tables`), and judges every seed in one pass
(`regionchaos.judge.runs.judge_keyed`); each seed's `Judgement` comes from GX's per-run results.
A seed whose emulation raised has no rows: it is ``unknown`` with its error, never valid.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import runner
from . import tables as tables_mod
from .interleavings import INTERLEAVINGS
from .judge import Judgement, run_outcome, swarm_outcome
from .judge.engine import judging_session
from .judge.intake import read_tables, run_keys
from .judge.judgement import FINDING, FINDING_GONE, VIOLATION
from .judge.runs import judge_keyed, record_key
from .nemesis import Nemesis
from .scenario import Scenario, catalogue, check_mutant, from_dict, load, require_emulation
from .storage.faults import FaultyObjectStore
from .storage.memory import MemoryClient, MemoryStore
from .storage.s3 import ObjectStore, StorageConfig, cached_client
from .swarm_report import build_swarm_report

SWARM_OVERRIDES = {"faults.swarm": True}
SEEDS_PER_PARTITION = 100  # default partition size: progress every ~100 seeds, few files per table
SWARMS_PREFIX = "swarms"


@dataclass(frozen=True)
class SwarmContext:
    """What a Spark task needs to emulate its seeds (small, picklable).

    ``fault_plans``: seed -> storage faults planned on that seed's in-memory store
    (`regionchaos.storage.FaultPlan`; e.g. a crash, to see a crashed seed judged unknown)."""
    scenario_ref: str
    scenario_data: dict
    overrides: dict
    mutant: str | None
    config: StorageConfig
    swarm_prefix: str
    fault_plans: dict = field(default_factory=dict)


def swarm_id(scenario_ref: str, first_seed: int, seeds: int, mutant: str | None, overrides: dict | None = None) -> str:
    """Keyed by what the swarm is, never by the clock: a re-run overwrites the same prefix."""
    name = os.path.splitext(os.path.basename(scenario_ref))[0]
    key = [scenario_ref, first_seed, seeds, mutant] + ([overrides] if overrides != SWARM_OVERRIDES else [])
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{name}-{mutant or 'correct'}-s{first_seed}-n{seeds}-{digest}"


def replay_deep_line(sid: str, seed: int) -> str:
    """The command that re-runs one swarm seed as a deep run and compares (`regionchaos.replay`)."""
    return f"regionchaos replay {sid} --seed {seed}"


def seed_ranges(first_seed: int, seeds: int, partitions: int) -> list[range]:
    """``seeds`` consecutive seeds from ``first_seed`` in ``partitions`` near-equal ranges."""
    partitions = max(1, min(partitions, seeds))
    step, extra = divmod(seeds, partitions)
    out, start = [], first_seed
    for i in range(partitions):
        size = step + (1 if i < extra else 0)
        out.append(range(start, start + size))
        start += size
    return out


# -- Spark task ---------------------------------------------------------------------------------


def emulate_seed(ctx: SwarmContext, seed: int) -> tuple[dict, dict[str, list[tuple]] | None]:
    """One seed in memory: (its record, its table rows), rows None if it raised.

    The record holds seed, run_id, replay, expect, drawn (fault mix), emulate_seconds, and
    ``error`` for a crashed seed."""
    started = time.perf_counter()
    record: dict[str, Any] = {"seed": seed, "run_id": None,
                              "replay": runner.replay_line(ctx.scenario_ref, seed, ctx.overrides, ctx.mutant)}
    try:
        scenario = from_dict(ctx.scenario_data, {**ctx.overrides, "seed": seed})
        run_id = runner.default_run_id(scenario, ctx.mutant)
        record.update(run_id=run_id, expect=scenario.expect.verdict, drawn=Nemesis(scenario).drawn_parameters())
        plan = ctx.fault_plans.get(seed)
        if plan is None:
            store = MemoryStore.for_run(ctx.config, run_id)
        else:
            store = FaultyObjectStore(ctx.config, ctx.config.run_prefix(run_id), plan, client=MemoryClient())
        result, rows = runner.emulate_in_memory(scenario, ctx.mutant, store=store, replay=record["replay"])
        record["stats"] = runner.protocol_stats(result.stats)
    except Exception as exc:  # noqa: BLE001 - a crashed seed is unknown, and the swarm goes on
        record["error"] = f"emulate failed: {type(exc).__name__}: {exc}"
        rows = None
    record["emulate_seconds"] = round(time.perf_counter() - started, 4)
    return record, rows


def seed_tables(rows: dict[str, list[tuple]]) -> dict:
    """A seed's rows as Arrow tables of `SCHEMAS`; a value of the wrong type raises ValueError
    naming the table (that seed is unknown; the other seeds of its task go on)."""
    out = {}
    for name, table_rows in rows.items():
        try:
            out[name] = tables_mod.arrow_table(name, table_rows)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"the rows of table {name} do not fit its schema: {type(exc).__name__}: {exc}") from exc
    return out


def emulate_seed_tables(ctx: SwarmContext, seed: int) -> tuple[dict, dict | None, dict | None]:
    """`emulate_seed`, then its rows as Arrow tables (`seed_tables`): (record, rows, tables). A
    seed whose rows do not fit the schema gets ``error`` in its record and no rows or tables."""
    record, rows = emulate_seed(ctx, seed)
    if rows is None:
        return record, None, None
    try:
        return record, rows, seed_tables(rows)
    except ValueError as exc:
        record["error"] = f"emulate failed: {exc}"
        return record, None, None


def emulate_partition(ctx: SwarmContext, done, crashed, index: int, seeds: Iterator[int]) -> Iterator[dict]:
    """Spark task body: emulate a range of seeds, PUT one Parquet file per table; yields one
    dict (the seeds' records, the parts written, seconds). ``done`` / ``crashed`` are Spark
    accumulators the driver's progress bar reads. A seed that raises, or whose rows do not fit
    the tables' schema, is recorded with ``error`` and has no rows."""
    tables: dict[str, list] = {name: [] for name in tables_mod.TABLES}
    records = []
    started = time.perf_counter()
    n_rows = 0
    for seed in seeds:
        record, seed_rows, converted = emulate_seed_tables(ctx, seed)
        records.append(record)
        if seed_rows is None:
            crashed.add(1)
        else:
            for name, table in converted.items():
                tables[name].append(table)
            n_rows += sum(len(r) for r in seed_rows.values())
        done.add(1)
    emulated = time.perf_counter()
    parts = write_parts(ctx, index, tables)
    yield {"index": index, "records": records, "parts": parts, "rows": n_rows,
           "emulate_seconds": round(emulated - started, 3),
           "write_seconds": round(time.perf_counter() - emulated, 3)}


def write_parts(ctx: SwarmContext, index: int, tables: dict[str, list], client: Any = None) -> list[str]:
    """One Parquet file per table (`SCHEMAS`, empty ones too; ``tables``: name -> the seeds'
    Arrow tables) under the swarm's prefix; the keys."""


    items = []
    for name in tables_mod.TABLES:
        parts = tables.get(name) or [tables_mod.arrow_table(name, [])]
        buffer = io.BytesIO()
        pq.write_table(pa.concat_tables(parts), buffer, compression="snappy")
        items.append((f"tables/{name}/part-{index:05d}.parquet", buffer.getvalue()))
    store = ObjectStore(ctx.config, ctx.swarm_prefix, client=client or cached_client(ctx.config))
    store.put_many(items)
    return [key for key, _ in items]


# -- driver -------------------------------------------------------------------------------------


def run_job(spark, ctx: SwarmContext, ranges: list[range], *, on_progress=None) -> list[dict]:
    """The emulation job (one task per seed range), see `run_partitions`."""
    description = f"regionchaos swarm: {sum(len(r) for r in ranges)} seeds in {len(ranges)} tasks"
    parts = run_partitions(spark, ranges, partial(emulate_partition, ctx), description, on_progress=on_progress)
    return sorted(parts, key=lambda p: p["index"])


def run_partitions(spark, slices: list, body, description: str, *, on_progress=None) -> list:
    """One Spark task per slice (a range or list of items): ``body(done, crashed, index, items)``
    yields the task's results, which are collected in slice order. ``done`` / ``crashed`` are
    accumulators the body adds to; ``on_progress(done, crashed)`` is called about twice a
    second while the job runs, and once at the end. The swarm and the study share it."""
    sc = spark.sparkContext
    done, crashed = sc.accumulator(0), sc.accumulator(0)
    rdd = sc.parallelize(slices, len(slices)).flatMap(lambda items: items)  # partition i = slice i
    rdd = rdd.mapPartitionsWithIndex(partial(body, done, crashed))
    sc.setJobDescription(description)
    job: dict[str, Any] = {}

    def collect() -> None:
        try:
            job["parts"] = rdd.collect()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            job["error"] = exc

    worker = threading.Thread(target=collect, name="regionchaos-spark-job", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.5)
        if on_progress is not None:
            on_progress(done.value, crashed.value)
    if "error" in job:
        raise job["error"]
    if on_progress is not None:
        on_progress(done.value, crashed.value)
    return job["parts"]


def seed_result(record: dict, judged: Judgement) -> dict:
    """A seed's line in the swarm's result: its record (seed, run id, replay, drawn mix, stats, seconds) and
    its judgement's fields (verdict, failed and unknown invariants, failed rules and what explains them,
    the findings that showed, its standing), ``kind`` (its row of the outcome table, the swarm's mutant held
    to: `regionchaos.judge.policy`), why each unknown check has no result, and ``error`` for a seed that could
    not be judged."""
    out = {k: record.get(k) for k in ("seed", "run_id", "replay", "drawn", "stats", "emulate_seconds")}
    out.update({k: v for k, v in judged.fields().items() if k not in ("findings", "as_expected")})
    out["kind"] = run_outcome(judged).kind
    if judged.unknown:  # why each unknown check has no result (a rule's error, "no result", not evaluable)
        out["unknown_errors"] = {c["name"]: c.get("error") for c in judged.checks if c.get("success") is None
                                 and c["name"] in judged.unknown}
    return out


def fast_swarm(scenario_ref: str, seeds: int, *, first_seed: int = 1, mutant: str | None = None,
               storage: StorageConfig | None = None, spark=None, partitions: int | None = None, console=None,
               fault_plans: dict | None = None, overrides: dict | None = None, mix: bool = True,
               local_dir: str | None = None) -> dict:
    """Emulate and judge ``seeds`` seeds from ``first_seed`` (see the module docstring).

    ``overrides`` (``--set`` keys) apply to every seed; ``mix=False`` runs the scenario's own
    fault settings on every seed instead of drawing a fault mix per seed (the seeds matrix).
    ``local_dir``: also write the summary to ``LOCAL_DIR/swarms/SWARM_ID/summary.json`` (the
    embedded S3 server's objects go with the process; `regionchaos replay` reads either).

    Returns the swarm's result (also ``swarms/SWARM_ID/summary.json``): scenario, mutant,
    swarm_id, judged, failing (invalid seeds not explained by a recorded finding), known_findings,
    unknown (count), runs (per seed), rows, wall_seconds (total) and walls (by phase)."""
    mutant = check_mutant(mutant)
    overrides = {**(overrides or {}), **(SWARM_OVERRIDES if mix else {})}
    # a bad name or value fails here, before any work; so does a real-Flink scenario (nothing to emulate)
    require_emulation(load(scenario_ref), "swarm")  # before the overrides, which it would refuse
    base = load(scenario_ref, overrides=overrides or None)
    path = catalogue().get(scenario_ref) or scenario_ref
    with open(path) as f:
        data = yaml.safe_load(f)
    started = time.perf_counter()
    walls: dict[str, float] = {}
    with runner.storage_for(storage) as config:
        if spark is None:
            spark = judging_session()
        sid = swarm_id(scenario_ref, first_seed, seeds, mutant, overrides)
        store = ObjectStore(config, f"{SWARMS_PREFIX}/{sid}")
        store.check_ready()
        store.delete_many(store.list_keys(""))  # a re-run of the same swarm replaces it
        ctx = SwarmContext(scenario_ref, data, overrides, mutant, config, store.run_prefix,
                           dict(fault_plans or {}))
        partitions = partitions or max(2 * spark.sparkContext.defaultParallelism, -(-seeds // SEEDS_PER_PARTITION))
        with progress_bar(console, seeds) as on_progress:
            parts = run_job(spark, ctx, seed_ranges(first_seed, seeds, partitions), on_progress=on_progress)
        walls["emulate_job"] = round(time.perf_counter() - started, 3)
        records = [r for p in parts for r in p["records"]]
        total_rows = sum(p["rows"] for p in parts)
        judged = _load_and_judge(spark, store, records, total_rows, walls, scenario=base, mutant=mutant)
        runs = [seed_result(r, judged[record_key(r)]) for r in records]
        walls["in_tasks_emulate"] = round(sum(p["emulate_seconds"] for p in parts), 3)
        walls["in_tasks_write"] = round(sum(p["write_seconds"] for p in parts), 3)
        facts = {"scenario_ref": scenario_ref, "mutant": mutant, "sid": sid, "runs": runs, "store": store,
                 "overrides": overrides, "first_seed": first_seed, "seeds": seeds, "partitions": len(parts),
                 "rows": total_rows, "walls": walls}
        page, report_error = _report(_summarize(**facts, wall_seconds=time.perf_counter() - started))
        if page is not None:
            store.put("report/index.html", page)
        result = _summarize(**facts, wall_seconds=time.perf_counter() - started, report_error=report_error,
                            report=page is not None)
        body = json.dumps(result, indent=1, sort_keys=True, default=str).encode()
        store.put("summary.json", body)
        if local_dir:
            return {**result, **_mirror(local_dir, sid, body, page)}
    return result


def _mirror(local_dir: str, sid: str, body: bytes, page: bytes | None) -> dict[str, str]:
    """The swarm's summary and report under ``LOCAL_DIR/swarms/SWARM_ID/``: where they are (``local``,
    ``local_report``)."""
    target = os.path.join(local_dir, SWARMS_PREFIX, sid)
    os.makedirs(os.path.join(target, "report"), exist_ok=True)
    with open(os.path.join(target, "summary.json"), "wb") as fh:
        fh.write(body)
    out = {"local": os.path.join(target, "summary.json")}
    if page is not None:
        with open(os.path.join(target, "report", "index.html"), "wb") as fh:
            fh.write(page)
        out["local_report"] = os.path.join(target, "report", "index.html")
    return out


def _report(result: dict) -> tuple[bytes | None, str | None]:
    """The swarm's HTML report (`regionchaos.swarm_report`), or why it failed to render (that changes no
    verdict)."""
    try:
        return build_swarm_report(result).encode(), None
    except Exception as exc:  # noqa: BLE001 - the verdicts stand without their page
        return None, f"{type(exc).__name__}: {exc}"


def _load_and_judge(spark, store: ObjectStore, records: list[dict], total_rows: int, walls: dict, *,
                    scenario: Scenario, mutant: str | None) -> dict[str, Judgement]:
    """Read the swarm's tables into Spark and judge every seed (timings into ``walls``), each held to the
    swarm's scenario with its own seed."""
    started = time.perf_counter()
    keys = run_keys(records)
    with tables_mod.spill_directory(spark) as directory:
        tables = read_tables(spark, store, directory, keys, total_rows)
        walls["read_tables"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        judged = judge_keyed(spark, tables, records, total_rows, keys, mutant=mutant,
                             scenario_of=lambda record: scenario.model_copy(update={"seed": record["seed"]}))
        walls["validate"] = round(time.perf_counter() - started, 3)
    return judged


def _summarize(*, scenario_ref: str, mutant: str | None, sid: str, runs: list[dict], store: ObjectStore,
               overrides: dict, first_seed: int, seeds: int, partitions: int, rows: int, walls: dict,
               wall_seconds: float, report: bool = True, report_error: str | None = None) -> dict:
    """The swarm's summary, assembled here only: the seeds' records (``runs``), the failing seeds (with
    replay lines) apart from those showing only a recorded finding (FINDINGS.md), the counts, and the swarm's
    ``outcome`` (`regionchaos.judge.policy.swarm_outcome`: the worst of its seeds'; with a mutant, whether any
    seed caught it)."""
    failing, known = [], []
    for r in runs:
        row = {k: r[k] for k in ("seed", "run_id", "failed", "replay")}
        row["replay_deep"] = replay_deep_line(sid, r["seed"])
        if r["standing"] in (VIOLATION, FINDING_GONE):
            failing.append(row)
        elif r["standing"] == FINDING:
            known.append(row)
    counts = {v: sum(r["verdict"] == v for r in runs) for v in ("valid", "invalid", "unknown")}
    outcome = swarm_outcome(runs, mutant=mutant, seeds=seeds)
    return {"scenario": scenario_ref, "mutant": mutant, "overrides": overrides, "swarm_id": sid, "prefix": store.uri(),
            "judged": len(runs), "verdicts": counts, "failing": failing, "known_findings": known,
            "interleavings": interleaving_coverage(runs),
            "unknown": counts["unknown"], "runs": runs, "outcome": outcome.as_dict(), "first_seed": first_seed,
            "seeds": seeds, "partitions": partitions, "rows": rows, "wall_seconds": round(wall_seconds, 1),
            "walls": walls, **({"report": store.uri("report/index.html")} if report and not report_error else {}),
            **({"report_error": report_error} if report_error else {})}


def interleaving_coverage(runs: list[dict]) -> dict[str, int]:
    """Per interleaving kind (`regionchaos.interleavings`), the seeds in which it happened at least once
    (their emulation's ``stats.interleavings``): a kind no seed reached is a gap in the chaos."""
    return {kind: sum(1 for r in runs if ((r.get("stats") or {}).get("interleavings") or {}).get(kind))
            for kind in INTERLEAVINGS}


class progress_bar:
    """A live rich bar (items done, items per second, crashed items so far) while a Spark job
    runs; the callable it yields takes (done, crashed). Without a console: no output."""
    def __init__(self, console, total: int, *, label: str = "swarm", unit: str = "seeds"):
        self.console, self.total, self.label, self.unit = console, total, label, unit

    def __enter__(self):
        if self.console is None:
            return lambda done, crashed: None

        self.progress = Progress(TextColumn(f"[bold]{self.label}[/bold] emulating"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]} " + self.unit + "/s"),
                                 TextColumn("{task.fields[crashed]}"),
                                 TimeElapsedColumn(), console=self.console, transient=False)
        self.progress.start()
        self.started = time.perf_counter()
        task = self.progress.add_task(self.label, total=self.total, rate="-", crashed="0 crashed")

        def update(done: int, crashed: int) -> None:
            rate = done / max(1e-9, time.perf_counter() - self.started)
            self.progress.update(task, completed=done, rate=f"{rate:.1f}",
                                 crashed=f"[{'red' if crashed else 'green'}]{crashed} crashed (unknown)")

        return update

    def __exit__(self, *exc):
        if self.console is not None:
            self.progress.stop()
        return False
