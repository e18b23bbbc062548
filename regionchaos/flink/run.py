"""One seeded chaos run on a real Flink cluster: faults, artifacts under the run's S3 prefix, a cross-check.

In:  a `FlinkRunSpec` (`regionchaos.flink.spec`: seed, the job's shape, the faults to draw, which checkpoint a
     resume takes), an `ObjectStore` for the run's prefix, a scratch folder (the cluster's files, checkpoints,
     output).
Out: `run_flink` returns the run's summary (also stored as ``flink/summary.json``): the faults drawn and
     applied, the jobs, the restore point, why the run cannot be judged (``unknown_because``: a resume that
     could not be made, the watcher failing, a metadata file unreadable) and ``exactly_once``: a cross-check
     of the committed output against the source range (regionchaos.flink.checks, on the artifacts read back
     from S3). It has NO verdict: one check is not a verdict, which only the GX suites that apply to a real
     run give (`regionchaos.flink.judging.judge_stored`; `regionchaos run` and ``python -m regionchaos.flink``
     both judge there).
     Artifacts, relative to the run prefix (`store_artifacts`):
       flink/run.json                        spec, distribution, jobs, faults planned and applied (events' at_s
                                             from t0_unix_s, the first submission on the wall clock)
       flink/source.json                     the source's range: records 0..N-1, K keys
       flink/metadata/JOB/chk-N/_metadata    the raw metadata as copied while the job ran
       flink/metadata/JOB/chk-N.json         its dump by Flink's own reader (flink/java/.../MetadataDump)
       flink/inventory.json                  every checkpoint file seen, size, first/last seen; races;
                                             chk-N folders without _metadata (garbage, not checkpoints)
       flink/rest/JOB/checkpoints.json       the REST checkpoint statistics last fetched for JOB
       flink/sink/NAME                       the sink's committed files (hidden in-progress files skipped)
       flink/checks/exactly_once.json, flink/summary.json
     The seed fixes the fault schedule (times after submission, victims); a real cluster's timing,
     file names and checkpoint ids still vary from run to run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from regionchaos.faultkinds import Stream, stream_rng
from regionchaos.flink import build
from regionchaos.flink.artifacts import as_json, exactly_once_cross_check, handles, named_files, store_artifacts
from regionchaos.flink.cluster import ClusterSpec, FlinkCluster, dist_defaults
from regionchaos.flink.dist import FlinkDist, find_dist, regional_checkpoints
from regionchaos.flink.spec import FlinkRunSpec
from regionchaos.flink.watch import CheckpointWatcher
from regionchaos.storage import ObjectStore

ENDED = ("FINISHED", "FAILED", "CANCELED")


def draw_faults(spec: FlinkRunSpec) -> list[dict]:
    """The seed's schedule: TM kills and the JM kill at drawn times, one per slot of [15 %, 80 %] of the run."""
    rng = stream_rng(spec.seed, Stream.REAL_FLINK)
    kinds = ["tm_kill"] * spec.tm_kills + (["jm_kill"] if spec.jm_kill else [])
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    start, end = 0.15 * spec.duration_s, 0.8 * spec.duration_s
    width = (end - start) / max(1, len(kinds))
    faults = []
    for index, kind in enumerate(kinds):
        at = start + width * index + float(rng.uniform(0.2, 0.8)) * width
        faults.append({"at_s": round(at, 3), "kind": kind, "victim_draw": float(rng.random())})
    return faults


def job_conf(spec: FlinkRunSpec, checkpoints: Path) -> dict[str, str]:
    """The job's Flink Configuration keys (``flink run -D``)."""
    conf = {
        "parallelism.default": str(spec.parallelism),
        "execution.checkpointing.interval": f"{spec.interval_ms} ms",
        "execution.checkpointing.dir": checkpoints.resolve().as_uri(),
        "execution.checkpointing.num-retained": str(spec.retained),
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        "state.backend.type": spec.state_backend,
        "execution.checkpointing.incremental": str(spec.state_backend == "rocksdb").lower(),
    }
    if spec.inline_threshold_bytes is not None:  # smaller state chunks are inline in _metadata
        conf["execution.checkpointing.data-inline-threshold"] = str(spec.inline_threshold_bytes)
    return conf


def retained_checkpoints(job_dir: Path) -> list[Path]:
    """The job's chk-N folders that hold a _metadata (the others are garbage), oldest first."""
    found = []
    for folder in job_dir.glob("chk-*"):
        if folder.name[4:].isdigit() and (folder / "_metadata").is_file():
            found.append(folder)
    return sorted(found, key=lambda folder: int(folder.name[4:]))


class _Driver:
    """Submits the job and applies the faults to one cluster; keeps what happened in `events`."""

    def __init__(self, cluster: FlinkCluster, jar: Path, spec: FlinkRunSpec, scratch: Path) -> None:
        self.cluster, self.jar, self.spec, self.scratch = cluster, jar, spec, scratch
        self.checkpoints, self.output = scratch / "checkpoints", scratch / "output"
        self.jobs: list[str] = []
        self.events: list[dict] = []
        self.restored_from: str | None = None
        self.resume_failed: str | None = None
        self.t0 = time.monotonic()
        self.t0_unix_s = time.time()  # the same instant on the wall clock: REST timestamps are epoch ms

    def at(self) -> float:
        return round(time.monotonic() - self.t0, 3)

    def submit(self, restore_from: Path | None = None) -> str:
        rate = self.spec.records / self.spec.duration_s
        args = ["--records", str(self.spec.records), "--keys", str(self.spec.keys),
                "--rate", f"{rate:.3f}", "--output", str(self.output)]
        job = self.cluster.submit(self.jar, build.JOB_CLASS, args, job_conf(self.spec, self.checkpoints),
                                  restore_from=restore_from)
        self.jobs.append(job)
        if len(self.jobs) == 1:
            self.t0 = time.monotonic()  # fault times count from the first submission
            self.t0_unix_s = time.time()
        self.events.append({"at_s": self.at(), "event": "submitted", "job": job,
                            "restore_from": str(restore_from) if restore_from else None})
        return job

    def apply(self, fault: dict) -> None:
        if fault["kind"] == "tm_kill":
            live = sorted(self.cluster.live_taskmanagers())
            victim = live[int(fault["victim_draw"] * len(live))]
            self.cluster.kill(victim)
            replacement = self.cluster.start_taskmanager()
            self.events.append({"at_s": self.at(), "event": "tm_kill", "victim": victim,
                                "replacement": replacement})
        else:
            self.jm_kill_and_resume()

    def jm_kill_and_resume(self) -> None:
        old = self.cluster.live("jm-")[0]
        self.cluster.kill(old)
        self.events.append({"at_s": self.at(), "event": "jm_kill", "victim": old})
        self.events.append({"at_s": self.at(), "event": "jm_start", "name": self.cluster.start_jobmanager()})
        self.cluster.wait_registered(len(self.cluster.live_taskmanagers()))
        self.events.append({"at_s": self.at(), "event": "taskmanagers_registered"})
        retained = retained_checkpoints(self.checkpoints / self.jobs[-1])
        wanted = 2 if self.spec.resume == "older" else 1
        if len(retained) < wanted:
            self.resume_failed = f"{len(retained)} retained checkpoint(s), resume {self.spec.resume!r} needs {wanted}"
            return
        restore = retained[-wanted]
        self.restored_from = str(restore.relative_to(self.checkpoints))
        self.submit(restore_from=restore)

    def run_faults(self, faults: list[dict]) -> None:
        for fault in faults:
            time.sleep(max(0.0, fault["at_s"] - (time.monotonic() - self.t0)))
            self.apply(fault)
            if self.resume_failed:
                return

    def wait_end(self, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        state = "UNKNOWN"
        while time.monotonic() < deadline:
            try:
                state = self.cluster.rest.job_state(self.jobs[-1])
            except Exception:  # noqa: BLE001 - REST down for a moment: ask again
                state = "UNKNOWN"
            if state in ENDED:
                break
            time.sleep(0.5)
        self.events.append({"at_s": self.at(), "event": "ended" if state in ENDED else "timeout", "state": state})
        return state


def dump_metadata(dist: FlinkDist, jar: Path, watcher: CheckpointWatcher, folder: Path) -> dict[tuple[str, int], dict]:
    """Every copied _metadata, read by Flink's own reader (one JVM for all); by (job, checkpoint id)."""
    if not watcher.metadata:
        return {}
    args, keys = [], {}
    for (job, chk), body in sorted(watcher.metadata.items()):
        copy = folder / job / f"chk-{chk}" / "_metadata"
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(body)
        # the pointer must be a folder holding the _metadata (Flink resolves it): the copy's; paths of
        # relative file handles come out under it and are put back under the real checkpoint folder
        args += [str(copy), str(copy.parent)]
        keys[str(copy)] = (job, chk)
    opens = dist_defaults(dist).get("env.java.opts.all", "").split()
    done = subprocess.run([dist.java, *opens, "-cp", f"{jar}:{dist.classpath()}", build.DUMP_CLASS, *args],
                          capture_output=True, text=True, timeout=300)
    dumps = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            doc = json.loads(line)
            job, chk = keys[doc["metadata"]]
            dumps[(job, chk)] = _rebase(doc, f"{folder / job / f'chk-{chk}'}/", f"{watcher.root / job / f'chk-{chk}'}/")
    return dumps


def _rebase(doc: dict, copy_prefix: str, real_prefix: str) -> dict:
    """The dump with every file path under the copy's folder moved to the real checkpoint folder."""
    for handle in handles(doc):
        if "path" in handle:
            path = handle["path"].removeprefix("file:")
            if path.startswith(copy_prefix):
                handle["path"] = real_prefix + path[len(copy_prefix):]
    return doc


def run_flink(spec: FlinkRunSpec, store: ObjectStore, scratch: Path, dist: FlinkDist | None = None) -> dict:
    """Start a cluster, run the job under the seed's faults to its end, store the artifacts and the
    exactly-once cross-check (not a verdict: see the module docstring). Every process started is stopped
    before this returns (or raises)."""
    dist = dist or find_dist()
    jar = build.job_jar(dist)
    scratch = Path(scratch)
    faults = draw_faults(spec)
    # num-retained is read by the JobManager's checkpoint store from the CLUSTER's configuration
    # (given with flink run -D it is ignored: one retained checkpoint, measured here)
    cluster_spec = ClusterSpec(taskmanagers=spec.taskmanagers, slots=spec.slots,
                               extra={"execution.checkpointing.num-retained": str(spec.retained),
                                      # the REST history keeps every checkpoint of a run (default: the last 10),
                                      # so a kill's next completed checkpoint is in the stored history
                                      "web.checkpoints.history": "1000"})
    started = time.monotonic()
    with FlinkCluster(dist, scratch / "cluster", cluster_spec) as cluster:
        (scratch / "checkpoints").mkdir(parents=True, exist_ok=True)
        driver = _Driver(cluster, jar, spec, scratch)
        with CheckpointWatcher(scratch / "checkpoints", cluster.rest) as watcher:
            driver.submit()
            driver.run_faults(faults)
            state = "NOT_RESUMED" if driver.resume_failed else driver.wait_end(2 * spec.duration_s + 120)
    dumps = dump_metadata(dist, jar, watcher, scratch / "metadata-copies")
    unreadable = [dump["error"] for dump in dumps.values() if "error" in dump]
    unknown_because = (driver.resume_failed or (repr(watcher.error) if watcher.error else None)
                       or (f"{len(unreadable)} metadata file(s) unreadable: {unreadable[0]}" if unreadable else None))
    record = {
        "backend": "flink", "flink_version": dist.version, "spec": spec.model_dump(),
        "regional_checkpoints": regional_checkpoints(dist.home),
        "source": {"records": spec.records, "keys": spec.keys, "first": 0, "last": spec.records - 1},
        "faults_planned": faults, "events": driver.events, "jobs": driver.jobs, "final_state": state,
        "t0_unix_s": round(driver.t0_unix_s, 3),  # events' at_s count from here (wall clock)
        "restored_from": driver.restored_from, "unknown_because": unknown_because,
        "pids_started": len(cluster.started_pids),
    }
    objects = store_artifacts(store, record, watcher, dumps, driver.output)
    check = exactly_once_cross_check(store)
    summary = {**record, "exactly_once": check,
               "checkpoints_copied": len(watcher.metadata),
               "metadata_dumped": sum("operators" in dump for dump in dumps.values()),
               "metadata_unreadable": sorted(f"{job}/chk-{chk}" for (job, chk), d in dumps.items() if "error" in d),
               "named_files": named_files(dumps, watcher),
               "objects_stored": objects, "wall_seconds": round(time.monotonic() - started, 1)}
    store.put("flink/checks/exactly_once.json", as_json(check))
    store.put("flink/summary.json", as_json(summary))
    return summary


def run_in_scratch(spec: FlinkRunSpec, store: ObjectStore, dist: FlinkDist | None = None) -> dict:
    """`run_flink` in a fresh temporary folder (``$TMPDIR/regionchaos-flink-*``), removed when it returns or
    raises: what is judged is under the run's prefix by then (`regionchaos.runner.start`'s real runs)."""
    scratch = Path(tempfile.mkdtemp(prefix="regionchaos-flink-"))
    try:
        return run_flink(spec, store, scratch, dist)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_stats(summary: dict) -> dict:
    """What a real run counted, for its ``summary.json`` ``stats`` (the drawn faults go to ``drawn``)."""
    events = [e["event"] for e in summary["events"]]
    return {"backend": "flink", "flink_version": summary["flink_version"], "final_state": summary["final_state"],
            "jobs": len(summary["jobs"]), "taskmanager_kills": events.count("tm_kill"),
            "jobmanager_kills": events.count("jm_kill"), "restored_from": summary["restored_from"],
            "checkpoints_copied": summary["checkpoints_copied"], "metadata_dumped": summary["metadata_dumped"],
            "records": summary["source"]["records"], "unknown_because": summary["unknown_because"],
            "processes_started": summary["pids_started"], "wall_seconds_flink": summary["wall_seconds"]}
