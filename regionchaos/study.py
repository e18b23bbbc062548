"""The global-vs-regional study: what regional checkpoints buy, in numbers and plots.

In:  a `StudyPlan` (policies, per-task checkpoint failure probabilities, parallelisms, seeds,
     checkpoints per run, the per-region crash probability), where storage is (None = the
     embedded S3 server for the duration) and a SparkSession.
Out: `run_study(...) -> dict` (also ``studies/STUDY_ID/study.json`` on the store) with one
     row per (policy, parallelism, probability): checkpoint success rate (and, for global
     checkpoints, the closed form ``(1 - p) ** tasks``), mean and maximum state staleness,
     records replayed after failover (region and global failovers, also counted), retained
     checkpoint storage and S3 requests, each
     averaged over the same seeds; and ``studies/STUDY_ID/index.html``, one page with the
     plots and the table (`render_page`), which the plugin's runs view links.

How: every (policy, parallelism, probability, seed) cell is one run of the
``global-vs-regional`` scenario with only the swept settings overridden, emulated in memory
inside a Spark task (the swarm's fast path, `regionchaos.swarm.run_partitions`). The seed
draws the same fault schedule under every policy (the draws depend on the seed, the attempt
and the job's tasks, never on the policy), so the policies are compared on the same faults.
Each cell's metrics are read from its artifacts' table rows (`regionchaos.tables.build_rows`
of the in-memory store: checkpoint metadata, the inventory), except records replayed, which
is the emulator's count. The study measures; it does not judge (`regionchaos swarm` does).

State staleness at an attempt: how many checkpoints old the oldest state is that a failover
right after the attempt's decision would restore, i.e. the attempt's checkpoint id minus the
oldest origin in the latest completed checkpoint (before any completes: minus the job's start).
Global checkpoints go stale by failing as a whole; regional ones complete while some regions
fall back to older state. Both are counted the same way.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import time
from functools import partial
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import runner
from . import tables as tables_mod
from .report import _plt, _png, template
from .scenario import ScenarioError, load
from .spark import get_spark
from .storage.memory import MemoryStore
from .storage.s3 import ObjectStore
from .swarm import progress_bar, run_partitions
from .tables import SCHEMAS

BASE_SCENARIO = "global-vs-regional"
STUDIES_PREFIX = "studies"
_REGION = "execution.checkpointing.region."
POLICIES: dict[str, dict[str, Any]] = {
    "global": {_REGION + "enabled": False},
    "regional": {_REGION + "enabled": True, _REGION + "semantics": "flip",
                 _REGION + "forced-global-failure": "reset-counter"},
    "keep-forcing": {_REGION + "enabled": True, _REGION + "semantics": "flip",
                     _REGION + "forced-global-failure": "keep-forcing"},
    "pr": {_REGION + "enabled": True, _REGION + "semantics": "pr"},
}
POLICY_TEXT = {
    "global": "regional checkpoints off: one declining task fails the checkpoint",
    "regional": "FLIP-600 as proposed, tier 2 (a failed forced-global checkpoint resets the counter)",
    "keep-forcing": "FLIP-600 with the dev list's alternative: keep forcing global until one completes",
    "pr": "the implementation in apache/flink (RegionalCheckpointHandler semantics)",
}
POLICY_COLOURS = {"global": "#c62828", "regional": "#1565c0", "keep-forcing": "#2e7d32", "pr": "#6a1b9a"}
# marker, line style, marker size: lines that coincide stay visible (a large hollow marker under a small one)
POLICY_STYLES = {"global": ("o", "-", 5), "regional": ("s", "-", 9), "keep-forcing": ("^", "--", 7), "pr": ("x", ":", 6)}
# the table's columns: (row key, header, sort descending first); sorted copies are pre-rendered (no script)
TABLE_COLUMNS = [("policy", "policy", False), ("parallelism", "parallelism", True), ("tasks", "tasks", True),
                 ("probability", "p", True), ("attempts", "attempts", True), ("success_rate", "success rate", True),
                 ("success_rate_se", "± s.e.", True), ("closed_form", "closed form", True),
                 ("staleness_mean", "staleness mean", True), ("staleness_max", "staleness max", True),
                 ("records_replayed", "records replayed", True), ("region_failovers", "region failovers", True),
                 ("global_failovers", "global failovers", True), ("retained_bytes", "retained MiB", True),
                 ("s3_requests", "S3 requests", True)]
MAX_TASKMANAGERS = 256


def _distinct_within(value: tuple, low, high, what: str) -> tuple:
    """The sweep values sorted and without repeats; none, or any outside [low, high], is refused."""
    bad = [v for v in value if not low <= v <= high]
    if bad or not value:
        raise ValueError(f"each must be in {what}, got {bad or 'none'}")
    return tuple(sorted(set(value)))


class StudyPlan(BaseModel):
    """What a study sweeps. Field names are the CLI's options (``--probabilities`` ...)."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    policies: tuple[str, ...] = ("global", "regional", "keep-forcing", "pr")
    probabilities: tuple[float, ...] = (0.0001, 0.001, 0.01, 0.05)
    parallelism: tuple[int, ...] = (16, 64, 256, 1024)
    seeds: int = Field(2, ge=1, le=1000)
    first_seed: int = Field(1, ge=0, le=2**62)
    checkpoints: int = Field(20, ge=1, le=10_000)
    crash: float = Field(0.002, ge=0.0, le=1.0, description="per region and checkpoint: the region fails over")

    @field_validator("policies")
    @classmethod
    def _policies(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [p for p in value if p not in POLICIES]
        if unknown or not value:
            raise ValueError(f"unknown polic{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown) or '(none)'}; "
                             f"choose from {', '.join(POLICIES)}")
        return tuple(dict.fromkeys(value))

    @field_validator("probabilities")
    @classmethod
    def _probabilities(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        return _distinct_within(value, 0.0, 1.0, "[0, 1] (a probability per task and checkpoint)")

    @field_validator("parallelism")
    @classmethod
    def _parallelism(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return _distinct_within(value, 1, 8192, "1..8192 (subtasks per vertex)")

    def cells(self) -> list[dict]:
        """Every (policy, parallelism, probability, seed), the costliest first (a large run
        started last would leave the other core idle at the end)."""
        out = [{"policy": policy, "parallelism": par, "probability": p, "seed": seed}
               for par in sorted(self.parallelism, reverse=True) for p in self.probabilities
               for policy in self.policies for seed in range(self.first_seed, self.first_seed + self.seeds)]
        return out

    def study_id(self) -> str:
        digest = hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:10]
        return f"study-{digest}"


def plan_from_options(**options: Any) -> StudyPlan:
    """A `StudyPlan` from CLI / DAG values (None = the default); errors name the option."""
    try:
        return StudyPlan(**{k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        raise ScenarioError([("--" + ".".join(str(p) for p in e["loc"][:1]).replace("_", "-"),
                              e["msg"].removeprefix("Value error, ")) for e in exc.errors()], "study options") from None


def cell_overrides(cell: dict, plan: StudyPlan) -> dict[str, Any]:
    """The ``--set`` overrides of one cell on the base scenario: its policy, its job size, and
    a fault mix of declines (the swept probability) and region crashes only."""
    par = cell["parallelism"]
    return {
        **POLICIES[cell["policy"]],
        "seed": cell["seed"], "checkpoints": plan.checkpoints, "compare_regional_off": False,
        "topology.parallelism": par, "topology.taskmanagers": max(1, min(MAX_TASKMANAGERS, par // 4)),
        "workload.splits": par,
        "faults.decline": cell["probability"], "faults.subtask_crash": plan.crash, "faults.heal_checkpoints": 1,
    }


def replay_line(cell: dict, plan: StudyPlan) -> str:

    overrides = {k: v for k, v in cell_overrides(cell, plan).items() if k != "seed"}
    return runner.replay_line(BASE_SCENARIO, cell["seed"], overrides, None)


# -- one cell (inside a Spark task) ---------------------------------------------------------------


def measure(rows: dict[str, list[tuple]], first_checkpoint_id: int) -> dict:
    """A run's study metrics from its table rows: attempts (fault phase), completed, staleness
    at every attempt (mean, max) and retained checkpoint bytes at the end."""
    col = {name: {c.split()[0]: i for i, c in enumerate(ddl.split(", "))} for name, ddl in SCHEMAS.items()}
    c = col["checkpoints"]
    attempts = sorted((r for r in rows["checkpoints"] if not r[c["healing"]]), key=lambda r: r[c["checkpoint_id"]])
    origin = first_checkpoint_id - 1  # before any checkpoint completes, a failover restarts from the start
    ages, completed = [], 0
    for r in attempts:
        cid = r[c["checkpoint_id"]]
        if r[c["completed"]]:
            completed += 1
            origin = cid - (r[c["staleness"]] or 0)
        ages.append(cid - origin)
    i = col["inventory"]
    retained = sum(r[i["size_bytes"]] or 0 for r in rows["inventory"] if r[i["area"]] == "checkpoints")
    return {"attempts": len(attempts), "completed": completed,
            "staleness_sum": int(sum(ages)), "staleness_max": int(max(ages, default=0)),
            "retained_bytes": int(retained)}


def run_cell(plan: StudyPlan, cell: dict) -> dict:
    """Emulate one cell in memory and measure it; a cell that raised carries ``error``."""
    started = time.perf_counter()
    out = dict(cell, replay=replay_line(cell, plan))
    try:
        scenario = load(BASE_SCENARIO, overrides=cell_overrides(cell, plan))
        run_id = runner.default_run_id(scenario, None)
        store = MemoryStore.for_run(None, run_id)
        result, _ = runner.emulate_in_memory(scenario, None, store=store, replay=out["replay"], rows=False)
        requests = store.stats.as_dict()["requests"]  # the run's own requests, before it is read back
        rows = tables_mod.build_rows(tables_mod.read_run(store, run_id))
        out.update(measure(rows, scenario.first_checkpoint_id), run_id=run_id, s3_requests=int(requests),
                   records_replayed=int(result.stats["records_replayed"]),
                   region_failovers=int(result.stats["region_failovers"]),
                   global_failovers=int(result.stats["global_failovers"]))
    except Exception as exc:  # noqa: BLE001 - reported per cell; the study goes on
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = round(time.perf_counter() - started, 3)
    return out


def _cells_task(plan: StudyPlan, done, crashed, index: int, cells: Iterator[dict]) -> Iterator[dict]:
    for cell in cells:
        out = run_cell(plan, cell)
        if "error" in out:
            crashed.add(1)
        done.add(1)
        yield out


# -- aggregation ------------------------------------------------------------------------------------


def closed_form(probability: float, parallelism: int) -> float:
    """Global checkpoints: the attempt completes only if none of the job's 2 x parallelism
    tasks (source and process vertex) declines, each independently with ``probability``."""
    return (1.0 - probability) ** (2 * parallelism)


def aggregate(cells: list[dict]) -> list[dict]:
    """One row per (policy, parallelism, probability) over its seeds; a group with a failed
    cell reports the error and no numbers (a partial mean would mislead)."""
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c["policy"], c["parallelism"], c["probability"]), []).append(c)
    rows = []
    for (policy, par, p), group in sorted(groups.items(), key=lambda kv: (list(POLICIES).index(kv[0][0]), kv[0][1], kv[0][2])):
        row: dict[str, Any] = {"policy": policy, "parallelism": par, "probability": p, "seeds": len(group),
                               "tasks": 2 * par}
        errors = [c["error"] for c in group if "error" in c]
        if errors:
            row["error"] = errors[0]
            rows.append(row)
            continue
        attempts = sum(c["attempts"] for c in group)
        completed = sum(c["completed"] for c in group)
        rate = completed / attempts if attempts else float("nan")
        row.update(
            attempts=attempts, completed=completed, success_rate=rate,
            success_rate_se=math.sqrt(rate * (1 - rate) / attempts) if attempts else float("nan"),
            staleness_mean=sum(c["staleness_sum"] for c in group) / attempts if attempts else float("nan"),
            staleness_max=max(c["staleness_max"] for c in group),
            records_replayed=sum(c["records_replayed"] for c in group) / len(group),
            region_failovers=sum(c["region_failovers"] for c in group) / len(group),
            global_failovers=sum(c["global_failovers"] for c in group) / len(group),
            retained_bytes=sum(c["retained_bytes"] for c in group) / len(group),
            s3_requests=sum(c["s3_requests"] for c in group) / len(group),
        )
        if policy == "global":
            row["closed_form"] = closed_form(p, par)
        rows.append(row)
    return rows


# -- the study ---------------------------------------------------------------------------------------


def run_study(plan: StudyPlan, *, storage=None, spark=None, console=None, local_dir: str | None = None) -> dict:
    """Run every cell of ``plan`` on Spark, aggregate, render and upload the page (see the
    module docstring). Returns the study's result (``study_id``, ``plan``, ``rows``, ``cells``,
    ``uri``, ``local``, wall seconds)."""
    cells = plan.cells()
    sid = plan.study_id()
    started = time.perf_counter()
    with runner.storage_for(storage) as config:
        store = ObjectStore(config, f"{STUDIES_PREFIX}/{sid}")
        store.check_ready()  # an unreachable store fails before any work
        if spark is None:
            spark = get_spark()
        with progress_bar(console, len(cells), label="study", unit="runs") as on_progress:
            parts = run_partitions(spark, [[c] for c in cells], partial(_cells_task, plan),
                                   f"regionchaos study {sid}: {len(cells)} runs", on_progress=on_progress)
        wall = round(time.perf_counter() - started, 1)
        result = {"study_id": sid, "plan": plan.model_dump(mode="json"), "base_scenario": BASE_SCENARIO,
                  "rows": aggregate(parts), "cells": parts, "errors": sum("error" in c for c in parts),
                  "wall_seconds": wall, "git_commit": runner.git_commit(),
                  "command": study_command(plan)}
        page = render_page(result)
        body = json.dumps(result, indent=1, sort_keys=True, default=str).encode()
        store.delete_many(store.list_keys(""))  # a re-run of the same study replaces it
        store.put_many([("study.json", body), ("index.html", page.encode())])
        result["uri"] = store.uri("index.html")
        if local_dir:
            target = os.path.join(local_dir, STUDIES_PREFIX, sid)
            os.makedirs(target, exist_ok=True)
            for name, data in (("study.json", body), ("index.html", page.encode())):
                with open(os.path.join(target, name), "wb") as fh:
                    fh.write(data)
            result["local"] = os.path.join(target, "index.html")
    return result


def study_command(plan: StudyPlan) -> str:

    parts = ["regionchaos", "study"]
    for name, value in plan.model_dump(mode="json").items():
        flag = "--" + name.replace("_", "-")
        parts += [flag, ",".join(str(v) for v in value) if isinstance(value, list) else str(value)]
    return shlex.join(parts)


# -- the page ---------------------------------------------------------------------------------------


def _by_policy(rows: list[dict], par: int, key: str) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {}
    for r in rows:
        if r["parallelism"] == par and "error" not in r and r.get(key) is not None:
            xs, ys = out.setdefault(r["policy"], ([], []))
            xs.append(r["probability"])
            ys.append(r[key])
    return out


def coinciding(series: dict[str, tuple[list[float], list[float]]]) -> list[list[str]]:
    """Groups of policies whose lines are the same (same x, y within 1e-9 relative), in
    `POLICIES` order; policies alone are not listed."""
    groups: list[list[str]] = []
    for policy in [p for p in POLICIES if p in series]:
        xs, ys = series[policy]
        for group in groups:
            gx, gy = series[group[0]]
            if list(gx) == list(xs) and all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(gy, ys)):
                group.append(policy)
                break
        else:
            groups.append([policy])
    return [g for g in groups if len(g) > 1]


def coincidences(rows: list[dict], key: str) -> list[tuple[int, list[str]]]:
    """(parallelism, policies) wherever the lines of ``key`` coincide, panel by panel."""
    return [(par, group) for par in sorted({r["parallelism"] for r in rows})
            for group in coinciding(_by_policy(rows, par, key))]


def plot_metric(rows: list[dict], key: str, ylabel: str, *, closed: bool = False, log_y: bool = False) -> str | None:
    """One panel per parallelism: ``key`` against the failure probability, a line per policy
    (the closed form of global checkpoints dashed, with ``closed``). Each policy has its own
    marker and line style; lines that coincide are all drawn (a large hollow marker under a
    smaller one) and their legend entries say which they coincide with."""
    plt = _plt()
    pars = sorted({r["parallelism"] for r in rows})
    if not pars:
        return None
    fig, axes = plt.subplots(1, len(pars), figsize=(3.6 * len(pars), 3.0), squeeze=False, sharey=True)
    for ax, par in zip(axes[0], pars):
        series = _by_policy(rows, par, key)
        same = {p: [q for q in group if q != p] for group in coinciding(series) for p in group}
        for policy, (xs, ys) in sorted(series.items(), key=lambda kv: -POLICY_STYLES[kv[0]][2]):
            marker, line, size = POLICY_STYLES[policy]
            label = policy + (f" (= {', '.join(same[policy])})" if policy in same else "")
            ax.plot(xs, ys, marker=marker, linestyle=line, color=POLICY_COLOURS[policy], label=label, ms=size,
                    markerfacecolor="none" if marker in "os^" else POLICY_COLOURS[policy], lw=1.3)
        if closed:
            xs, ys = _by_policy(rows, par, "closed_form").get("global", ([], []))
            if xs:
                ax.plot(xs, ys, "k--", lw=1, label="(1-p)^tasks")
        probabilities = [r["probability"] for r in rows]
        if min(probabilities) > 0:
            ax.set_xscale("log")
        else:  # p = 0 is on the axis too: linear near 0
            ax.set_xscale("symlog", linthresh=min([p for p in probabilities if p > 0], default=1e-4))
        values = [r[key] for r in rows if "error" not in r and r.get(key) is not None]
        if log_y and values and min(values) > 0 and max(values) / min(values) > 50:
            ax.set_yscale("log")
        ax.set_title(f"parallelism {par} ({2 * par} tasks)", fontsize=9)
        ax.set_xlabel("p (per task and checkpoint)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5)
    axes[0][0].set_ylabel(ylabel, fontsize=8)
    fig.tight_layout()

    return _png(fig)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def conclusion(rows: list[dict]) -> list[str]:
    """The study's headline, computed from its rows: at the hardest setting measured (largest
    parallelism, then largest p, with global and another policy measured), each policy's
    success rate and mean staleness; then, over every setting, how often each policy completed
    at least as many attempts as global checkpoints. Empty without such a setting."""
    ok = [r for r in rows if "error" not in r and r.get("success_rate") is not None
          and not math.isnan(r["success_rate"])]
    cells: dict[tuple, dict[str, dict]] = {}
    for r in ok:
        cells.setdefault((r["parallelism"], r["probability"]), {})[r["policy"]] = r
    compared = {k: v for k, v in cells.items() if "global" in v and len(v) > 1}
    if not compared:
        return []
    par, p = max(compared)
    hard = compared[(par, p)]
    others = [q for q in POLICIES if q in hard and q != "global"]
    best = max(others, key=lambda q: hard[q]["success_rate"])
    ties = [q for q in others if math.isclose(hard[q]["success_rate"], hard[best]["success_rate"], abs_tol=1e-12)]
    g = hard["global"]
    lines = [f"At the hardest setting measured (parallelism {par}, {2 * par} tasks, p = {p}), global checkpoints "
             f"completed {_pct(g['success_rate'])} of attempts" + (f" (closed form {_pct(g['closed_form'])})"
                                                                   if g.get("closed_form") is not None else "")
             + "; " + ", ".join(f"{q} {_pct(hard[q]['success_rate'])}" for q in others) + ". "
             + f"Mean state staleness: global {g['staleness_mean']:.2f}, "
             + ", ".join(f"{q} {hard[q]['staleness_mean']:.2f}" for q in others) + " checkpoints."]
    if len(ties) > 1:
        lines.append(f"{', '.join(ties[:-1])} and {ties[-1]} give the same numbers there (their lines coincide).")
    gain = hard[best]["success_rate"] - g["success_rate"]
    lines.append(f"{' / '.join(ties)} completed {abs(gain) * 100:.1f} percentage points "
                 f"{'more' if gain >= 0 else 'fewer'} attempts than global checkpoints there.")
    for q in others:
        at_least = sum(1 for v in compared.values() if q in v and v[q]["success_rate"] >= v["global"]["success_rate"])
        measured = sum(1 for v in compared.values() if q in v)
        lines.append(f"{q} completed at least as many attempts as global in {at_least} of {measured} settings.")
    return lines


def sorted_tables(rows: list[dict]) -> list[tuple[str, str, list[dict]]]:
    """(column key, header, rows sorted by it) for every table column: errors and missing
    values last; numbers largest first, the policy in `POLICIES` order."""
    out = []
    for key, header, descending in TABLE_COLUMNS:
        def order(r, key=key, descending=descending):
            value = r.get(key)
            if key == "policy":
                return (0, list(POLICIES).index(value) if value in POLICIES else 99)
            if value is None or "error" in r and key not in ("parallelism", "tasks", "probability"):
                return (1, 0)
            return (0, -value if descending else value)
        out.append((key, header, sorted(rows, key=order)))
    return out


def render_page(result: dict) -> str:
    """The study as one offline HTML page (Jinja2; plots inline as PNG; the table sortable by
    any column through links to pre-sorted copies, no script)."""
    rows = result["rows"]
    plots = [
        ("success", "Checkpoint success rate", "success_rate",
         plot_metric(rows, "success_rate", "completed / attempted", closed=True)),
        ("staleness", "Mean state staleness (checkpoints)", "staleness_mean",
         plot_metric(rows, "staleness_mean", "checkpoints")),
        ("staleness-max", "Maximum state staleness (checkpoints)", "staleness_max",
         plot_metric(rows, "staleness_max", "checkpoints", log_y=True)),
        ("replayed", "Records replayed after failover (per run)", "records_replayed",
         plot_metric(rows, "records_replayed", "records", log_y=True)),
        ("retained", "Retained checkpoint storage at the end (bytes per run)", "retained_bytes",
         plot_metric(rows, "retained_bytes", "bytes", log_y=True)),
        ("requests", "S3 requests (per run)", "s3_requests", plot_metric(rows, "s3_requests", "requests", log_y=True)),
    ]
    return template("study.html.j2").render(
        result=result, rows=rows, policies=POLICY_TEXT, colours=POLICY_COLOURS, conclusion=conclusion(rows),
        plots=[(pid, title, src, coincidences(rows, key)) for pid, title, key, src in plots if src],
        columns=TABLE_COLUMNS, sorted_tables=sorted_tables(rows))
