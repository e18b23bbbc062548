"""The nightly trend of the runs view: invariant failures and checkpoint success rate per
nightly DAG run.

In:  result rows (`runs.result_row` plus ``modified``, the time their summary was written).
Out: `nightly_points(rows)`: one point per nightly DAG run (`runs.nightly_key`), oldest
     first: its key, its date (`run_date`), when its last summary was written, its runs, failures per invariant,
     and the mean checkpoint success rate; `trend_png(points)`: the chart as a data URI
     (matplotlib, nothing fetched by the page), None without nightly runs.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import re

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
        points.append({"key": key, "date": run_date(key, when), "when": max(r.get("modified") or "" for r in group), "runs": len(group),
                       "failures": failures, "invalid": sum(r.get("verdict") == "invalid" for r in group),
                       "success_rate": sum(rates) / len(rates) if rates else None})
    return sorted(points, key=lambda p: (p["when"], p["key"]))


def trend_png(points: list[dict[str, Any]]) -> str | None:
    if not points:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = list(range(len(points)))
    labels = [p["date"].replace(" ", "\n", 1) for p in points]  # the DAG run's date, its time on a second line
    invariants = sorted({name for p in points for name in p["failures"]})
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 4.8), sharex=True, height_ratios=[3, 2])
    base = [0] * len(points)
    colours = plt.get_cmap("tab20")
    for i, name in enumerate(invariants):
        heights = [p["failures"].get(name, 0) for p in points]
        top.bar(x, heights, bottom=base, label=name, color=colours(i % 20), width=0.6)
        base = [b + h for b, h in zip(base, heights)]
    top.set_ylabel("failed invariants\n(runs x invariant)", fontsize=8)
    top.set_ylim(0, max(base + [1]) * 1.15)
    if invariants:
        top.legend(fontsize=7, ncol=min(4, len(invariants)), loc="upper left")
    else:
        top.text(0.5, 0.5, "no invariant failed", transform=top.transAxes, ha="center", color="#2e7d32")
    rates = [p["success_rate"] for p in points]
    bottom.plot([i for i, r in zip(x, rates) if r is not None], [r for r in rates if r is not None], "o-",
                color="#1f4e79")
    bottom.set_ylim(0, 1.05)
    bottom.set_ylabel("checkpoint success\n(mean over runs)", fontsize=8)
    bottom.set_xticks(x, labels, fontsize=7)
    bottom.set_xlabel("nightly DAG run (logical date, UTC)", fontsize=8)
    bottom.set_xlim(-0.75, len(points) - 0.25)  # one nightly run is one bar, not a bar across the chart
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
