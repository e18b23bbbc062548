"""Run ids keyed by the Airflow run, result rows, and the DAG-level judgements.

In:  Airflow dag/run ids, runner summaries (the ``summary.json`` contract of DESIGN.md).
Out: storage-safe run ids (`run_key`), compact result rows (`result_row`), and the lists
     of problems that fail the nightly and swarm summary tasks (`judge_nightly`,
     `judge_swarm`). Pure functions: no Airflow, no storage.
"""

from __future__ import annotations

import re
from typing import Any

_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
PLUGIN_PREFIX = "/regionchaos"


def run_key(*parts: object) -> str:
    """A run id from parts (dag id, Airflow run id, scenario ...): ``[A-Za-z0-9-]`` only.

    The same parts always give the same id, so a retried task re-runs the same run (the
    runner makes that idempotent) instead of starting a new one.
    """
    words = [_UNSAFE.sub("-", str(p)).strip("-") for p in parts]
    key = "-".join(w for w in words if w)
    if not key:
        raise ValueError(f"no usable characters in run id parts {parts!r}")
    return key[:200].rstrip("-")


def failed_invariants(summary: dict[str, Any]) -> list[str]:
    return [c.get("name", "?") for c in summary.get("checks", []) if not c.get("success", False)]


def view_links(run_id: str) -> dict[str, str]:
    """Where the plugin serves a run's report, Data Docs and summary (relative to the API root)."""
    base = f"{PLUGIN_PREFIX}/runs/{run_id}"
    return {
        "report_view": f"{base}/report/index.html",
        "datadocs_view": f"{base}/datadocs/index.html",
        "summary_view": f"{base}/summary.json",
    }


def checkpoint_success_rate(summary: dict[str, Any]) -> float | None:
    """Completed / triggered checkpoints of a run, as its validated history counts them
    (``stats.history_counts``; the emulator's own counts only if those are missing)."""
    stats = summary.get("stats") or {}
    counts = stats.get("history_counts") or stats
    triggered = counts.get("triggered")
    if not triggered:
        return None
    return round((counts.get("global", 0) + counts.get("regional", 0)) / triggered, 4)


def nightly_key(row: dict[str, Any]) -> str | None:
    """The nightly DAG run a run belongs to (the Airflow run id as `run_key` spelled it in
    ``nightly-<dag run>-<scenario>``), or None for a run of another DAG or the CLI."""
    run_id, scenario = row.get("run_id") or "", row.get("scenario") or ""
    suffix = "-" + run_key(scenario) if scenario else ""
    if not run_id.startswith("nightly-") or not suffix or not run_id.endswith(suffix):
        return None
    return run_id[len("nightly-"):-len(suffix)] or None


def result_row(summary: dict[str, Any]) -> dict[str, Any]:
    """The compact row of one run: what the summary tasks and the UI list show (``checks``:
    invariant -> True passed, False failed, None no result)."""
    from regionchaos.findings import outcome

    run_id = summary.get("run_id", "")
    return {
        "run_id": run_id,
        "scenario": summary.get("scenario"),
        "seed": summary.get("seed"),
        "mutant": summary.get("mutant"),
        "verdict": summary.get("verdict", "unknown"),
        "failed": failed_invariants(summary),
        "failed_rules": outcome(summary.get("checks", []))["failed_rules"],
        "explained": outcome(summary.get("checks", []))["explained"],
        "checks": {c.get("name", "?"): c.get("success") for c in summary.get("checks", [])},
        "checkpoint_success_rate": checkpoint_success_rate(summary),
        "report": summary.get("report"),
        "replay": summary.get("replay"),
        **(view_links(run_id) if RUN_ID_RE.match(run_id or "") else {}),
    }


def judge_nightly(plan: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[str]:
    """Problems of a nightly run: an empty list means the nightly run passes.

    A run may fail only the rules of recorded findings that apply to its scenario's settings
    (``regionchaos.findings``); a finding's own scenario must show it; a run without a
    row (its task failed) or with verdict unknown is a problem either way.
    """
    from regionchaos.findings import meets_expectation
    from regionchaos.scenario import from_dict, load

    by_run = {row.get("run_id"): row for row in rows if row}
    problems = []
    for entry in plan:
        name, run_id = entry["scenario_name"], entry["run_id"]
        row = by_run.get(run_id)
        if row is None:
            problems.append(f"{name}: no result (its task failed), run {run_id}")
            continue
        scenario = from_dict(entry["scenario"]) if entry.get("scenario") else load(name)
        ok, why = meets_expectation(scenario, row.get("verdict"), row.get("failed") or [], row.get("unknown") or [],
                                    failed_rules=row.get("failed_rules"), explained=row.get("explained"))
        if not ok:
            problems.append(f"{name}: {row.get('verdict')}, {why}; replay: {row.get('replay')}")
    return problems


def mapped_rows(value: Any) -> list[dict[str, Any]]:
    """The rows a mapped task group hands downstream, as a list. Airflow 3 unpacks the output of
    a group mapped once (apache/airflow#69036, #59008): a nightly of one scenario would get
    that scenario's row, a dict, instead of a list of one row."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    return [row for row in value if row]


SEED_STRIDE = 1_000_000  # a scheduled swarm's first seed: YYYYMMDD * SEED_STRIDE (new seeds every day)


def dated_first_seed(when) -> int:
    """The first seed of a swarm scheduled at ``when`` (a datetime): each day explores new seeds."""
    return int(when.strftime("%Y%m%d")) * SEED_STRIDE


def swarm_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per seed of a fast swarm's result (`regionchaos.fastswarm.fast_swarm`): verdict,
    failed and unknown invariants, replay lines, and ``known_finding`` for a seed that fails only
    the invariants of recorded findings (`judge_swarm` does not count those)."""
    from regionchaos.fastswarm import replay_deep_line

    known = {k["seed"] for k in result.get("known_findings", [])}
    rows = []
    for run in result["runs"]:
        row = {k: run.get(k) for k in ("seed", "run_id", "verdict", "failed", "unknown", "replay", "error")}
        row.update(known_finding=run["seed"] in known, swarm_id=result["swarm_id"],
                   replay_deep=replay_deep_line(result["swarm_id"], run["seed"]))
        rows.append(row)
    return rows


def judge_swarm(rows: list[dict[str, Any]], *, mutant: str | None, seeds: int) -> list[str]:
    """Problems of a swarm run: unknown verdicts and missing seeds always; invalid seeds
    without a mutant (unless marked ``known_finding``: they fail only invariants of recorded
    findings); and with a mutant, a mutant that no seed caught."""
    problems = []
    if len(rows) != seeds:
        problems.append(f"{seeds - len(rows)} of {seeds} seeds have no result (a batch failed)")
    for row in rows:
        if row.get("verdict") == "unknown":
            problems.append(f"seed {row.get('seed')}: unknown; replay: {row.get('replay')}")
    invalid = [row for row in rows if row.get("verdict") == "invalid"]
    if mutant is None:  # a seed that fails only a recorded finding's invariants is no regression
        problems += [
            f"seed {row.get('seed')}: invalid (failed: {', '.join(row.get('failed', []))}); "
            f"replay: {row.get('replay')}"
            for row in invalid if not row.get("known_finding")
        ]
    elif rows and not invalid:
        problems.append(f"mutant {mutant} survived all {len(rows)} seeds")
    return problems
