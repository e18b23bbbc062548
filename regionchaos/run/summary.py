"""A run's summary: the one builder of ``summary.json`` (DESIGN.md's contract), from the run's `Judgement`.

In:  the run's `Judgement` (`regionchaos.judge`: checks, verdict, findings, standing), what the run is (its
     Scenario, replay line, where its prefix is), what the emulation counted (its stats and drawn parameters;
     empty when it ran elsewhere, e.g. ``spark_jobs/emulate.py`` on a cluster), what the steps after the
     judgement did (the report written or why not, Data Docs built or not, S3 traffic, wall seconds per
     phase) and, for a run that crashed, its traceback and log.
Out: `build_summary` -> ``run_id, scenario, seed, mutant, backend, verdict, expect, checks, stats, drawn,
     report, datadocs, storage, replay``, the judgement's fields (failed and unknown invariants, failed rules
     and what explains them, the recorded findings that apply and those that showed, the standing against
     the scenario, ``as_expected`` for the correct protocol) and ``outcome`` (`regionchaos.judge.policy`:
     kind, exit code, green, sentence); ``error`` when the run could not be judged.

Every path that sums up one run comes here (`regionchaos.runner`: a deep run, a run judged after it was
emulated elsewhere, a run that crashed), once per run, so ``summary.json`` has one shape and is written once.
What is learnt about a run later (the Airflow DAG run that made it) is stored beside it, never in it.
"""

from __future__ import annotations

from typing import Any

from ..judge import Judgement, run_outcome


def build_summary(judged: Judgement, scenario, *, config, replay: str, stats: dict, drawn: dict,
                  report_error: str | None = None, report: bool = True, datadocs: bool = True,
                  more_stats: dict | None = None, crash: dict | None = None) -> dict[str, Any]:
    """The summary of one judged (or crashed: `regionchaos.judge.crashed`) run. ``stats``: the emulation's
    counts; when it ran elsewhere (empty) the judge's own reading of the history stands in
    (``history_counts``), so the counts are there either way. ``report``: a report was written (else, or
    with ``report_error``, ``report`` is None: never an address of a page that was not written);
    ``datadocs``: GX's Data Docs were built; ``more_stats``: what the steps after the judgement counted
    (S3 traffic, wall seconds); ``crash``: ``traceback`` and ``error_log`` of a run that raised."""
    merged = dict(stats) or dict(judged.stats.get("history_counts") or {})
    merged.update(judged.stats)
    if judged.wall_seconds:  # read, tables, gx_setup, gx_validate, gx_datadocs, upload
        merged["wall_seconds_validate"] = judged.wall_seconds
    merged.update(more_stats or {})
    base = f"s3://{config.bucket}/{config.prefix}/{judged.run_id}"
    return {
        **judged.fields(),
        "run_id": judged.run_id,
        "scenario": scenario.name,
        "seed": scenario.seed,
        "mutant": judged.mutant,
        "backend": scenario.backend,
        "expect": scenario.expect.model_dump(),
        "checks": judged.checks,
        "stats": merged,
        "drawn": drawn,
        "report": f"{base}/report/index.html" if report and report_error is None else None,
        **({"report_error": report_error} if report_error else {}),
        "datadocs": f"{base}/datadocs/index.html" if datadocs else None,
        "storage": {"endpoint_url": config.endpoint_url, "bucket": config.bucket,
                    "prefix": f"{config.prefix}/{judged.run_id}"},
        "replay": replay,
        "outcome": run_outcome(judged).as_dict(),
        **(crash or {}),
    }
