"""A real-Flink run judged by the GX suites that apply to it, through the one judge (`regionchaos.judge`).

In:  a SparkSession and the run's `ObjectStore` (the artifacts `regionchaos.flink.artifacts.store_artifacts`
     wrote; rows by `regionchaos.flink.tables.build_rows`, read in by `regionchaos.judge.intake.flink_run`),
     and the Scenario it ran (None for ``python -m regionchaos.flink``: held to "valid").
Out: `judge_stored(spark, store, run_id)` -> the run's `Judgement`: every suite's check (backend ``flink``: the
     suites whose YAML ``applies_to`` names it judge, with the rules listed there; the others are
     `regionchaos.run.NOT_APPLICABLE`, counted neither way), the verdict merged over the applicable ones (one
     that did not run is unknown, never valid), ``stats.storage_files``: named / lost / leaked file counts.
     `verdict_by_suite` gives suite -> valid / invalid / unknown and the suites listed apart. Written under
     the run prefix (``prefix``: ``flink/`` for ``python -m regionchaos.flink``, the prefix's root for
     `regionchaos run`, as an emulated run's): ``validation/results.json`` and, when asked, GX's Data Docs
     under ``datadocs/``.
     A distribution with FLIP-600's regional checkpoints (``regional_checkpoints`` in ``flink/run.json``,
     `regionchaos.flink.dist.regional_checkpoints`): the FLIP's own suites (`FLIP600_SUITES`) apply to it,
     and this backend does not read its regional decisions yet, so they are unknown (`with_regional`), never
     "not applicable" and never passed.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from regionchaos.flink import tables as flink_tables
from regionchaos.flink.artifacts import PREFIX
from regionchaos.judge import Judgement, engine, intake, judgement_of
from regionchaos.judge.checks import applies
from regionchaos.judge.runs import results_doc
from regionchaos.judge.upload import upload
from regionchaos.run import Verdict
from regionchaos.scenario import Scenario
from regionchaos.storage import ObjectStore

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
            if c["name"] in FLIP600_SUITES and not applies(c) else c for c in checks]


def verdict_by_suite(checks: list[dict]) -> tuple[dict[str, str], list[str]]:
    """(suite -> its verdict, for the suites that apply; the suites that do not)."""
    judged = {c["name"]: Verdict.of_success(c.get("success")) for c in checks if applies(c)}
    return judged, [c["name"] for c in checks if not applies(c)]


def judge_stored(spark, store: ObjectStore, run_id: str, *, scenario: Scenario | None = None, docs: bool = False,
                 prefix: str = PREFIX) -> Judgement:
    """Judge the stored real run (see the module docstring); writes its results under ``prefix``."""
    tables, total = intake.flink_run(spark, store, run_id)
    docs_dir = Path(tempfile.mkdtemp(prefix="regionchaos-flink-docs-")) if docs else None
    try:
        checks, _timings, result = engine.judge(spark, tables, [run_id], total_rows=total, docs_dir=docs_dir,
                                                backend=BACKEND)
        regional = bool(flink_tables.read_json(store, PREFIX + "run.json").get("regional_checkpoints"))
        storage = flink_tables.storage_counts(flink_tables.dumps_of(store),
                                              flink_tables.read_json(store, PREFIX + "inventory.json"))
        judged = judgement_of(run_id, with_regional(checks[run_id], regional), scenario=scenario, mutant=None,
                              stats={"storage_files": storage})
        suites, not_applicable = verdict_by_suite(judged.checks)
        upload(store, {**results_doc(judged), "suites": suites, "not_applicable": not_applicable, "storage": storage},
               result, docs_dir, prefix=prefix)
    finally:
        if docs_dir is not None:
            shutil.rmtree(docs_dir, ignore_errors=True)
    return judged
