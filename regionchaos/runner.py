"""One chaos run, end to end: scenario + seed -> emulation -> validation -> report.

In:  a Scenario, an optional mutant, where storage is (None = an embedded S3
     server for the duration), an optional Spark session.
Out: the summary dict of DESIGN.md (``run_id, scenario, seed, mutant, verdict,
     checks, stats, report, replay``), also written to ``summary.json`` under
     the run's prefix, without its wall-clock values (``timing/wall_seconds.json``:
     `write_summary`), built once from the run's `Judgement`; its ``outcome`` (the exit code
     among it) follows the one policy table (`regionchaos.judge.policy`).

One run at a time per run id: the run holds the run id's lease (`regionchaos.storage.lease`)
from before it writes anything until its summary is written, so a second run of the same id
(two people, a retried Airflow task beside a live one) is refused (`RunIdBusy`, exit 3) instead
of clearing the first one's prefix under it. A run that crashes prints one line of reason; the
whole traceback goes to ``LOCAL_DIR/RUN_ID/error.log`` (and ``summary.json``'s ``traceback``).

Data flows one way: nothing downstream reaches back upstream.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shlex
import shutil
import subprocess
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.markup import escape

from . import tables as tables_mod
from .dataplane import PUT_THREADS, S3Persistence
from .emulator import Emulation, RunResult
from .flink.judging import judge_stored
from .flink.run import draw_faults, run_in_scratch, run_stats
from .gcpause import paused, release_memory
from .judge import Judgement, crashed, judgement_of, run_outcome
from .judge.policy import worst_of
from .judge.engine import judging_session
from .judge.runs import judge_deep_run
from .nemesis import Nemesis
from .report import build_report, import_in_background
from .run import Verdict, set_args
from .run.summary import build_summary
from .run.ids import check_run_id
from .scenario import MUTANTS, Scenario, ScenarioError, check_mutant, from_dict, require_emulation
from .shape import shaped
from .spark import get_spark
from .storage import RunLease, StorageConfig, ensure_storage
from .storage.memory import MemoryStore
from .storage.s3 import ObjectStore, StorageError, StorageUnreachable, check_bucket

# Artifacts whose content carries wall-clock values (docs/ARTIFACTS.md): this run's seconds per phase,
# GX's validation results (its run time; the judge's seconds per phase) and Data Docs. Everything
# else under a run's prefix is the same bytes for the same scenario, seed and mutant; their S3 traffic
# (and the lease's) is counted apart (``stats.s3_apart``, in TIMING_KEY), not in ``stats.s3``.
TIMING_KEY = "timing/wall_seconds.json"
WALL_CLOCK_PREFIXES = ("timing/", "validation/", "datadocs/")
BULK_SUBTASK_CHECKPOINTS = 10_000  # from here on a run's memory is handed back between its phases (gcpause)


def protocol_stats(stats: dict) -> dict:
    """What the emulation counted (checkpoints, failovers, records), without its timings: a
    seed's swarm run and its deep replay must agree on every one of these."""
    return {k: v for k, v in stats.items() if not k.startswith("wall_seconds") and k != "s3_apart"}


def wall_clock_part(summary: dict) -> tuple[dict, dict]:
    """(the summary without its wall-clock values, those values at the same paths): the top-level
    ``stats.wall_seconds*`` and ``stats.s3_apart``, and the data plane's ``stats.s3.dataplane.wall_seconds*``."""
    stats = dict(summary.get("stats") or {})
    timing = {k: stats.pop(k) for k in list(stats) if k.startswith("wall_seconds") or k == "s3_apart"}
    s3 = stats.get("s3")
    if isinstance(s3, dict) and isinstance(s3.get("dataplane"), dict):
        dataplane = dict(s3["dataplane"])
        walls = {k: dataplane.pop(k) for k in list(dataplane) if k.startswith("wall_seconds")}
        stats["s3"] = {**s3, "dataplane": dataplane}
        if walls:
            timing["s3"] = {"dataplane": walls}
    return {**summary, "stats": stats}, {"run_id": summary.get("run_id"), "stats": timing}


def write_summary(store, summary: dict) -> None:
    """``summary.json`` without wall-clock values, which go to ``timing/wall_seconds.json`` (first)."""
    protocol, timing = wall_clock_part(summary)
    store.put(TIMING_KEY, json.dumps(timing, indent=1, sort_keys=True, default=str).encode())
    store.put("summary.json", json.dumps(protocol, indent=1, sort_keys=True, default=str).encode())


def default_run_id(scenario: Scenario, mutant: str | None) -> str:
    """Keyed by what the run is, never by the clock: the same scenario, seed
    and mutant always get the same id, so a re-run is idempotent."""
    digest = hashlib.sha256(json.dumps(scenario.to_dict(), sort_keys=True).encode()).hexdigest()[:8]
    return f"{scenario.name}-s{scenario.seed}-{mutant or 'correct'}-{digest}"


def replay_line(scenario_ref: str, seed: int, overrides: dict[str, Any] | None, mutant: str | None,
                extra: list[str] | None = None) -> str:
    parts = ["regionchaos", "run", "--scenario", scenario_ref, "--seed", str(seed)]
    parts += set_args({key: value for key, value in (overrides or {}).items() if key != "seed"})
    if mutant:
        parts += ["--mutant", mutant]
    return shlex.join(parts + (extra or []))


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of this checkout (once per process: a swarm records it for every seed)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def storage_for(storage):
    """Context manager yielding a StorageConfig: the given endpoint (checked), or
    an embedded S3 server on 127.0.0.1 for the duration."""
    return ensure_storage(storage or StorageConfig())


def drawn_parameters(scenario: Scenario) -> dict:
    """What the seed draws before the run: the emulation's parameters (`Nemesis`), or a real run's faults."""
    if scenario.backend == "flink":
        return {"faults": draw_faults(scenario.flink_run_spec)}
    return Nemesis(scenario).drawn_parameters()


def prepare_run(store, scenario: Scenario, *, run_id: str, mutant: str | None, replay: str) -> None:
    """Clear the run's prefix (a re-run of a run id is idempotent) and record
    what the run is: the scenario, the seed's drawn parameters, the commit and
    the replay line."""
    store.delete_many(store.list_keys(""))
    store.put("scenario.json", json.dumps({
        "run_id": run_id, "scenario": scenario.to_dict(), "seed": scenario.seed, "mutant": mutant,
        "drawn": drawn_parameters(scenario), "git_commit": git_commit(), "replay": replay,
    }, sort_keys=True, indent=1).encode())


def emulate(scenario: Scenario, *, store, mutant: str | None = None, spark=None, progress=None,
            threads: int | None = None, record_schedule: bool = False) -> tuple[RunResult, Any]:
    """The deep run: control plane in the driver, data plane in Spark tasks (``spark=None``: in
    this process; ``threads=1``: no PUT threads, for in-memory stores). ``record_schedule``: the
    result also lists every fault as explicit-schedule entries (`regionchaos.schedule.pin`)."""
    require_emulation(scenario, "the emulation")

    persistence = S3Persistence(store, scenario, mutant=mutant, spark=spark, threads=threads or PUT_THREADS)
    emulation = Emulation(scenario, persistence, mutant=mutant, progress=progress)
    emulation.nemesis.recording = record_schedule
    with paused():  # millions of small objects that live until the run ends (regionchaos.gcpause)
        return emulation.run(), persistence


def start(store, scenario: Scenario, *, run_id: str, mutant: str | None, replay: str, spark=None, progress=None,
          threads: int | None = None, record_schedule: bool = False) -> tuple[RunResult, Any]:
    """The start of every run, wherever it runs (a deep run, the swarms, the study, the emulate spark
    job): its prefix cleared and described (`prepare_run`), then the emulation (`emulate`), or for
    ``backend: flink`` the real cluster's run (`real_flink`: no persistence, None)."""
    scenario = shaped(scenario)  # a swarm seed's job shape, drawn once, before anything is written
    prepare_run(store, scenario, run_id=run_id, mutant=mutant, replay=replay)
    if scenario.backend == "flink":
        return real_flink(scenario, store), None
    return emulate(scenario, store=store, mutant=mutant, spark=spark, progress=progress, threads=threads,
                   record_schedule=record_schedule)


def real_flink(scenario: Scenario, store) -> RunResult:
    """A ``backend: flink`` run (`regionchaos.flink.run`): a loopback cluster under the seed's faults, its raw
    artifacts under the run's prefix (``flink/``), every process it started stopped before this returns."""
    done = run_in_scratch(scenario.flink_run_spec, store)
    return RunResult(events=done["events"], stats=run_stats(done), drawn={"faults": done["faults_planned"]})


def emulate_in_memory(scenario, mutant: str | None, *, store=None, replay: str = "-",
                      record_schedule: bool = False, rows: bool = True):
    """Emulate ``scenario`` on an in-memory store (``store``, or a fresh `MemoryStore` under its
    default run id): (the `RunResult`, its table rows, or None without ``rows``). The swarm's seeds,
    the shrinker, the study and `regionchaos.schedule.pin` start their runs here."""
    require_emulation(scenario, "an in-memory emulation (swarm, shrink, study, pin)")
    run_id = default_run_id(scenario, mutant)
    store = store if store is not None else MemoryStore.for_run(None, run_id)
    result, _ = start(store, scenario, run_id=run_id, mutant=mutant, replay=replay, threads=1,
                      record_schedule=record_schedule)
    return result, tables_mod.build_rows(tables_mod.read_run(store, run_id)) if rows else None


def run(scenario: Scenario, *, mutant: str | None = None, storage=None, run_id: str | None = None, spark=None,
        console=None, replay: str | None = None, overrides: dict[str, Any] | None = None,
        local_dir: str | Path | None = None) -> dict:
    """Run one scenario; with ``compare_regional_off`` also the same seed with
    regional checkpoints off (A/B), judged separately and compared."""
    check_run_id(run_id or default_run_id(scenario, mutant), "run_id")  # before any write (as _run_one picks it)
    summary = _run_one(scenario, mutant=mutant, storage=storage, run_id=run_id, spark=spark, console=console,
                       replay=replay, overrides=overrides, local_dir=local_dir)
    if not scenario.compare_regional_off:
        return summary
    off = scenario.model_copy(update={
        "flink": scenario.flink.model_copy(update={"region_enabled": False}), "compare_regional_off": False})
    storage = storage if storage is not None and storage.endpoint_url else None
    if console is not None:
        console.print("[bold]B side[/bold]: the same seed with regional checkpoints off")
    other = _run_one(off, mutant=mutant, storage=storage, run_id=(run_id or default_run_id(scenario, mutant)) + "-regional-off",
                     spark=spark, console=console, replay=summary["replay"], overrides=overrides, local_dir=local_dir)
    comparison = {"regional": _ab_metrics(summary), "global_only": _ab_metrics(other),
                  "global_only_run_id": other["run_id"], "global_only_verdict": other["verdict"]}
    both = worst_of([run_outcome(summary), replace(run_outcome(other), sentence="regional checkpoints off (B side): "
                                                                                 + run_outcome(other).sentence)])
    return {**summary, "comparison": comparison, "verdict": Verdict.merge([summary["verdict"], other["verdict"]]),
            "outcome": both.as_dict()}


def _ab_metrics(summary: dict) -> dict:
    st = summary["stats"]
    triggered = max(1, st.get("triggered", 0))
    return {
        "checkpoint_success_rate": round((st.get("global", 0) + st.get("regional", 0)) / triggered, 3),
        "aborted": st.get("aborted", 0),
        "records_replayed": st.get("records_replayed", 0),
        "records_committed": st.get("records_committed", 0),
        "retained_bytes_end": st.get("retained_bytes_end"),
        "s3_requests": st.get("s3", {}).get("requests"),
    }


def _run_one(scenario: Scenario, *, mutant: str | None = None, storage=None, run_id: str | None = None, spark=None,
        console=None, replay: str | None = None, overrides: dict[str, Any] | None = None,
        local_dir: str | Path | None = None) -> dict:
    mutant = check_mutant(mutant)
    if mutant and scenario.backend != "emulation":
        raise ScenarioError([("mutant", f"{mutant!r} breaks the emulated protocol; a backend flink run has none")],
                            what="input")
    run_id = run_id or default_run_id(scenario, mutant)
    replay = replay or replay_line(scenario.name, scenario.seed, overrides, mutant)
    say = console.print if console is not None else (lambda *a, **k: None)
    for warning in scenario.warnings:
        say(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    walls: dict[str, float] = {}
    with storage_for(storage) as config, paused():  # the whole run: see regionchaos.gcpause
        store = ObjectStore.for_run(config, run_id)
        store.count_apart(WALL_CLOCK_PREFIXES)
        store.check_ready()  # unreachable endpoint / missing bucket: nothing written
        # another run of this run id: RunIdBusy (exit 3) before anything is written or deleted
        with RunLease(store, run_id) as lease:
            real = scenario.backend == "flink"  # Spark starts once the cluster is stopped (memory: both ~1.3 GB)
            phase = "real_flink" if real else "emulate"
            if spark is None and not real:
                # the judge's set-up goes on while the JVM starts and the run is emulated; not for a big run,
                # where GX's memory would be resident through the emulation's peak (large: about 100 MiB more,
                # bench/results/probes/README.md), for ~2 s of ~105
                small = scenario.checkpoints * scenario.topology.parallelism < BULK_SUBTASK_CHECKPOINTS
                if small:  # the report's imports go on meanwhile too (report.import_in_background)
                    import_in_background()
                    spark = judging_session()
                else:  # a session for this one big run (regionchaos.spark.BULK_DRIVER_MEMORY)
                    spark = get_spark(bulk=True)
            started = time.perf_counter()
            say(f"[bold]{'real Flink' if real else 'emulate'}[/bold] {escape(scenario.name)} seed={scenario.seed} "
                f"mutant={escape(mutant or 'none')} run_id={escape(run_id)}",
                highlight=False)  # user text: never read as rich markup
            try:
                result, persistence = start(store, scenario, run_id=run_id, mutant=mutant, replay=replay, spark=spark,
                                            progress=_progress_printer(say, scenario))
            except Exception as exc:  # an emulator (or cluster) crash judges nothing: unknown, never invalid
                walls[phase] = round(time.perf_counter() - started, 3)
                return _crashed(store, config, scenario, mutant, run_id, replay, walls, phase, exc, local_dir,
                                lease)
            walls[phase] = round(time.perf_counter() - started, 3)
            say(f"[bold]validate[/bold] {len(result.events)} events")
            if spark is None:
                spark = get_spark()
            stats, drawn = dict(result.stats), result.drawn
            del result  # validation reads the run back from storage, never from the emulation's memory
            if stats.get("triggered", 0) * scenario.topology.parallelism >= BULK_SUBTASK_CHECKPOINTS:
                release_memory()  # a big run's objects (a cycle through the Emulation) go now, not at its end
            summary = _judge(store, config, scenario, mutant, run_id, replay, spark, stats, drawn,
                             walls, persistence, local_dir, lease)
    return summary


def finish(run_id: str, *, storage, overrides: dict[str, Any] | None = None, spark=None, console=None,
           local_dir: str | Path | None = None) -> dict:
    """Validate and report a run that was emulated elsewhere (``spark_jobs/emulate.py``
    on a cluster): everything it needs is under the run's prefix (`finish_stored`)."""
    with storage_for(storage) as config, paused():
        return finish_stored(config, run_id, overrides=overrides, spark=spark, local_dir=local_dir)


def finish_stored(config, run_id: str, *, overrides: dict[str, Any] | None = None, spark=None, docs: bool = True,
                  local_dir: str | Path | None = None) -> dict:
    """`finish` on storage that is already there (``config``: its endpoint is used as it is; the
    spark job ``spark_jobs/validate.py`` comes here). Holds the run id's lease while it judges:
    `RunIdBusy` while ``spark_jobs/emulate.py`` (or another finish) holds it. ``docs``: also GX's
    Data Docs."""
    store = ObjectStore.for_run(config, run_id)
    store.count_apart(WALL_CLOCK_PREFIXES)
    store.check_ready()
    with RunLease(store, run_id) as lease:
        doc = json.loads(store.get("scenario.json"))
        scenario = from_dict(doc["scenario"])
        if spark is None:
            spark = judging_session()
        replay = doc.get("replay") or replay_line(scenario.name, scenario.seed, overrides, doc.get("mutant"))
        return _judge(store, config, scenario, doc.get("mutant"), run_id, replay, spark, {}, doc.get("drawn", {}), {},
                      None, local_dir, lease, docs=docs)


def _judge(store, config, scenario, mutant, run_id, replay, spark, stats, drawn, walls, persistence, local_dir,
           lease=None, *, docs: bool = True) -> dict:
    """judge -> report -> summary.json (and a local mirror), each once, the report and the summary from the
    judgement. ``persistence`` is the emulation's (its data-plane request counts go into the S3 totals),
    None if it ran elsewhere. ``lease``: the run id's (`RunLease`); if it was taken over meanwhile nothing
    more is written (the prefix is another run's now) and the run is unknown. A judging that raises is
    unknown, never valid: its report and summary still say so (`_finish`)."""
    started = time.perf_counter()
    failure = None
    try:
        judged = judgement_of_run(spark, store, run_id, scenario, mutant, docs=docs)
    except Exception as exc:  # a check that could not run is unknown, never valid
        failure = ("validate", exc)
        judged = crashed(run_id, f"validate failed: {one_line_reason(exc)}", scenario=scenario, mutant=mutant)
    walls["validate"] = round(time.perf_counter() - started, 3)
    facts = {"config": config, "replay": replay, "stats": stats, "drawn": drawn,
             "datadocs": docs and failure is None}  # validation uploads its Data Docs last
    more = {"s3": _s3_stats(store, persistence),  # emulation and validation; the report plots it
            "s3_apart": store.stats_apart.as_dict()}  # the lease, validation's wall-clock artifacts
    if lease is not None and lease.lost:
        return _lease_lost(judged, scenario, lease, facts)
    started = time.perf_counter()
    report_error = None
    try:
        page = build_summary(judged, scenario, more_stats=more, **facts)  # as summary.json will say, less the walls
        html = build_report(wall_clock_part(page)[0], judged.frames, store=store, spark=spark)
        store.put("report/index.html", html.encode() if isinstance(html, str) else html)
    except Exception as exc:
        report_error = one_line_reason(exc)
    walls["report"] = round(time.perf_counter() - started, 3)
    if lease is not None and lease.lost:
        return _lease_lost(judged, scenario, lease, facts)
    return _finish(store, scenario, judged, facts, more_stats={**more, "wall_seconds": walls},
                   report_error=report_error, failure=failure, local_dir=local_dir, lease=lease)


def judgement_of_run(spark, store, run_id: str, scenario: Scenario, mutant: str | None, *, docs: bool) -> Judgement:
    """The run judged from its stored artifacts: the emulation's tables (`regionchaos.judge.runs.judge_deep_run`),
    or a real run's (`regionchaos.flink.judging.judge_stored`, backend ``flink``: the suites that apply to it);
    results under ``validation/``, Data Docs under ``datadocs/``."""
    if scenario.backend == "flink":
        return judge_stored(spark, store, run_id, scenario=scenario, docs=docs, prefix="")
    return judge_deep_run(spark, store, run_id, scenario=scenario, mutant=mutant, docs=docs)


def _lease_lost(judged: Judgement, scenario: Scenario, lease, facts: dict) -> dict:
    """This run stalled past its lease and another run took the run id over: write nothing more; unknown."""
    lost = judgement_of(judged.run_id, judged.checks, scenario=scenario, mutant=judged.mutant,
                        error=f"{lease.lost}; nothing more was written (its artifacts may be mixed with the other "
                              "run's)")
    return build_summary(lost, scenario, report=False, **{**facts, "datadocs": False})


def _finish(store, scenario: Scenario, judged: Judgement, facts: dict, *, more_stats: dict, report_error: str | None,
            failure: tuple[str, BaseException] | None, local_dir, lease, report: bool = True) -> dict:
    """Build the run's summary once, write it (``summary.json``, the walls apart: `write_summary`) and mirror
    it locally; return it with ``local``. ``failure``: (phase, exception) of a run that raised: its traceback
    goes into the summary (cut) and ``LOCAL_DIR/RUN_ID/error.log``, and the returned summary's ``error``
    names that log. Storage that fails the write makes the run unknown: a summary saying so is written
    locally instead, one quick probe deciding whether storage is still worth trying."""
    run_id, config = judged.run_id, facts["config"]
    log_path = None if local_dir is None else Path(local_dir) / run_id / "error.log"
    crash = None
    if failure is not None:
        crash = {"traceback": "".join(traceback.format_exception(failure[1]))[-8000:],
                 **({"error_log": str(log_path)} if log_path is not None else {})}
    summary = build_summary(judged, scenario, report_error=report_error, report=report, more_stats=more_stats,
                            crash=crash, **facts)
    try:
        if failure is not None and (_in_chain(failure[1], StorageUnreachable)
                                    or "StorageUnreachable" in str(judged.error)):  # (a Spark task's, as text)
            check_bucket(config)  # seconds: still unreachable -> StorageUnreachable, nothing to retry
        write_summary(store, summary)
    except (StorageError, OSError) as exc:
        if failure is not None:  # storage may be what failed: one line, the detail locally
            note = ("summary.json not written to storage (the endpoint is still unreachable)"
                    if isinstance(exc, StorageUnreachable) else
                    f"summary.json not written to storage: {one_line_reason(exc)}")
            out = {**summary, "error": f"{summary['error']}; {note}"}
            if local_dir is not None:
                out["local"] = str(_write_local_summary(Path(local_dir) / run_id, out))
            return _with_error_log(out, log_path, run_id, failure)
        # storage went away after judging: unknown, one line, the detail locally
        lost = judgement_of(run_id, judged.checks, scenario=scenario, mutant=judged.mutant,
                            error=f"write summary.json failed: {one_line_reason(exc)}")
        return _finish(store, scenario, lost, facts, more_stats=more_stats, report_error=report_error,
                       failure=("write summary.json", exc), local_dir=local_dir, lease=lease)
    out = dict(summary)
    if local_dir is not None:
        out["local"] = str(mirror_locally(store, Path(local_dir) / run_id))
    return _with_error_log(out, log_path, run_id, failure) if failure is not None else out


def _with_error_log(summary: dict, log_path: Path | None, run_id: str, failure: tuple[str, BaseException]) -> dict:
    """The whole traceback in the local ``error.log`` (after the mirror, which clears an old one); the
    summary's ``error`` then names it."""
    phase, exc = failure
    if _write_error_log(log_path, run_id, phase, "".join(traceback.format_exception(exc))):
        return {**summary, "error": f"{summary['error']} (details: {log_path})"}
    return {k: v for k, v in summary.items() if k != "error_log"}


_EXCEPTION_LINE = re.compile(r"^(?::\s*)?((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*): (\S.*)$")
_JAVA_PREFIXES = ("org.", "java.", "javax.", "scala.", "py4j.", "com.", "io.netty.", "sun.")
REASON_CHARS = 400


def one_line_reason(exc: BaseException) -> str:
    """One line saying why ``exc`` happened, for the console: a regionchaos storage error in its
    chain if any; else, for a failed Spark job (py4j's error holds the JVM's whole stack and every
    task's Python traceback), the Python exception a task raised; else the exception's first line."""
    chain, seen = [], exc
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for e in chain:
        if isinstance(e, StorageError):
            return _clip(f"{type(e).__name__}: {e}")
    found = []  # (short name, message, raised by regionchaos)
    for raw in str(exc).splitlines():
        match = _EXCEPTION_LINE.match(raw.strip())
        if match is None or match.group(1).startswith(_JAVA_PREFIXES):
            continue
        name, ours = match.group(1), match.group(1).startswith("regionchaos.")
        if ours or name.endswith(("Error", "Exception")):
            found.append((name.rsplit(".", 1)[-1], match.group(2), ours))
    if found:
        name, text, _ = next((f for f in found if f[2]), found[-1])
        return _clip(f"{name}: {text}")
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return _clip(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 3] + "..."


def _crashed(store, config, scenario, mutant, run_id, replay, walls, phase, exc, local_dir, lease=None) -> dict:
    """The summary of a run whose ``phase`` (the emulation, or the real cluster's run) raised: verdict
    unknown (exit 3), one line of reason in ``error``, the whole traceback in ``LOCAL_DIR/RUN_ID/error.log``
    (and, cut, in the summary). No report was written: ``report`` and ``datadocs`` are None."""
    judged = crashed(run_id, f"{phase} failed: {one_line_reason(exc)}", scenario=scenario, mutant=mutant)
    facts = {"config": config, "replay": replay, "stats": {}, "drawn": {}, "datadocs": False}
    if lease is not None and lease.lost:
        _write_error_log(None if local_dir is None else Path(local_dir) / run_id / "error.log", run_id, phase,
                         "".join(traceback.format_exception(exc)))
        return _lease_lost(judged, scenario, lease, facts)
    return _finish(store, scenario, judged, facts, more_stats={"wall_seconds": walls}, report_error=None,
                   failure=(phase, exc), local_dir=local_dir, lease=lease, report=False)


def _in_chain(exc: BaseException | None, kind: type) -> bool:
    seen: list = []
    while exc is not None and exc not in seen:
        if isinstance(exc, kind):
            return True
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return False


def _write_error_log(path: Path | None, run_id: str, phase: str, detail: str) -> bool:
    """The whole traceback (a Spark job's includes the JVM's stack) beside the local mirror."""
    if path is None:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"run {run_id}: {phase} failed\n\n{detail}")
    except OSError:
        return False
    return True


def _write_local_summary(target: Path, summary: dict) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    (target / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True, default=str))
    return target


MIRRORED = ("summary.json", "scenario.json", "report/", "datadocs/", "validation/", "timing/")
LOCAL_ONLY = ("error.log",)  # written beside the mirror by a crashed run


def mirror_locally(store, target: Path) -> Path:
    """Copy the human-facing artifacts (summary, report, Data Docs, results)
    to a local folder: an embedded S3 server's contents die with the run. What an earlier run of
    this run id mirrored there (and its ``error.log``) goes first: its Data Docs never mix with
    this run's."""
    keys = store.list_keys("")
    for name in MIRRORED + LOCAL_ONLY:
        old = target / name.rstrip("/")
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        elif old.exists() or old.is_symlink():
            old.unlink()
    for key in keys:
        if key.startswith(MIRRORED) or key in MIRRORED:
            path = target / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(store.get(key))
    return target


def _progress_printer(say, scenario: Scenario):
    every = max(1, (scenario.checkpoints + scenario.faults.heal_checkpoints) // 10)

    def progress(attempt: int, limit: int, outcome) -> None:
        if attempt % every == 0 and outcome is not None:
            say(f"  attempt {attempt + 1}: checkpoint {outcome.checkpoint_id} {outcome.status}"
                + (f" ({outcome.reason})" if outcome.reason else ""))

    return progress


def _s3_stats(store, persistence) -> dict:
    stats = store.stats.as_dict()
    extra = getattr(persistence, "stats", None)
    if isinstance(extra, dict):
        stats["dataplane"] = extra
    return stats


def mutants() -> dict[str, str]:
    return dict(MUTANTS)
