"""Run ids keyed by the Airflow run, result rows, and the DAG-level outcomes.

In:  Airflow dag/run ids, runner summaries (the ``summary.json`` contract of DESIGN.md) and what
     Airflow knows of a run beside it (``airflow.json``: `AIRFLOW_KEY`), folder names found under the
     runs prefix, swarm results.
Out: storage-safe run ids (`run_key`), whether a stored folder is shown and served as a run
     (`listable_run_id`), a plugin page's address inside Airflow's UI (`in_airflow`), why a stored
     summary cannot be shown (`summary_problem`), compact result rows (`result_row`, each with its outcome
     by the one policy table), and the lists of problems that fail the nightly and swarm summary tasks
     (`judge_nightly`, `judge_swarm`, `judge_explorations`: the runs', the swarm's and the explorations'
     outcomes, `regionchaos.judge.policy`). Pure functions: no Airflow, no storage.

The DAG files import this module while they are parsed: what imports boto3 or pyarrow (`regionchaos.swarm`)
is imported inside the function that needs it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal
from urllib.parse import quote

import pydantic

from regionchaos.judge import Judgement, RunOutcome, run_outcome, swarm_outcome

_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
AIRFLOW_KEY = "airflow.json"  # beside a run's summary.json: the DAG run that made it and its note
RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
PLUGIN_PREFIX = "/regionchaos"
AIRFLOW_VIEW_ROUTE = "chaos"  # the nav view's url_route: Airflow's UI shows the runs view at /plugin/chaos
LISTED_RUN_ID_MAX_CHARS = 255
# Letters, marks, digits, punctuation and symbols of any script; no control, format (bidi
# overrides, zero-width), separator other than the plain space, private-use, surrogate or
# unassigned code point.
_LISTED_CATEGORIES = frozenset("LMNPS")
_NOT_IN_A_LISTED_ID = frozenset("/\\%")


class _StoredCheck(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="allow")
    name: str
    success: bool | None
    failed_rules: list[str] | None = None


class _StoredSummary(pydantic.BaseModel):
    """The fields of a stored summary the view reads (`summary_problem`)."""

    model_config = pydantic.ConfigDict(strict=True, extra="allow")
    run_id: str
    scenario: str | None
    seed: int | None
    mutant: str | None
    verdict: Literal["valid", "invalid", "unknown"]
    checks: list[_StoredCheck]
    stats: dict[str, Any] | None = None


def listable_run_id(run_id: str) -> bool:
    """Whether a folder name under the runs prefix is listed and served as a run.

    Wider than `RUN_ID_RE` (what new runs are named): runs stored under other names, such
    as non-ASCII ones, are still shown. Never a path: no ``/``, ``\\`` or ``%``, no leading
    ``.`` (so no ``.`` or ``..``), no leading space, at most `LISTED_RUN_ID_MAX_CHARS`.
    """
    if not run_id or len(run_id) > LISTED_RUN_ID_MAX_CHARS or run_id[0] in ". ":
        return False
    return all(ch == " " or (unicodedata.category(ch)[0] in _LISTED_CATEGORIES and ch not in _NOT_IN_A_LISTED_ID)
               for ch in run_id)


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
    """The checks that did not pass (failed, or no result), as the runs view marks them."""
    return [c.get("name", "?") for c in summary.get("checks", []) if not c.get("success", False)]


def in_airflow(path: str) -> str:
    """The address inside Airflow's UI of a page of the plugin (``path``: ``/regionchaos/...``).

    Airflow 3.3 shows the plugin's nav view at ``/plugin/<url_route>`` and appends the address of
    the page in its frame (``/plugin/chaos/regionchaos/runs/RUN/report``); opened afresh, that
    address shows the same page in the same frame. The one address of a report or Data Docs page
    that the "Chaos report" link, the DAG runs' notes and the runs view all use."""
    return f"/plugin/{AIRFLOW_VIEW_ROUTE}{path}"


def view_links(run_id: str) -> dict[str, str]:
    """Where the plugin serves a run's report page (an address of its own, the stored report
    framed below the run's facts), its Data Docs (rendered: a redirect to a capability address),
    and its summary (relative to the API root; the run id percent-encoded as one path segment)."""
    base = f"{PLUGIN_PREFIX}/runs/{quote(run_id, safe='')}"
    return {
        "report_view": f"{base}/report",
        "datadocs_view": f"{base}/datadocs",
        "summary_view": f"{base}/summary.json",
    }


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def run_times(summary: dict[str, Any], modified: str, timing: Any = None) -> dict[str, Any]:
    """When a run started and how long it took: ``duration_s``, the sum of its phases' wall
    seconds (``stats.wall_seconds``: emulate, validate, report) from the run's timing document
    ``timing`` (``timing/wall_seconds.json``, docs/ARTIFACTS.md: runs keep wall-clock values out of
    ``summary.json``), or from the summary itself (runs written before that); ``started``, the
    summary's own ``started_at`` if it has one, else the time its summary was written (``modified``,
    ISO 8601) less the duration; ``ended`` that time. Missing values are None."""
    from datetime import datetime, timedelta

    def stats_of(doc: Any) -> dict:
        return doc["stats"] if isinstance(doc, dict) and isinstance(doc.get("stats"), dict) else {}

    walls = stats_of(timing).get("wall_seconds") or stats_of(summary).get("wall_seconds")
    duration = round(sum(v for v in walls.values() if _number(v)), 1) if isinstance(walls, dict) and walls else None
    ended = started = None
    try:
        ended = datetime.fromisoformat(modified) if modified else None
    except ValueError:
        ended = None
    if isinstance(summary.get("started_at"), str):
        started = summary["started_at"]
    elif ended is not None and duration is not None:
        started = (ended - timedelta(seconds=duration)).isoformat()
    return {"started": started, "ended": ended.isoformat() if ended else None, "duration_s": duration}


def duration_text(seconds: float | None) -> str:
    """``1 h 02 min``, ``3 min 05 s``, ``12.4 s``; empty for None."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def dag_run_link(doc: dict[str, Any], airflow_root: str = "") -> str | None:
    """The Airflow UI's page of the DAG run that made a run: ``doc`` is its ``airflow.json`` (``{"dag_id",
    "dag_run_id"}``), or a summary that names it (``airflow``, as runs stored before ``airflow.json`` did);
    None when neither does."""
    where = doc.get("airflow") if isinstance(doc.get("airflow"), dict) else doc
    dag_id, dag_run_id = where.get("dag_id"), where.get("dag_run_id")
    if not (isinstance(dag_id, str) and isinstance(dag_run_id, str) and dag_id and dag_run_id):
        return None
    return f"{airflow_root}/dags/{quote(dag_id, safe='')}/runs/{quote(dag_run_id, safe='')}"


def checkpoint_success_rate(summary: dict[str, Any]) -> float | None:
    """Completed / triggered checkpoints of a run, as its validated history counts them
    (``stats.history_counts``; the emulator's own counts only if those are missing)."""
    stats = summary.get("stats") or {}
    counts = (stats.get("history_counts") or stats) if isinstance(stats, dict) else None
    if not isinstance(counts, dict):
        return None
    triggered, completed = counts.get("triggered"), (counts.get("global", 0), counts.get("regional", 0))
    if not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in (triggered, *completed)):
        return None
    if not triggered:
        return None
    return round(sum(completed) / triggered, 4)


def summary_problem(summary: Any) -> str | None:
    """Why a stored summary cannot be shown as a run, in a sentence; None if it can.

    A summary is shown when it is a JSON object with the fields of the ``summary.json`` contract
    the view reads (DESIGN.md): ``run_id``, ``scenario``, ``mutant`` (text or null), ``seed`` (an
    integer or null), ``verdict`` (valid, invalid or unknown) and ``checks`` (objects with a
    ``name`` and a ``success`` of true, false or null).
    """
    if not isinstance(summary, dict):
        return f"summary.json is not a JSON object but {_json_kind(summary)}"
    try:
        _StoredSummary.model_validate(summary)
    except pydantic.ValidationError as exc:
        first, more = exc.errors()[0], exc.error_count() - 1
        where = ".".join(str(part) for part in first["loc"])
        return f"summary.json field {where}: {first['msg']}" + (f" (and {more} more)" if more else "")
    return None


def _json_kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


def nightly_key(row: dict[str, Any]) -> str | None:
    """The nightly DAG run a run belongs to (the Airflow run id as `run_key` spelled it in
    ``nightly-<dag run>-<scenario>``), or None for a run of another DAG or the CLI."""
    run_id, scenario = row.get("run_id") or "", row.get("scenario") or ""
    suffix = "-" + run_key(scenario) if scenario else ""
    if not run_id.startswith("nightly-") or not suffix or not run_id.endswith(suffix):
        return None
    return run_id[len("nightly-"):-len(suffix)] or None


def result_row(summary: dict[str, Any], airflow: dict[str, Any] | None = None) -> dict[str, Any]:
    """The compact row of one run: what the summary tasks and the UI list show (``checks``:
    invariant -> True passed, False failed, None no result), with its judgement's fields (read back by
    `regionchaos.judge.Judgement.from_summary`) and its ``outcome`` (the one policy table). ``airflow``:
    the run's ``airflow.json`` (its DAG run), when the caller read it."""
    run_id = summary.get("run_id", "")
    judged = Judgement.from_summary(summary)
    return {
        "run_id": run_id,
        "scenario": summary.get("scenario"),
        "seed": summary.get("seed"),
        "mutant": summary.get("mutant"),
        **{k: v for k, v in judged.fields().items() if k not in ("findings", "as_expected")},
        "failed": failed_invariants(summary),
        "checks": {c.get("name", "?"): c.get("success") for c in summary.get("checks", [])},
        "checkpoint_success_rate": checkpoint_success_rate(summary),
        "report": summary.get("report"),
        "replay": summary.get("replay"),
        "outcome": run_outcome(judged).as_dict(),
        "dag_run": dag_run_link(airflow if isinstance(airflow, dict) else summary),
        **(view_links(run_id) if RUN_ID_RE.match(run_id or "") else {}),
    }


def judge_nightly(plan: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[str]:
    """Problems of a nightly run: an empty list means the nightly run passes.

    Each run is held to the one outcome table (`regionchaos.judge.policy.run_outcome` of its row: green
    when valid, or showing a recorded finding where its scenario allows it); a run without a row (its
    task failed) is a problem, but for a run the plan skipped (``skip``: a real-Flink scenario without a
    distribution), listed by `skipped_runs`.
    """
    by_run = {row.get("run_id"): row for row in rows if row}
    problems = []
    for entry in plan:
        name, run_id = entry["scenario_name"], entry["run_id"]
        row = by_run.get(run_id)
        if row is None and entry.get("skip"):
            continue
        if row is None:
            problems.append(f"{name}: no result (its task failed), run {run_id}")
            continue
        outcome = run_outcome(row)
        if not outcome.green:
            problems.append(f"{name}: {outcome.sentence}; replay: {row.get('replay')}")
    return problems


def skipped_runs(plan: list[dict[str, Any]]) -> list[str]:
    """The plan's runs skipped on purpose, each with its reason (the nightly's note says them)."""
    return [f"{entry['scenario_name']}: {entry['skip']}" for entry in plan if entry.get("skip")]


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


SEED_FIELDS = ("seed", "run_id", "verdict", "failed", "unknown", "failed_rules", "explained", "standing", "why",
               "findings_shown", "kind", "replay", "error")


def swarm_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per seed of a fast swarm's result (`regionchaos.swarm.fast_swarm`): its judgement's fields
    (verdict, failed and unknown invariants, standing, the findings that showed), replay lines, and
    ``known_finding`` for a seed that shows only a recorded finding."""
    from regionchaos.swarm import replay_deep_line  # here: regionchaos.swarm imports boto3 and pyarrow

    known = {k["seed"] for k in result.get("known_findings", [])}
    rows = []
    for run in result["runs"]:
        row = {k: run.get(k) for k in SEED_FIELDS}
        row.update(known_finding=run["seed"] in known, swarm_id=result["swarm_id"],
                   replay_deep=replay_deep_line(result["swarm_id"], run["seed"]))
        rows.append(row)
    return rows


def judge_swarm(rows: list[dict[str, Any]], *, mutant: str | None, seeds: int) -> tuple[RunOutcome, list[str]]:
    """A swarm's outcome over its seeds' rows (`regionchaos.judge.policy.swarm_outcome`: the worst of its
    seeds', a seed without a row unknown; with a mutant, caught or not caught, red either way) and its
    problems: an empty list means the swarm passes."""
    outcome = swarm_outcome(rows, mutant=mutant, seeds=seeds)
    return outcome, [] if outcome.green else list(outcome.problems)


MAX_EXPLORATION_PROBLEMS = 3  # problem lines per exploration (each names a representative and its replay line)


def exploration_row(finding: str, summary: dict[str, Any]) -> dict[str, Any]:
    """What the nightly keeps of one exploration of a finding's scenario (`regionchaos.explore.summary`): its
    size, proof statement, whether a representative showed the finding, and its outcome (the policy's)."""
    return {"finding": finding, "scenario": summary["scenario"], "overrides": summary["overrides"],
            "max_checkpoints": summary["max_checkpoints"], "states": summary["states"],
            "schedules": summary["schedules"], "proof": summary["proof_statement"],
            "found": finding in summary["findings"], "shortest": summary["findings"].get(finding),
            "outcome": summary["outcome"]}


def judge_explorations(rows: list[dict[str, Any]] | None) -> list[str]:
    """The problems of the nightly's explorations (`exploration_row`): one that is not green by the outcome table
    (its representatives as a swarm's seeds), one whose representatives no longer show its finding, and no
    result at all (the task failed). An empty list means they pass."""
    if rows is None:
        return ["exploration of the findings' scenarios: no result (its task failed)"]
    out = []
    for row in rows:
        what = f"exploration of {row['scenario']} for {row['finding']}"
        if not row["outcome"]["green"]:
            out += [f"{what}: {line}" for line in row["outcome"]["problems"][:MAX_EXPLORATION_PROBLEMS]]
        if not row["found"]:
            out.append(f"{what}: no representative shows {row['finding']} within {row['max_checkpoints']} attempts")
    return out
