"""The swarm's fast path: thousands of seeds in one Spark job, judged by one GX pass.

In:  a base scenario (with ``faults.swarm=true``, so each seed also draws its own fault mix),
     a range of seeds, an optional mutant, where storage is (`StorageConfig`; None = the
     embedded S3 server for the duration) and a SparkSession.
Out: `fast_swarm(...) -> dict`: per seed its run id, verdict, failed and unknown invariants,
     drawn fault mix (`Nemesis.drawn_parameters`) and replay line, plus the failing seeds,
     the seeds that fail only a recorded finding's invariants, and wall times by phase.
     Written under the swarm's own prefix ``swarms/SWARM_ID/`` on the store:
     ``tables/<table>/part-NNNNN.parquet`` (every table the suites read, one file per Spark
     partition, every row with its ``run_id``), ``summary.json`` and ``report/index.html``
     (`regionchaos.swarm_report`).

How (the seeds are the Spark tasks): the seed range is cut into partitions; a task runs, per
seed, the control plane and the data plane in memory (`regionchaos.storage.memory`: the
same emulator, dataplane and `regionchaos.tables.read_run` / `build_rows` code a deep run
executes, on a dict instead of S3, so the rows are the deep run's rows), gathers the rows
of all its seeds, and PUTs one Parquet file per table: no per-seed objects, no per-checkpoint
request. The driver then reads the tables into Spark and judges every seed in one pass
(`validate.judge`, the one judge); each seed's verdict comes from GX's per-run results. A
seed whose emulation raised has no rows: it is ``unknown`` with its error, never valid.

Reading the tables back: on a local master the driver downloads the parts (one GET each), merges
each table's into one file per Spark core in a scratch directory and reads it with
``spark.read.parquet``. On a cluster the executors read
them (`read_remote_tables`: a GET and pyarrow per part, inside ``mapInArrow``), so nothing
passes through the driver and no ``s3a://`` (hadoop-aws) is needed on the cluster. Either way
the pass sees each run by a key (`run_keys`: a bigint in the ``run_id`` column, put there by
`keyed_table` as the parts are read), not by its run id: every rule joins, shuffles and windows by
run: on 3,000 seeds the suites' SQL took 36.4 s with keys against 41.6 s with the 25-character run
ids, and 33.3 s with each table in two files instead of thirty (bench/results/probes/README.md, 33rd
session). The stored parts keep the run ids; the verdicts are mapped back to them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Iterable, Iterator

from . import runner
from . import tables as tables_mod
from .findings import meets_expectation, outcome
from .run import unknown_result
from .scenario import from_dict, load
from .storage.s3 import ObjectStore, StorageConfig

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
    from .emulator import Emulation  # noqa: F401 - imported before timing: the first seed pays it
    from .nemesis import Nemesis
    from .storage.faults import FaultyObjectStore
    from .storage.memory import MemoryClient, MemoryStore

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
    import pyarrow as pa

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
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .dataplane import _cached_client

    items = []
    for name in tables_mod.TABLES:
        parts = tables.get(name) or [tables_mod.arrow_table(name, [])]
        buffer = io.BytesIO()
        pq.write_table(pa.concat_tables(parts), buffer, compression="snappy")
        items.append((f"tables/{name}/part-{index:05d}.parquet", buffer.getvalue()))
    store = ObjectStore(ctx.config, ctx.swarm_prefix, client=client or _cached_client(ctx.config))
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


def run_keys(records: list[dict]) -> dict[str, int]:
    """Run id -> the run's key in a pass: its place among the records that have rows (a crashed
    seed has none). The pass's tables carry the key in their ``run_id`` column (`keyed_table`)."""
    return {r["run_id"]: key for key, r in enumerate(r for r in records if "error" not in r)}


def keyed_table(table, keys: dict[str, int]):
    """An Arrow table of the swarm with its ``run_id`` strings replaced by the runs' keys (bigint,
    `run_keys`). A run id that is not in ``keys`` gets null, which no rule's join matches: a run
    outside the pass is not judged, as with its run id (the rules join every table to the run table)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = []
    for chunk in table.column("run_id").chunks:  # a part holds a few runs: look up each once, not each row
        encoded = chunk if pa.types.is_dictionary(chunk.type) else pc.dictionary_encode(chunk)
        found = pa.array([keys.get(run_id) for run_id in encoded.dictionary.to_pylist()], pa.int64())
        chunks.append(pc.take(found, encoded.indices))
    return table.set_column(table.schema.get_field_index("run_id"), pa.field("run_id", pa.int64()),
                            pa.chunked_array(chunks, pa.int64()))


def keyed_ddl(name: str) -> str:
    """Table ``name``'s Spark DDL (`SCHEMAS`) as a pass reads it: ``run_id`` a bigint key."""
    first, rest = tables_mod.SCHEMAS[name].split(",", 1)
    if first != "run_id string":  # every table's first column; a table without it could not be judged by run
        raise ValueError(f"table {name} does not start with run_id string: {first!r}")
    return f"run_id bigint,{rest}"


def read_tables(spark, store: ObjectStore, directory: str | None, keys: dict[str, int],
                total_rows: int | None = None) -> dict:
    """The swarm's tables as Spark DataFrames of `keyed_ddl`: each run's key (``keys``, `run_keys`) in
    place of its run id. Local master: the parts are downloaded, keyed and written to ``directory`` as
    one file per Spark core and table (`_merge_parts`), and read there; else (no directory) the
    executors read them, one task per table when the tables are small (``total_rows`` below the
    validation's small-table threshold), else one task per part."""
    if directory is None:
        from .validate import SMALL_TABLES_ROWS

        return read_remote_tables(spark, store, one_task=total_rows is not None and total_rows < SMALL_TABLES_ROWS,
                                  keys=keys)
    bodies = store.get_many(store.list_keys("tables/"))
    files = max(1, spark.sparkContext.defaultParallelism)
    groups = []
    for name in tables_mod.TABLES:
        parts = sorted(key for key in bodies if key.startswith(f"tables/{name}/"))
        groups += [(os.path.join(directory, "tables", name, f"part-{i:05d}.parquet"),
                    parts[i * len(parts) // files:(i + 1) * len(parts) // files]) for i in range(files)]
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # pyarrow lets go of the interpreter lock
        list(pool.map(lambda group: _merge_parts(group[0], [bodies[key] for key in group[1]], keys),
                      [g for g in groups if g[1]]))
    return read_local_tables(spark, directory)


def _merge_parts(path: str, bodies: list[bytes], keys: dict[str, int]) -> None:
    """Parquet parts of one table, keyed (`keyed_table`), as one file at ``path``. Fewer, bigger files
    make every scan cheaper: each of the suites' ~60 scans of a table opens every file (on 3,000 seeds the
    suites' SQL took 33.3 s over 2 files per table against 36.4 s over 30, bench/results/probes/README.md)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.path.dirname(path), exist_ok=True)
    tables = [keyed_table(pq.read_table(io.BytesIO(body), read_dictionary=["run_id"]), keys) for body in bodies]
    pq.write_table(pa.concat_tables(tables), path)


def read_remote_tables(spark, store: ObjectStore, one_task: bool = False, names: Iterable[str] | None = None,
                       keys: dict[str, int] | None = None) -> dict:
    """The tables read by the executors, one task per Parquet part (`_read_parts`), or per table
    with ``one_task`` (on small tables a task costs more than its rows: 200 smoke seeds read in
    41 s as 108 tasks on the test's standalone cluster), each materialised once in the executors'
    block stores (``localCheckpoint``: the suites scan a table many times, and must not GET its
    parts again for every scan). ``names``: only these tables (default: all); ``keys``: as
    `read_tables`."""
    from pyspark.sql.types import _parse_datatype_string

    listed = store.list_keys("tables/")
    out = {}
    for name in tables_mod.SCHEMAS:
        if names is not None and name not in names:
            continue
        schema = _parse_datatype_string(tables_mod.SCHEMAS[name] if keys is None else keyed_ddl(name))
        parts = [(key,) for key in listed if key.startswith(f"tables/{name}/")]
        if not parts:
            out[name] = spark.createDataFrame([], schema)
            continue
        listing = spark.createDataFrame(spark.sparkContext.parallelize(parts, 1 if one_task else len(parts)),
                                        "key string")
        frame = listing.mapInArrow(partial(_read_parts, store.config, store.run_prefix, name, keys), schema)
        out[name] = frame.localCheckpoint(eager=True)
    return out


def _read_parts(config: StorageConfig, prefix: str, name: str, keys: dict[str, int] | None, batches) -> Iterator:
    """Executor side of `read_remote_tables`: the Arrow batches of the parts named in ``batches``."""
    import pyarrow.parquet as pq

    from .dataplane import _cached_client

    store = ObjectStore(config, prefix, client=_cached_client(config))
    schema = tables_mod.arrow_schema(name)
    for batch in batches:
        for key in batch.column("key").to_pylist():
            table = pq.read_table(io.BytesIO(store.get(key))).cast(schema)
            yield from (table if keys is None else keyed_table(table, keys)).to_batches()


def read_local_tables(spark, directory: str) -> dict:
    """``DIRECTORY/tables/<table>/*.parquet``, keyed (`keyed_table`), as Spark DataFrames of `keyed_ddl`."""
    from pyspark.sql.types import _parse_datatype_string

    return {name: spark.read.schema(_parse_datatype_string(keyed_ddl(name))).parquet(os.path.join(directory, "tables", name))
            for name in tables_mod.SCHEMAS}


def judge(spark, tables: dict, records: list[dict], total_rows: int,
          keys: dict[str, int]) -> tuple[dict[str, dict], dict]:
    """`regionchaos.validate.judge` over every seed's rows, the tables naming each run by its key (``keys``,
    `run_keys`): run id -> {"checks", "verdict"}, and GX's timings. A crashed seed (``error``) has no rows:
    unknown, keyed by its run id (or ``seed-N``)."""
    from .validate import gx_run_name
    from .validate import judge as judge_runs

    crashed = {r["run_id"] or f"seed-{r['seed']}": r["error"] for r in records if "error" in r}
    ids = [r["run_id"] for r in records if "error" not in r]
    by_key, timings, _ = judge_runs(spark, tables, [keys[run_id] for run_id in ids], total_rows=total_rows,
                                    run_name=gx_run_name(ids))
    judged = {run_id: by_key[keys[run_id]] for run_id in ids}
    judged.update({run_id: unknown_result(error) for run_id, error in crashed.items()})
    return judged, timings


def judge_rows(spark, rows: dict[str, list[tuple]], records: list[dict]) -> dict[str, dict]:
    """Runs given as their rows (per table, tuples in `SCHEMAS` order, the run id first) judged in one pass:
    written keyed to a scratch directory, one file per table, then `judge`. Run id -> {"checks", "verdict"}.
    Shrink's candidates and `bench/mutation_score.py` judge here."""
    import pyarrow.parquet as pq

    keys = run_keys(records)
    with tempfile.TemporaryDirectory(prefix="regionchaos-judge-") as directory:
        for name in tables_mod.SCHEMAS:
            os.makedirs(os.path.join(directory, "tables", name))
            pq.write_table(keyed_table(tables_mod.arrow_table(name, rows.get(name, [])), keys),
                           os.path.join(directory, "tables", name, "part.parquet"))
        return judge(spark, read_local_tables(spark, directory), records, sum(map(len, rows.values())), keys)[0]


def seed_result(record: dict, judged: dict) -> dict:
    """A seed's line in the swarm's result: record + verdict, failed and unknown invariants and
    failed rules (`findings.outcome`)."""
    res = judged[record["run_id"] or f"seed-{record['seed']}"]
    shows = outcome(res["checks"])
    out = {k: record.get(k) for k in ("seed", "run_id", "replay", "drawn", "stats", "emulate_seconds")}
    out.update(verdict=res["verdict"], **shows)
    if shows["unknown"]:  # why each unknown check has no result (a rule's error, "no result", not evaluable)
        out["unknown_errors"] = {c["name"]: c.get("error") for c in res["checks"] if c.get("success") is None}
    if res.get("error"):
        out["error"] = res["error"]
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
    import yaml

    from .scenario import catalogue, check_mutant, require_emulation

    mutant = check_mutant(mutant)
    overrides = {**(overrides or {}), **(SWARM_OVERRIDES if mix else {})}
    # a bad name or value fails here, before any work; so does a real-Flink scenario (nothing to emulate)
    require_emulation(load(scenario_ref), "swarm")  # before the overrides, which it would refuse
    load(scenario_ref, overrides=overrides or None)
    path = catalogue().get(scenario_ref) or scenario_ref
    with open(path) as f:
        data = yaml.safe_load(f)
    started = time.perf_counter()
    walls: dict[str, float] = {}
    with runner.storage_for(storage) as config:
        if spark is None:
            from .validate import judging_session

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
        judged, gx_walls = _load_and_judge(spark, store, records, total_rows, walls)
        walls.update(gx_walls)
        runs = [seed_result(r, judged) for r in records]
        result = _summarize(scenario_ref, data, mutant, sid, runs, store, overrides)
        walls["in_tasks_emulate"] = round(sum(p["emulate_seconds"] for p in parts), 3)
        walls["in_tasks_write"] = round(sum(p["write_seconds"] for p in parts), 3)
        result.update(first_seed=first_seed, seeds=seeds, partitions=len(parts), rows=total_rows,
                      wall_seconds=round(time.perf_counter() - started, 1), walls=walls)
        page = _report(result)
        if page is not None:
            store.put("report/index.html", page)
            result["report"] = store.uri("report/index.html")
        body = json.dumps(result, indent=1, sort_keys=True, default=str).encode()
        store.put("summary.json", body)
        if local_dir:
            target = os.path.join(local_dir, SWARMS_PREFIX, sid)
            os.makedirs(os.path.join(target, "report"), exist_ok=True)
            with open(os.path.join(target, "summary.json"), "wb") as fh:
                fh.write(body)
            result["local"] = os.path.join(target, "summary.json")
            if page is not None:
                with open(os.path.join(target, "report", "index.html"), "wb") as fh:
                    fh.write(page)
                result["local_report"] = os.path.join(target, "report", "index.html")
    return result


def _report(result: dict) -> bytes | None:
    """The swarm's HTML report (`regionchaos.swarm_report`); a report that fails to render is
    recorded as ``report_error`` and changes no verdict."""
    from .swarm_report import build_swarm_report

    try:
        return build_swarm_report(result).encode()
    except Exception as exc:  # noqa: BLE001 - the verdicts stand without their page
        result["report_error"] = f"{type(exc).__name__}: {exc}"
        return None


def _load_and_judge(spark, store: ObjectStore, records: list[dict], total_rows: int,
                    walls: dict) -> tuple[dict, dict]:
    """Read the swarm's tables into Spark and judge every seed (timings into ``walls``)."""
    started = time.perf_counter()
    keys = run_keys(records)
    with tables_mod.spill_directory(spark) as directory:
        tables = read_tables(spark, store, directory, keys, total_rows)
        walls["read_tables"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        try:
            judged, timings = judge(spark, tables, records, total_rows, keys)
        except Exception as exc:  # noqa: BLE001 - nothing judged: every seed unknown, never valid
            error = f"validate failed: {type(exc).__name__}: {exc}"
            judged = {r["run_id"] or f"seed-{r['seed']}": unknown_result(r.get("error", error)) for r in records}
            timings = {}
        walls["validate"] = round(time.perf_counter() - started, 3)
    return judged, timings


def _summarize(scenario_ref: str, data: dict, mutant: str | None, sid: str, runs: list[dict],
               store: ObjectStore, overrides: dict) -> dict:
    """Failing seeds (with replay lines) apart from those failing only a recorded finding's
    invariants (FINDINGS.md; the correct protocol only), as `regionchaos.seedmatrix` does."""
    failing, known = [], []
    for r in runs:
        if r["verdict"] != "invalid":
            continue
        row = {k: r[k] for k in ("seed", "run_id", "failed", "replay")}
        row["replay_deep"] = replay_deep_line(sid, r["seed"])
        if mutant is None:
            scenario = from_dict(data, {**overrides, "seed": r["seed"]})
            if meets_expectation(scenario, r["verdict"], r["failed"], r["unknown"], failed_rules=r.get("failed_rules"),
                                 explained=r.get("explained"), must_show=False)[0]:
                known.append(row)
                continue
        failing.append(row)
    counts = {v: sum(r["verdict"] == v for r in runs) for v in ("valid", "invalid", "unknown")}
    return {"scenario": scenario_ref, "mutant": mutant, "overrides": overrides, "swarm_id": sid, "prefix": store.uri(),
            "judged": len(runs), "verdicts": counts, "failing": failing, "known_findings": known,
            "unknown": counts["unknown"], "runs": runs}


class progress_bar:
    """A live rich bar (items done, items per second, crashed items so far) while a Spark job
    runs; the callable it yields takes (done, crashed). Without a console: no output."""

    def __init__(self, console, total: int, *, label: str = "swarm", unit: str = "seeds"):
        self.console, self.total, self.label, self.unit = console, total, label, unit

    def __enter__(self):
        if self.console is None:
            return lambda done, crashed: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
