"""The one-page run report: what happened in a run, readable offline.

In:  the run's summary (DESIGN.md contract: verdict, checks, stats, replay, outcome, ...) and the
     run's tables (`regionchaos.tables` pandas frames), given directly (a deep run hands on the
     frames its judgement built), or read from the run's store.
Out: ``build_report(summary, tables_or_events=None, *, store=None, spark=None) -> str``: one
     HTML page with inline CSS and plots embedded as base64 PNG (matplotlib, no external
     URL): the verdict and the failed invariants first, then the checkpoint timeline (per
     region: acked, declined, timed out, fallback), ref-chain depth and staleness, failovers
     and rescales, records in vs committed, storage retained over time, S3 requests.
     The runner uploads it to ``report/index.html``.

matplotlib is imported inside the plotting functions (`_plt`, `import_in_background`): about 0.35 s of Python
that a run can spend while its Spark driver starts, and that no caller of the templates alone pays.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import threading
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from . import tables as tables_mod
from .history import Kind
from .run.verdict import NOT_APPLICABLE

STATUS_COLOURS = {"GLOBAL": "#2e7d32", "REGIONAL": "#1565c0", "ABORTED": "#c62828", "VOIDED": "#757575"}
VERDICT_COLOURS = {"valid": "#2e7d32", "invalid": "#c62828", "unknown": "#ef6c00"}
# per region and checkpoint: 0 no region, 1 acked, 2 fallback (referenced), 3 timed out, 4 declined
CELL_COLOURS = ["#f5f5f5", "#a5d6a7", "#90caf9", "#ffb74d", "#e57373"]
CELL_LABELS = ["no such region", "acked", "fell back (ref)", "timed out", "declined"]
MAX_TABLE_ROWS = 40

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;color:#212121}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.verdict{display:inline-block;padding:4px 14px;border-radius:14px;color:#fff;font-weight:700;font-size:18px}
.meta{color:#555;font-size:13px} code,pre{background:#f4f4f4;border-radius:4px;font-size:12px}
pre{padding:8px;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;font-size:12.5px;width:100%} th,td{border:1px solid #e0e0e0;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#fafafa} .ok{color:#2e7d32;font-weight:600} .bad{color:#c62828;font-weight:700} .unk{color:#ef6c00;font-weight:700} .na{color:#757575}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px}
.stat{border:1px solid #e0e0e0;border-radius:6px;padding:6px 8px} .stat b{display:block;font-size:18px}
img{max-width:100%} .note{color:#666;font-size:12px}
"""


# -- inputs -------------------------------------------------------------------------------------


def _frames(tables_or_events, store, run_id: str | None) -> dict[str, pd.DataFrame] | None:
    """The run's tables as pandas frames: given (the frames its judgement was handed, pandas or Spark),
    built from a history (a list of events), or read back from ``store``."""
    if isinstance(tables_or_events, dict) and "checkpoints" in tables_or_events:
        frames = tables_or_events
        if not isinstance(frames["checkpoints"], pd.DataFrame):  # Spark DataFrames
            frames = {k: v.toPandas() for k, v in frames.items()}
        return frames
    if isinstance(tables_or_events, list):  # a history: events only
        art = tables_mod.RunArtifacts(run_id=run_id or "run", scenario_doc={}, events=tables_or_events, inventory=[],
                                      metadata_at_end={}, state_files={}, commits=[], transactions=[])
        return tables_mod.build_frames(art)
    if store is not None:
        return tables_mod.build_frames(tables_mod.read_run(store, run_id or _run_id(store)))
    return None


def _run_id(store) -> str:
    return store.run_prefix.rstrip("/").rsplit("/", 1)[-1]


def _detail(events: pd.DataFrame, kind: str) -> list[dict]:
    rows = events[events["kind"] == kind]
    out = []
    for _, r in rows.iterrows():
        d = json.loads(r["detail"]) if isinstance(r["detail"], str) else {}
        d.update(seq=int(r["seq"]), attempt=None if pd.isna(r["attempt"]) else int(r["attempt"]), kind=kind)
        out.append(d)
    return out


# -- plots --------------------------------------------------------------------------------------


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


@functools.lru_cache(maxsize=None)
def template(name: str):
    """A page template of ``regionchaos/templates`` (Jinja2, autoescaped), compiled once per process;
    the study page and the swarm report render through it."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("regionchaos", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    return env.get_template(name)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def import_in_background():
    """Import matplotlib (`_plt`, about 0.35 s of Python) on a daemon thread, which is returned: a caller that will
    build a report starts this before the Spark driver (its own thread then waits on the JVM), so the report's phase
    does not pay the import (a deep `smoke` run, bench/results/probes/README.md)."""
    thread = threading.Thread(target=_plt, name="regionchaos-report-imports", daemon=True)
    thread.start()
    return thread


def timeline_matrix(frames: dict) -> tuple[list[int], list[str], np.ndarray]:
    """(checkpoint ids, statuses, region x checkpoint cell codes) for the timeline heatmap."""
    cp = frames["checkpoints"].sort_values("checkpoint_id")
    decided = {d["checkpoint_id"]: d for d in _detail(frames["events"], Kind.CHECKPOINT_DECIDED)}
    ids = [int(c) for c in cp["checkpoint_id"]]
    statuses = [str(s) for s in cp["status"]]
    regions = [int(x) if not pd.isna(x) else 0 for x in cp["job_regions"]]
    height = max(regions + [1])
    m = np.zeros((height, len(ids)), dtype=int)
    for j, (cid, n) in enumerate(zip(ids, regions)):
        m[:n, j] = 1
        d = decided.get(cid)
        if d is None:
            continue
        for region in d.get("failed_regions") or []:
            if region < height:
                m[region, j] = 2 if d["status"] == "REGIONAL" else max(m[region, j], 1)
        for task in d.get("timed_out") or []:
            if task[2] < height:
                m[task[2], j] = max(m[task[2], j], 3)
        for task in d.get("declined") or []:
            if task[2] < height:
                m[task[2], j] = 4
    return ids, statuses, m


def violation_checkpoints(checks: list[dict]) -> dict[int, list[str]]:
    """Checkpoint id -> the failed rules (``invariant.rule``) whose examples name it: where the
    violations happened, as the failed checks' examples say."""
    out: dict[int, list[str]] = {}
    for c in checks:
        if c.get("success") is not False:
            continue
        for x in c.get("examples") or []:
            cid = x.get("checkpoint_id") if isinstance(x, dict) else None
            if isinstance(cid, (int, float)) and not isinstance(cid, bool) and not pd.isna(cid):
                rule = f"{c.get('name')}.{x.get('rule')}" if x.get("rule") else str(c.get("name"))
                names = out.setdefault(int(cid), [])
                if rule not in names:
                    names.append(rule)
    return dict(sorted(out.items()))


def plot_timeline(frames: dict, violations: dict[int, list[str]] | None = None) -> str | None:
    """The timeline heatmap; ``violations`` (`violation_checkpoints`) are marked above the
    checkpoints they name (a red triangle and a red outline of the column)."""
    ids, statuses, m = timeline_matrix(frames)
    if not ids:
        return None
    plt = _plt()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    height = m.shape[0]
    fig, (top, ax) = plt.subplots(2, 1, figsize=(12, 2.2 + min(6, 0.22 * height)), sharex=True,
                                  gridspec_kw={"height_ratios": [1, max(2, min(12, height / 2))]})
    for j, s in enumerate(statuses):
        top.bar(j, 1, color=STATUS_COLOURS.get(s, "#bdbdbd"), width=0.9)
    top.set_yticks([])
    top.set_ylabel("status", rotation=0, ha="right", va="center")
    handles = [Patch(color=c, label=s) for s, c in STATUS_COLOURS.items()]
    marked = [j for j, cid in enumerate(ids) if cid in (violations or {})]
    if marked:
        from matplotlib.lines import Line2D

        top.set_ylim(0, 1.6)
        top.plot(marked, [1.3] * len(marked), "v", color="#b71c1c", ms=7, markeredgecolor="#000", markeredgewidth=0.5)
        for j in marked:
            ax.axvspan(j - 0.5, j + 0.5, fill=False, edgecolor="#b71c1c", linewidth=1.2)
        handles.append(Line2D([], [], marker="v", color="#b71c1c", linestyle="none",
                              label="violation (checkpoint named by a failed rule)"))
    top.legend(handles=handles, ncol=5, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False)
    ax.imshow(m, aspect="auto", interpolation="nearest", cmap=ListedColormap(CELL_COLOURS), vmin=0, vmax=4,
              origin="lower")
    ax.set_ylabel("region")
    step = max(1, len(ids) // 25)
    ax.set_xticks(range(0, len(ids), step))
    ax.set_xticklabels([str(i) for i in ids[::step]], rotation=90, fontsize=7)
    ax.set_xlabel("checkpoint id")
    ax.legend(handles=[Patch(color=c, label=lbl) for c, lbl in zip(CELL_COLOURS[1:], CELL_LABELS[1:])], ncol=4,
              fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.18), frameon=False)
    return _png(fig)


def plot_depth(frames: dict, bound: int | None) -> str | None:
    cp = frames["checkpoints"]
    cp = cp[cp["completed"] == True].sort_values("checkpoint_id")  # noqa: E712
    if cp.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(12, 2.6))
    x = cp["checkpoint_id"].astype(int)
    ax.step(x, cp["ref_depth"].astype(float), where="mid", label="ref-chain depth", color="#1565c0")
    ax.plot(x, cp["staleness"].astype(float), ".", label="staleness (oldest handle, in checkpoint ids)", color="#ef6c00")
    if bound is not None:
        ax.axhline(bound, color="#c62828", linestyle="--", linewidth=1, label=f"max-consecutive-failures = {bound}")
    ax.set_xlabel("checkpoint id")
    ax.legend(fontsize=8, loc="upper left")
    return _png(fig)


def plot_records(frames: dict) -> str | None:
    commits, tx = frames["commits"], frames["transactions"]
    if commits.empty and tx.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(12, 2.6))
    if not tx.empty:
        t = tx.sort_values("checkpoint_id")
        first = t.groupby(["split", "start"], as_index=False)["checkpoint_id"].min()
        merged = t.merge(first, on=["split", "start", "checkpoint_id"])
        per = (merged["end"] - merged["start"]).groupby(merged["checkpoint_id"]).sum().cumsum()
        ax.step(per.index.astype(int), per.values, where="post", label="records pre-committed (first time)",
                color="#757575")
    if not commits.empty:
        c = commits.copy()
        c["n"] = c["end"] - c["start"]
        c["at"] = c["notified_checkpoint_id"].astype(float)
        per = c.groupby("at")["n"].sum().sort_index().cumsum()
        ax.step(per.index, per.values, where="post", label="records committed", color="#2e7d32")
    ax.set_xlabel("checkpoint id")
    ax.set_ylabel("records")
    ax.legend(fontsize=8, loc="upper left")
    return _png(fig)


def retained_series(frames: dict) -> pd.DataFrame:
    """Objects named by the retained checkpoints after each checkpoint decision."""
    ret, handles, cp = frames["retention"], frames["handles"], frames["checkpoints"]
    h = handles[handles["source"] == "completed"]
    sizes = dict(zip(frames["inventory"]["key"], frames["inventory"]["size_bytes"]))
    rows = []
    for _, c in cp.dropna(subset=["decided_seq"]).sort_values("decided_seq").iterrows():
        seq = c["decided_seq"]
        alive = ret[(ret["from_seq"] <= seq) & (ret["to_seq"].isna() | (ret["to_seq"] > seq))]["checkpoint_id"]
        keys = set(h[h["checkpoint_id"].isin(set(alive))]["object_key"])
        rows.append({"checkpoint_id": int(c["checkpoint_id"]), "retained_checkpoints": len(set(alive)),
                     "objects": len(keys), "bytes_known": sum(int(sizes.get(k, 0)) for k in keys)})
    return pd.DataFrame(rows)


def plot_retained(frames: dict) -> str | None:
    s = retained_series(frames)
    if s.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(12, 2.4))
    ax.step(s["checkpoint_id"], s["objects"], where="post", label="state objects named by retained checkpoints",
            color="#6a1b9a")
    ax.step(s["checkpoint_id"], s["retained_checkpoints"], where="post", label="retained checkpoints",
            color="#00838f")
    ax.set_xlabel("checkpoint id")
    ax.legend(fontsize=8, loc="upper left")
    return _png(fig)


def plot_requests(summary: dict) -> str | None:
    s3 = (summary.get("stats") or {}).get("s3") or {}
    by_op = dict(s3.get("requests_by_op") or {})
    dp = (s3.get("dataplane") or {}).get("s3_requests_by_op") or {}
    val = (summary.get("stats") or {}).get("validation_s3_requests") or {}
    if not (by_op or dp or val):
        return None
    plt = _plt()
    ops = sorted(set(by_op) | set(dp) | set(val))
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.35 * len(ops)))
    y = np.arange(len(ops))
    ax.barh(y - 0.25, [by_op.get(o, 0) for o in ops], height=0.25, label="run total", color="#455a64")
    ax.barh(y, [dp.get(o, 0) for o in ops], height=0.25, label="data plane", color="#90a4ae")
    ax.barh(y + 0.25, [val.get(o, 0) for o in ops], height=0.25, label="validation reads", color="#ffb74d")
    ax.set_yticks(y)
    ax.set_yticklabels(ops)
    ax.set_xlabel("requests")
    ax.legend(fontsize=8)
    return _png(fig)


# -- HTML ---------------------------------------------------------------------------------------


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _img(src: str | None, alt: str, element_id: str) -> str:
    if src is None:
        return f'<p class="note" id="{element_id}">no data for this plot</p>'
    return f'<img id="{element_id}" alt="{_e(alt)}" src="{src}">'


def _not_applicable(check: dict) -> bool:
    return check.get("state") == NOT_APPLICABLE


def _checks_table(checks: list[dict]) -> str:
    order = {False: 0, None: 1, True: 2}
    rows = []
    ranked = sorted(checks, key=lambda c: (_not_applicable(c), order.get(c.get("success"), 1), c.get("invariant") or 99))
    for c in ranked:
        s = c.get("success")
        cls, word = ("bad", "FAILED") if s is False else ("unk", "UNKNOWN") if s is None else ("ok", "holds")
        if _not_applicable(c):  # its suite does not judge this backend: neither passed nor failed
            cls, word = "na", "not applicable to this distribution"
        ex = ""
        if s is False:
            ex = "<br>".join(
                _e(f"{x.get('rule')}: checkpoint {x.get('checkpoint_id')}, region {x.get('region')}, "
                   f"subtask {x.get('subtask')}, {x.get('operator') or ''} split {x.get('split')}: {x.get('detail')}")
                for x in c.get("examples") or [])
        elif s is None:
            ex = _e(c.get("error") or c.get("reason"))
        rules = ", ".join(f"{k}={v}" for k, v in (c.get("rules") or {}).items() if v)
        anchor = html.escape("inv-" + str(c.get("name")), quote=True)
        rows.append(f"<tr id='{anchor}'><td>{_e(c.get('invariant'))}</td><td>{_e(c.get('name'))}</td><td class='{cls}'>{word}</td>"
                    f"<td>{_e(c.get('unexpected_count'))}</td><td>{_e(rules)}</td><td>{ex}</td></tr>")
    return ("<table id='checks'><tr><th>#</th><th>invariant suite</th><th>result</th><th>violations</th>"
            "<th>by rule</th><th>examples (FLIP terms) / why unknown</th></tr>" + "".join(rows) + "</table>")


def _events_table(frames: dict) -> str:
    kinds = (Kind.REGION_FAILOVER, Kind.TASKMANAGER_LOST, Kind.GLOBAL_RESTORE, Kind.GLOBAL_RESTART_FROM_SCRATCH,
             Kind.JOBMANAGER_CRASHED, Kind.JOBMANAGER_FAILOVER, Kind.RECORDS_LOST, Kind.HEAL_STARTED,
             Kind.SOURCES_EXHAUSTED, Kind.JOB_FINISHED, Kind.JOB_NOT_FINISHED, Kind.STORAGE_FAULT)
    ev = frames["events"]
    ev = ev[ev["kind"].isin(kinds)].sort_values("seq")
    if ev.empty:
        return "<p class='note'>no failover, rescale or restore in this run</p>"
    counts = ev["kind"].value_counts().to_dict()
    head = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    rows = []
    for _, r in ev.head(MAX_TABLE_ROWS).iterrows():
        d = json.loads(r["detail"]) if isinstance(r["detail"], str) else {}
        keep = {k: v for k, v in d.items() if k in ("cause", "region", "restore_from", "old_parallelism",
                                                      "new_parallelism", "recovered", "checkpoint_id", "type",
                                                      "taskmanager", "regions", "split", "start", "end", "fault",
                                                      "key", "orphans_deleted")}
        rows.append(f"<tr><td>{_e(r['attempt'])}</td><td>{_e(r['kind'])}</td><td>{_e(json.dumps(keep))}</td></tr>")
    more = len(ev) - MAX_TABLE_ROWS
    tail = f"<p class='note'>... and {more} more</p>" if more > 0 else ""
    return (f"<p>{_e(head)}</p><table id='failovers'><tr><th>attempt</th><th>event</th><th>details</th></tr>"
            + "".join(rows) + "</table>" + tail)


def _stats_grid(summary: dict, frames: dict | None) -> str:
    st = summary.get("stats") or {}
    items = [
        ("checkpoints triggered", st.get("triggered")), ("GLOBAL", st.get("global")), ("REGIONAL", st.get("regional")),
        ("ABORTED", st.get("aborted")), ("max ref-chain depth", st.get("max_ref_chain_depth")),
        ("max staleness", st.get("max_staleness")), ("max consecutive regional", st.get("max_consecutive_regional")),
        ("region failovers", st.get("region_failovers")), ("global failovers", st.get("global_failovers")),
        ("JobManager failovers", st.get("jm_failovers")), ("rescales", st.get("rescales")),
        ("records in", st.get("records_in")), ("records committed", st.get("records_committed")),
        ("records replayed", st.get("records_replayed")),
        ("S3 requests", (st.get("s3") or {}).get("requests")),
    ]
    cells = "".join(f"<div class='stat'>{_e(k)}<b>{_e('-' if v is None else v)}</b></div>" for k, v in items)
    walls = st.get("wall_seconds") or {}
    wall = ", ".join(f"{k} {v}s" for k, v in walls.items()) if isinstance(walls, dict) else ""
    return f"<div class='grid' id='stats'>{cells}</div>" + (f"<p class='note'>wall seconds: {_e(wall)}</p>" if wall else "")


def _not_applicable_line(checks: list[dict]) -> list[str]:
    """The suites that do not judge this run's backend, said apart (never as passed)."""
    names = [c["name"] for c in checks if _not_applicable(c)]
    if not names:
        return []
    return [f"<p id='not-applicable' class='note'>not applicable to this distribution ({len(names)} suites: the "
            f"FLIP-600 protocol's own records, which released Flink does not write): {_e(', '.join(names))}</p>"]


def _real_flink_section(summary: dict) -> str:
    """A real-Flink run: the cluster's faults as applied, the jobs, the restore point, the files seen."""
    st = summary.get("stats") or {}
    items = [("Flink", st.get("flink_version")), ("final state", st.get("final_state")), ("jobs", st.get("jobs")),
             ("TaskManager kills", st.get("taskmanager_kills")), ("JobManager kills", st.get("jobmanager_kills")),
             ("restored from", st.get("restored_from")), ("checkpoints copied", st.get("checkpoints_copied")),
             ("records", st.get("records"))]
    files = st.get("storage_files") or {}
    items += [(f"files {k}", v) for k, v in sorted(files.items()) if not isinstance(v, (list, dict))]
    cells = "".join(f"<div class='stat'>{_e(k)}<b>{_e('-' if v is None else v)}</b></div>" for k, v in items)
    faults = "".join(f"<tr><td>{_e(f.get('at_s'))}</td><td>{_e(f.get('kind'))}</td></tr>"
                     for f in (summary.get("drawn") or {}).get("faults") or [])
    why = f"<p class='bad'>unknown because: {_e(st['unknown_because'])}</p>" if st.get("unknown_because") else ""
    return ("<h2 id='real-flink'>Real Flink cluster</h2><p class='note'>artifacts under <code>flink/</code>: metadata "
            "dumps, the checkpoint inventory, REST history, the sink's committed files.</p>"
            f"<div class='grid'>{cells}</div>{why}<h3>Faults drawn by the seed (seconds after submission)</h3>"
            f"<table id='faults'><tr><th>at (s)</th><th>fault</th></tr>{faults}</table>")


def build_report(summary: dict, tables_or_events=None, *, store=None, spark=None, run_id: str | None = None) -> str:
    """The report page as a string. ``tables_or_events``: the run's tables (pandas or Spark
    frames), or its history (list of events); else they are read from ``store``."""
    run_id = run_id or summary.get("run_id")
    real = summary.get("backend") == "flink"  # a real cluster's run: no emulation tables to plot
    frames = None if real else _frames(tables_or_events, store, run_id)
    verdict = summary.get("verdict", "unknown")
    checks = summary.get("checks") or []
    failed = [c for c in checks if c.get("success") is False]
    unknown = [c for c in checks if c.get("success") is None and not _not_applicable(c)]
    expect = summary.get("expect") or {}
    bound = None
    if frames is not None and not frames["run"].empty:
        bound = int(frames["run"]["max_consecutive_failures"].iloc[0])
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>regionchaos {_e(run_id)}</title>"
             f"<style>{CSS}</style></head><body>"]
    parts.append(f"<h1>regionchaos run <code>{_e(run_id)}</code></h1>")
    parts.append(f"<p class='meta'>scenario <b>{_e(summary.get('scenario'))}</b>, seed {_e(summary.get('seed'))}, "
                 f"mutant {_e(summary.get('mutant') or 'none')}</p>")
    parts.append(f"<p>verdict <span id='verdict' class='verdict' style='background:"
                 f"{VERDICT_COLOURS.get(verdict, '#757575')}'>{_e(verdict.upper())}</span></p>")
    if failed:
        parts.append("<p id='failed'>failed invariants: <b>" + ", ".join(_e(c["name"]) for c in failed) + "</b></p>")
    if unknown:
        parts.append("<p>not evaluable: " + ", ".join(_e(c["name"]) for c in unknown) + "</p>")
    parts += _not_applicable_line(checks)
    if expect.get("verdict") == "invalid":
        parts.append(f"<p class='note'>This scenario is a {'negative control' if real else 'FINDING'}, expected "
                     f"invalid for <b>{_e(expect.get('invariant'))}</b>: {_e(expect.get('why'))}</p>")
    failed_rules = {f"{c['name']}.{r}" for c in failed for r in c.get("failed_rules") or ()}
    for f in summary.get("findings") or []:
        shown = sorted(failed_rules & set(f.get("rules", [])))  # a finding explains rules, not whole invariants
        if not shown:  # it applies to these settings, but did not show in this run: nothing to explain
            continue
        parts.append(f"<p class='note finding'>Finding <b>{_e(f.get('id'))}</b> showed in this run: "
                     f"{_e(f.get('title'))}; it explains <b>{_e(', '.join(shown))}</b> (FINDINGS.md)</p>")
    expected = summary.get("as_expected")
    if expected is not None:
        parts.append("<p id='as-expected'>as the scenario expects: "
                     + ("<b>yes</b>" if expected.get("ok") else f"<b class='bad'>no</b> ({_e(expected.get('why'))})")
                     + "</p>")
    outcome = summary.get("outcome") or {}
    if outcome:  # the policy table's row (README: Outcomes): the exit code and the DAG run's colour
        parts.append(f"<p id='outcome' data-kind='{_e(outcome.get('kind'))}'>outcome: "
                     f"<b class='{'ok' if outcome.get('green') else 'bad'}'>{_e(outcome.get('sentence'))}</b> "
                     f"(exit {_e(outcome.get('exit_code'))})</p>")
    if summary.get("error"):
        parts.append(f"<p class='bad'>error: {_e(summary['error'])}</p>")
    parts.append(f"<p class='meta'>replay: <code>{_e(summary.get('replay'))}</code></p>")
    parts.append("<h2>Invariants (PROTOCOL.md section 9)</h2>" + _checks_table(checks))
    if not real:  # a real run's counts are in its own section below
        parts.append("<h2>Summary</h2>" + _stats_grid(summary, frames))
    if frames is not None:
        violations = violation_checkpoints(checks)
        where = ""
        if violations:
            where = ("<p class='note' id='timeline-violations' data-checkpoints='"
                     + " ".join(str(cid) for cid in violations) + "'>violations marked (▼) at checkpoint "
                     + "; ".join(f"{cid}: {_e(', '.join(rules))}" for cid, rules in violations.items()) + "</p>")
        parts.append("<h2 id='timeline-title'>Checkpoint timeline</h2><p class='note'>top: the decision per checkpoint; "
                     "below: each pipeline region's part in it.</p>"
                     + _img(plot_timeline(frames, violations), "checkpoint timeline", "timeline") + where)
        parts.append("<h2>Ref-chain depth and staleness</h2>" + _img(plot_depth(frames, bound), "ref-chain depth", "depth"))
        parts.append("<h2>Failovers and rescales</h2>" + _events_table(frames))
        parts.append("<h2>Records in vs committed</h2>" + _img(plot_records(frames), "records", "records"))
        parts.append("<h2>Storage retained over time</h2>" + _img(plot_retained(frames), "retained storage", "retained"))
    elif real:
        parts.append(_real_flink_section(summary))
    else:
        parts.append("<p class='note' id='timeline'>no tables: the run's artifacts could not be read</p>")
    parts.append("<h2>S3 requests</h2>" + _img(plot_requests(summary), "S3 requests", "requests"))
    links = []
    if summary.get("datadocs"):
        links.append(f"Great Expectations Data Docs: <a href='../datadocs/index.html'>../datadocs/index.html</a> "
                     f"(<code>{_e(summary['datadocs'])}</code>)")
    if links:
        parts.append("<h2>More</h2><p>" + "<br>".join(links) + "</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
