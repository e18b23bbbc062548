"""A real-Flink run judged by the GX suites that apply to it, through the one judge (`regionchaos.validate.judge`).

In:  a SparkSession and the run's `ObjectStore` (the artifacts `regionchaos.flink.artifacts.store_artifacts`
     wrote; rows by `regionchaos.flink.tables.build_rows`).
Out: `judge_stored(spark, store, run_id)` -> ``{"verdict", "checks", "suites", "not_applicable", "storage", "stats"}``:
     every suite's check (backend ``flink``: the suites whose YAML ``applies_to`` names it judge, with the
     rules listed there; the others are `validate.NOT_APPLICABLE`, counted neither way), the verdict merged over
     the applicable ones (one that did not run is unknown, never valid), ``suites``: suite -> valid / invalid /
     unknown, ``not_applicable``: the suites listed apart, ``storage``: named / lost / leaked file counts (also
     as ``stats.storage_files``, for a run's summary). Written under the run prefix (``prefix``: ``flink/`` for
     ``python -m regionchaos.flink``, the prefix's root for `regionchaos run`, as an emulated run's):
     ``validation/results.json`` and, when asked, GX's Data Docs under ``datadocs/``.
     A distribution with FLIP-600's regional checkpoints (``regional_checkpoints`` in ``flink/run.json``,
     `regionchaos.flink.dist.regional_checkpoints`): the FLIP's own suites (`FLIP600_SUITES`) apply to it,
     and this backend does not read its regional decisions yet, so they are unknown (`with_regional`), never
     "not applicable" and never passed.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from regionchaos import validate
from regionchaos.flink import tables as flink_tables
from regionchaos.flink.artifacts import PREFIX
from regionchaos.run import Verdict
from regionchaos.storage import ObjectStore
from regionchaos.tables import frame_of, to_spark

BACKEND = "flink"
FLIP600_SUITES = ("decisions_follow_rules", "flip_bounds", "notifications")  # regional decisions, ref chains, notifications


def with_regional(checks: list[dict], regional: bool) -> list[dict]:
    """``checks`` as judged for a distribution with (``regional``) or without FLIP-600's regional
    checkpoints: with them, the FLIP's own suites apply but are not evaluated by this backend: unknown."""
    if not regional:
        return checks
    why = ("this Flink distribution has FLIP-600's regional checkpoints, so this suite applies, but the "
           "real-Flink backend does not read regional decisions from its artifacts yet: not evaluated")
    return [{**c, "state": None, "success": None, "error": why, "reason": why}
            if c["name"] in FLIP600_SUITES and not validate.applies(c) else c for c in checks]


def spark_tables(spark, rows: dict[str, list[tuple]]) -> tuple[dict, int]:
    """Every table as a Spark DataFrame with its declared schema; the number of rows in all."""
    return ({name: to_spark(spark, name, frame_of(name, table)) for name, table in rows.items()},
            sum(len(table) for table in rows.values()))


def verdict_by_suite(checks: list[dict]) -> tuple[dict[str, str], list[str]]:
    """(suite -> its verdict, for the suites that apply; the suites that do not)."""
    judged = {c["name"]: Verdict.of_success(c.get("success")) for c in checks if validate.applies(c)}
    return judged, [c["name"] for c in checks if not validate.applies(c)]


def judge_stored(spark, store: ObjectStore, run_id: str, *, docs: bool = False, prefix: str = PREFIX) -> dict:
    """Judge the stored real run (see the module docstring); writes its results under ``prefix``."""
    rows = flink_tables.build_rows(store, run_id)
    frames, total = spark_tables(spark, rows)
    docs_dir = Path(tempfile.mkdtemp(prefix="regionchaos-flink-docs-")) if docs else None
    try:
        per_run, _timings, _result = validate.judge(spark, frames, [run_id], total_rows=total, docs_dir=docs_dir,
                                                    backend=BACKEND)
        regional = bool(flink_tables.read_json(store, PREFIX + "run.json").get("regional_checkpoints"))
        judged = validate.judged(with_regional(per_run[run_id]["checks"], regional))
        suites, not_applicable = verdict_by_suite(judged["checks"])
        storage = flink_tables.storage_counts(flink_tables.dumps_of(store),
                                              flink_tables.read_json(store, PREFIX + "inventory.json"))
        out = {**judged, "suites": suites, "not_applicable": not_applicable, "storage": storage,
               "stats": {"storage_files": storage}}
        items = [(prefix + "validation/results.json", json.dumps(out, indent=1, sort_keys=True, default=str).encode())]
        if docs_dir is not None:
            items += [(prefix + "datadocs/" + p.relative_to(docs_dir).as_posix(), p.read_bytes())
                      for p in sorted(docs_dir.rglob("*")) if p.is_file()]
        store.put_many(items)
    finally:
        if docs_dir is not None:
            shutil.rmtree(docs_dir, ignore_errors=True)
    return out
