"""A run's summary: the one builder of ``summary.json`` (DESIGN.md's contract).

In:  what a run is (run id, scenario, mutant, replay line, where its prefix is), what the
     emulation counted (its stats and drawn parameters; empty when it ran elsewhere, e.g.
     ``spark_jobs/emulate.py`` on a cluster) and what the judge returned (``checks``,
     ``verdict``, ``stats``, optionally ``error``).
Out: `build_summary`: ``run_id, scenario, seed, mutant, backend, verdict, expect, checks, stats, drawn,
     report, datadocs, storage, replay``, the recorded findings that apply to these settings
     and, for the correct protocol, whether the run is as its scenario expects
     (``as_expected``); ``error`` when the judge gave one.

Every path that sums up one run comes here (`regionchaos.runner`: a deep run, a run judged
after it was emulated elsewhere, a run that crashed), so ``summary.json`` has one shape.
"""

from __future__ import annotations

from typing import Any

from .verdict import Verdict


def build_summary(run_id: str, scenario, mutant: str | None, *, stats: dict, drawn: dict, validation: dict,
                  config, replay: str) -> dict:
    """The summary of one judged (or crashed: `unknown_result`) run. ``stats``: the emulation's
    counts; when it ran elsewhere (empty) the judge's own reading of the history stands in
    (``validation.stats.history_counts``), so the counts are there either way."""
    checks = validation.get("checks", [])
    verdict = validation.get("verdict", Verdict.UNKNOWN.value)
    judged_stats = validation.get("stats", {})
    merged = dict(stats) or dict(judged_stats.get("history_counts") or {})
    merged.update(judged_stats)
    base = f"s3://{config.bucket}/{config.prefix}/{run_id}"
    return {
        **expectation_of(scenario, mutant, verdict, checks),
        "run_id": run_id,
        "scenario": scenario.name,
        "seed": scenario.seed,
        "mutant": mutant,
        "backend": scenario.backend,
        "verdict": verdict,
        "expect": scenario.expect.model_dump(),
        "checks": checks,
        "stats": merged,
        "drawn": drawn,
        "report": f"{base}/report/index.html",
        "datadocs": f"{base}/datadocs/index.html",
        "storage": {"endpoint_url": config.endpoint_url, "bucket": config.bucket, "prefix": f"{config.prefix}/{run_id}"},
        "replay": replay,
        **({"error": validation["error"]} if validation.get("error") else {}),
    }


def expectation_of(scenario, mutant: str | None, verdict: str, checks: list[dict]) -> dict[str, Any]:
    """The recorded findings that apply to these settings and whether the run is as its scenario
    expects (findings.meets_expectation; not judged for a mutant, which is meant to fail)."""
    from .. import findings

    applying = [{"id": f.id, "title": f.title, "invariants": list(f.invariants_for(scenario)),
                 "rules": list(f.rules_for(scenario))} for f in findings.applicable(scenario)]
    if mutant:
        return {"findings": applying}
    shows = findings.outcome(checks)
    ok, why = findings.meets_expectation(scenario, verdict, shows["failed"], shows["unknown"],
                                         failed_rules=shows["failed_rules"], explained=shows["explained"])
    return {"findings": applying, "as_expected": {"ok": ok, "why": why}}
