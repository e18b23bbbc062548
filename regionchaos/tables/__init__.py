"""A run's artifacts as tables: what the invariant suites query.

In:  a run's prefix on S3 (``regionchaos.storage.s3.ObjectStore`` of ``runs/RUN_ID/``):
     ``scenario.json``, ``history/*.jsonl``, ``checkpoints/`` (the ``_metadata`` left at
     the end and the state files they name), ``sink/commits/*.json``, ``sink/txn/``.
Out: ``load_tables(spark, store, run_id) -> dict[str, DataFrame]``; `read_run` +
     `build_frames` give the same tables as pandas frames without Spark (report, tests).
     Every table carries ``run_id``, so the same suites judge one run or thousands
     (`spark.union_tables`). Columns are documented in ``expectations/README.md`` and in
     `SCHEMAS` (`schemas`).

One module a job, each importing only those above it:
- `schemas`: `SCHEMAS`, `TABLES`, `column_names`, the DDL helpers and the key patterns the others share;
- `artifacts` (read artifacts): `RunArtifacts`, `read_run` (one LIST with sizes, then GETs; nothing written);
- `rows` (build rows): `build_rows`, the replay of the history and every table's section,
  `region_rule`, the job's operators (`OPERATOR_MODE`), digests, redistribution and truth rows;
- `spark` (to pandas/Arrow/Spark): `frame_of`, `build_frames`, `compact_strings`, `arrow_schema`,
  `arrow_table`, `to_spark`, `rows_to_spark`, `load_tables`, `union_tables`, spilling to Parquet
  (`spill_directory`, `spill_possible`, `SPILL_MIN_ROWS`), `warm_up` (a fresh JVM's first conversions).

Re-exported here: the names callers use (`from regionchaos import tables`); anything else by
its module (`regionchaos.tables.spark.SPILL_MIN_ROWS`).
"""

from __future__ import annotations

from .artifacts import RunArtifacts, read_run
from .rows import OPERATOR_MODE, build_rows
from .schemas import SCHEMAS, TABLES, column_names
from .spark import arrow_schema, arrow_table, build_frames, compact_strings, frame_of, load_tables, rows_to_spark, \
    spill_directory, to_spark, warm_up

__all__ = ["OPERATOR_MODE", "SCHEMAS", "TABLES", "RunArtifacts", "arrow_schema", "arrow_table", "build_frames",
           "build_rows", "column_names", "compact_strings", "frame_of", "load_tables", "read_run", "rows_to_spark",
           "spill_directory", "to_spark", "warm_up"]
