"""Intake: the tables a GX pass judges, as Spark DataFrames, from wherever the runs' artifacts are.

In:  a SparkSession and one of: a deep run's prefix on S3 (`deep_run`), several runs' prefixes (`many_runs`:
     the seeds matrix), a swarm's Parquet parts under its prefix or a scratch folder (`read_tables`,
     `read_remote_tables`, `read_local_tables`; rows written there by `write_keyed`), or a real-Flink
     run's artifacts (`flink_run`).
Out: the tables (name -> DataFrame, every row with its ``run_id``), and for a deep run its pandas frames
     (the stats and the report read them), rows per table and the S3 requests reading it took.

The swarm's tables name each run by a key (`run_keys`: a bigint in the ``run_id`` column, put there by
`keyed_table` as the parts are read), not by its run id: every rule joins, shuffles and windows by run, and
on 3,000 seeds the suites' SQL took 36.4 s with keys against 41.6 s with the 25-character run ids, and 33.3 s
with each table in two files instead of thirty (bench/results/probes/README.md). The stored parts keep the
run ids; the verdicts are mapped back to them (`regionchaos.judge.runs.judge_keyed`).

pyspark is imported inside the functions that need its types: a module that imports this one (the swarm's
Spark tasks) does not pay for it.
"""

from __future__ import annotations

import io
import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Iterable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import tables as tables_mod
from ..flink import tables as flink_tables
from ..gcpause import release_memory
from ..storage.s3 import ObjectStore, StorageConfig, cached_client
from .engine import SMALL_TABLES_ROWS

UNUSED_AFTER_LOAD = ("entries", "entry_splits", "truth", "task_responses")  # the big ones; Spark-only


# -- a deep run ------------------------------------------------------------------------------------


@dataclass
class RunTables:
    """A deep run's tables: Spark ``tables`` (what the suites read), pandas ``frames`` (what the stats and
    the report read; empty frames for the big tables that went straight to Spark), ``rows`` per table and
    the S3 ``requests`` reading the run took."""

    tables: dict
    frames: dict
    rows: dict[str, int]
    requests: dict
    read_seconds: float
    tables_seconds: float

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


def deep_run(spark, store, run_id: str, *, spill_dir: str | None, scenario_doc: dict | None = None) -> RunTables:
    """A run's tables from its prefix. ``scenario_doc``: what the run is, when its ``scenario.json`` does
    not say (a run recorded without one). The biggest tables go to Spark while the rest is built
    (`tables.build_rows`'s ``done``), the others after it; a big run hands back what building its tables
    freed before Spark's JVM grows to judge them (`regionchaos.gcpause`)."""
    started = time.perf_counter()
    art = tables_mod.read_run(store, run_id)
    if not art.scenario_doc and scenario_doc is not None:
        art.scenario_doc = scenario_doc
    read_seconds = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    tables, frames, rows = {}, {}, {}

    def load(name: str, table_rows: list[tuple]) -> None:
        rows[name] = len(table_rows)
        if name in UNUSED_AFTER_LOAD:  # straight to Spark: neither the stats nor the report read them
            tables[name] = tables_mod.rows_to_spark(spark, name, table_rows, spill_dir=spill_dir)
            frames[name] = tables_mod.frame_of(name, [])
        else:
            frames[name] = tables_mod.frame_of(name, table_rows)
            tables[name] = tables_mod.to_spark(spark, name, frames[name], spill_dir=spill_dir)

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
        release_memory()
    return RunTables(tables, frames, rows, requests, read_seconds, round(time.perf_counter() - started, 3))


def many_runs(spark, stores: list, *, spill_dir: str | None = None) -> tuple[dict, dict, dict[str, dict]]:
    """Tables of several runs at once (one DataFrame per table, every row with its run_id):
    (tables, frames, run id -> what its ``scenario.json`` records). Big tables go through Parquet
    files in ``spill_dir`` when given (see `regionchaos.tables.to_spark`)."""
    docs = {}
    frames_by_table: dict[str, list] = {name: [] for name in tables_mod.TABLES}
    for store in stores:
        run_id = store.run_prefix.rstrip("/").rsplit("/", 1)[-1]
        art = tables_mod.read_run(store, run_id)
        docs[run_id] = art.scenario_doc
        for name, frame in tables_mod.build_frames(art).items():
            frames_by_table[name].append(frame)
    with warnings.catch_warnings():  # all-null columns of some runs' frames: the schema fixes the types anyway
        warnings.simplefilter("ignore", FutureWarning)
        frames = {name: pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
                  for name, parts in frames_by_table.items()}
    tables = {name: tables_mod.to_spark(spark, name, frame, spill_dir=spill_dir) for name, frame in frames.items()}
    return tables, frames, docs


def flink_run(spark, store, run_id: str) -> tuple[dict, int]:
    """A real-Flink run's tables (`regionchaos.flink.tables.build_rows`) as Spark DataFrames with their declared
    schemas; the number of rows in all."""
    rows = flink_tables.build_rows(store, run_id)
    return ({name: tables_mod.to_spark(spark, name, tables_mod.frame_of(name, table)) for name, table in rows.items()},
            sum(len(table) for table in rows.values()))


# -- a swarm's keyed tables --------------------------------------------------------------------------


def run_keys(records: list[dict]) -> dict[str, int]:
    """Run id -> the run's key in a pass: its place among the records that have rows (a crashed
    seed has none). The pass's tables carry the key in their ``run_id`` column (`keyed_table`)."""
    return {r["run_id"]: key for key, r in enumerate(r for r in records if "error" not in r)}


def keyed_table(table, keys: dict[str, int]):
    """An Arrow table of the swarm with its ``run_id`` strings replaced by the runs' keys (bigint,
    `run_keys`). A run id that is not in ``keys`` gets null, which no rule's join matches: a run
    outside the pass is not judged, as with its run id (the rules join every table to the run table)."""
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
    pass's small-table threshold), else one task per part."""
    if directory is None:
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
    store = ObjectStore(config, prefix, client=cached_client(config))
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


def write_keyed(directory: str, rows: dict[str, list[tuple]], keys: dict[str, int]) -> None:
    """Runs given as their rows (per table, tuples in `SCHEMAS` order, the run id first) written keyed to
    ``DIRECTORY/tables/<table>/part.parquet``, one file per table (`read_local_tables` reads them)."""
    for name in tables_mod.SCHEMAS:
        os.makedirs(os.path.join(directory, "tables", name))
        pq.write_table(keyed_table(tables_mod.arrow_table(name, rows.get(name, [])), keys),
                       os.path.join(directory, "tables", name, "part.parquet"))

