"""The nightly trend of the runs view: invariant failures and checkpoint success rate per
nightly DAG run.

In:  result rows (`runs.result_row` plus ``modified``, the time their summary was written).
Out: `nightly_points(rows)`: one point per nightly DAG run (`runs.nightly_key`), oldest
     first: its key, its date (`run_date`), when its last summary was written, its runs, failures per
     invariant, the mean checkpoint success rate, and its DAG run's page when a run names it;
     `chart_data(points, airflow_root)`: what the view's chart (Chart.js, drawn in the page) plots: one
     series per invariant that failed in any of them, runs failing it per nightly DAG run, and the
     checkpoint success rate, with each point's DAG run to open.
"""

from __future__ import annotations

import re
from typing import Any

from regionchaos_airflow.runs import nightly_key

_LOGICAL_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})")


def run_date(key: str, when: str) -> str:
    """A nightly DAG run's date as people read it: its logical date from the Airflow run id
    (``scheduled__2026-11-24T02:00:00+00:00`` -> ``2026-11-24 02:00``), else when it ended."""
    match = _LOGICAL_DATE.search(key)
    if match:
        return f"{match[1]} {match[2]}:{match[3]}"
    return (when or key)[:16].replace("T", " ")


def nightly_points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        key = nightly_key(row)
        if key is not None and row.get("verdict") != "running":
            groups.setdefault(key, []).append(row)
    points = []
    for key, group in groups.items():
        failures: dict[str, int] = {}
        for row in group:
            for name in row.get("failed") or []:
                failures[name] = failures.get(name, 0) + 1
        rates = [r["checkpoint_success_rate"] for r in group if r.get("checkpoint_success_rate") is not None]
        when = max(r.get("modified") or "" for r in group)
        points.append({"key": key, "date": run_date(key, when), "when": when, "runs": len(group),
                       "failures": failures, "invalid": sum(r.get("verdict") == "invalid" for r in group),
                       "success_rate": sum(rates) / len(rates) if rates else None,
                       "dag_run": next((r["dag_run"] for r in group if r.get("dag_run")), None)})
    return sorted(points, key=lambda p: (p["when"], p["key"]))


def chart_data(points: list[dict[str, Any]], airflow_root: str = "") -> dict[str, Any]:
    """The chart's data (JSON for the page's script): x labels (the DAG runs' dates), per failed
    invariant the runs failing it in each nightly DAG run, the mean checkpoint success rate in percent
    (None where no run counted it), the runs per point, and each point's DAG run page (None if unknown)."""
    invariants = sorted({name for p in points for name in p["failures"]})
    return {
        "labels": [p["date"] for p in points],
        "runs": [p["runs"] for p in points],
        "invariants": [{"name": name, "failures": [p["failures"].get(name, 0) for p in points]} for name in invariants],
        "success_rate": [None if p["success_rate"] is None else round(100 * p["success_rate"], 1) for p in points],
        "dag_runs": [airflow_root + p["dag_run"] if p.get("dag_run") else None for p in points],
    }
