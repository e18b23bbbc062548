"""The same job shape on a real Flink cluster and in the emulation, side by side, under faults.

In:  real-Flink catalogue scenarios (``backend: flink``; default real-flink-tm-kills and real-flink-jm-resume)
     and seeds. For each pair:
     1. the REAL run, through `regionchaos.runner.run` (the cluster on loopback, the seed's faults, the GX
        suites that apply), into one embedded S3 server;
     2. the EMULATED run of the same job shape: `emulated_shape` maps the real scenario's ``real_flink:``
        section and the seed's drawn faults (`regionchaos.flink.run.draw_faults`) to an emulated scenario
        (parallelism, TaskManagers, checkpoints over the same duration at the same interval, state backend,
        retained checkpoints, released Flink: regional checkpoints off; an explicit fault schedule: a
        TaskManager kill -> ``taskmanager_loss`` at the attempt of its time, a JobManager kill ->
        ``jobmanager_failover``), run the same way into the same server.
     Every object of each run's prefix (Data Docs and GX results aside) is copied to ``--cache`` and the
     metrics are computed from those RAW artifacts, never from the summary's stats:
       real: ``flink/run.json`` (fault record, ``t0_unix_s``), ``flink/rest/JOB/checkpoints.json`` (REST
             counts and per-checkpoint history), ``flink/inventory.json`` and ``flink/metadata/JOB/chk-N.json``;
       emulated: ``history/events-*.jsonl``, ``sink/txn/``, ``checkpoints/`` (the objects left at the end).
Out: ``--json`` (default bench/results/flink_side_by_side/flink_side_by_side.json): one record per side
     and pair, and ``--md`` (the table of the write-up's README.md, printed; the prose is hand-written).
     ``--from-cache`` recomputes the records from a cache without running anything.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_SCENARIOS = ("real-flink-tm-kills", "real-flink-jm-resume")
OUT = ROOT / "bench" / "results" / "flink_side_by_side"
SKIP_PREFIXES = ("datadocs/", "validation/", "report/")
_CHK = re.compile(r"chk-(\d+)")


# ---- the shape mapping (pure) -------------------------------------------------------------------------------------

def emulated_shape(name: str, seed: int, real: dict, faults: list[dict]) -> dict:
    """The emulated scenario (a dict for `regionchaos.scenario.from_dict`) of a real scenario's ``real_flink``
    section (``real``, every field filled) and the seed's drawn faults (`draw_faults`)."""
    p, tms = real["parallelism"], real["taskmanagers"]
    attempts = max(1, math.ceil(real["duration_s"] * 1000 / real["interval_ms"]))
    per_split = real["records"] // p
    rate = per_split / attempts
    return {
        "name": f"{name}-emulated", "seed": seed, "checkpoints": attempts,
        "description": f"the job shape of {name} (seed {seed}) in the emulation (bench/flink_side_by_side.py)",
        # keyBy is an all-to-all edge: one pipelined region, as rebalance gives in the emulation
        "topology": {"parallelism": p, "taskmanagers": tms, "partitioning": "rebalance", "keyed_state": True},
        "workload": {"splits": p, "bounded": True, "records_per_split": per_split,
                     "records_per_interval": [math.floor(rate), math.ceil(rate)]},
        "flink": {"execution.checkpointing.region.enabled": False,
                  "state.checkpoints.num-retained": real["retained"],
                  "state.backend.type": real["state_backend"],
                  "execution.checkpointing.file-merging.enabled": False},
        "faults": {"schedule": fault_schedule(faults, real, attempts), "heal_checkpoints": 3},
    }


def fault_schedule(faults: list[dict], real: dict, attempts: int) -> list[dict]:
    """The real run's drawn faults as emulation schedule entries: each at the checkpoint attempt its time falls
    in (seconds after submission / interval), a TaskManager kill's victim the same draw over the TaskManagers."""
    entries, seen = [], set()
    for fault in faults:
        attempt = min(attempts - 1, int(fault["at_s"] * 1000 // real["interval_ms"]))
        if fault["kind"] == "tm_kill":
            entry = {"checkpoint": attempt, "kind": "taskmanager_loss",
                     "taskmanager": int(fault["victim_draw"] * real["taskmanagers"])}
        else:
            entry = {"checkpoint": attempt, "kind": "jobmanager_failover"}
        key = tuple(sorted(entry.items()))
        if key not in seen:  # two kills drawn into one attempt hit it once
            seen.add(key)
            entries.append(entry)
    return entries


# ---- reading a run's mirrored artifacts --------------------------------------------------------------------------

class Mirror:
    """A run's objects copied to a local folder (key -> file), read back like the store."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*")
                      if p.is_file() and str(p.relative_to(self.folder)).startswith(prefix))

    def get(self, key: str) -> bytes:
        return (self.folder / key).read_bytes()

    def json(self, key: str):
        return json.loads(self.get(key))


def mirror_run(store, folder: Path) -> Mirror:
    """Copy every object of the run's prefix but Data Docs, GX results and the report into folder."""
    for key in store.list_keys(""):
        if key.startswith(SKIP_PREFIXES):
            continue
        path = folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(store.get(key))
    return Mirror(folder)


# ---- real metrics ----------------------------------------------------------------------------------------------------

def real_metrics(m: Mirror) -> dict:
    """Checkpoints, recovery, replay estimate and storage left behind, from a real run's raw artifacts."""
    record = m.json("flink/run.json")
    rest = {key.split("/")[2]: m.json(key) for key in m.keys("flink/rest/")}
    history = [dict(h, job=job) for job, doc in rest.items() for h in doc.get("history", [])]
    counts = [doc.get("counts", {}) for doc in rest.values()]
    kills = [e for e in record["events"] if e["event"] in ("tm_kill", "jm_kill")]
    t0_ms = record["t0_unix_s"] * 1000
    restores = [doc.get("latest", {}).get("restored") or {} for doc in rest.values()]
    for kill in kills:
        kill["recovery_s"], kill["restarted"] = kill_effect(t0_ms + kill["at_s"] * 1000, kill, history, restores)
    recovery = [k["recovery_s"] for k in kills]
    spec = record["spec"]
    late = unpolled_checkpoints(m.json("flink/inventory.json"), rest)
    return {
        "checkpoints": {"attempted": sum(c.get("total", 0) for c in counts) + late["completed"] + late["abandoned"],
                        "completed": sum(c.get("completed", 0) for c in counts) + late["completed"],
                        "failed": sum(c.get("failed", 0) for c in counts) + late["abandoned"],
                        "in_progress_at_last_poll": sum(c.get("in_progress", 0) for c in counts),
                        "history_entries": len(history), "after_last_rest_poll": late},
        "faults": [{"kind": k["event"], "at_s": k["at_s"], "restarted": k["restarted"]} for k in kills],
        "recovery": recovery, "recovery_unit": "s (wall clock)",
        "restores": sum(c.get("restored", 0) for c in counts),
        "records_replayed_estimate": replay_estimate(record, history, kills, spec),
        "storage_left": real_storage_left(m),
        "final_state": record["final_state"], "restored_from": record.get("restored_from"),
    }


def unpolled_checkpoints(inventory: dict, rest: dict) -> dict:
    """chk-N folders of a job the watcher saw with an id above every id its last REST poll knew (a JobManager
    killed between polls takes them out of the statistics): with a ``_metadata`` completed, without abandoned."""
    ids: dict[str, dict[int, bool]] = {}
    for r in inventory.get("files", []):
        parts = r["path"].split("/")
        match = _CHK.fullmatch(parts[1]) if len(parts) == 3 else None
        if match:
            seen = ids.setdefault(parts[0], {})
            seen[int(match.group(1))] = seen.get(int(match.group(1)), False) or parts[2] == "_metadata"
    for job_chk in inventory.get("incomplete_checkpoints", []):
        job, chk = job_chk.split("/")
        ids.setdefault(job, {}).setdefault(int(chk[4:]), False)
    out = {"completed": 0, "abandoned": 0}
    for job, seen in ids.items():
        polled = rest.get(job, {})
        known = max([h["id"] for h in polled.get("history", [])] + [polled.get("counts", {}).get("total", 0)])
        for chk, complete in seen.items():
            if chk > known:
                out["completed" if complete else "abandoned"] += 1
    return out


def kill_effect(at_ms: float, kill: dict, history: list[dict], restores: list[dict]) -> tuple[float | None, bool]:
    """(seconds from the kill to the next completed checkpoint, whether the job restarted): a JobManager kill
    always does (a new job resumes); a TaskManager kill did when a checkpoint triggered between the kill and that
    completion failed (its tasks were not running) or a job's latest restore falls in that window (a kill of a
    TaskManager that held no task, e.g. an idle replacement, restarts nothing)."""
    later = sorted(h["latest_ack_timestamp"] for h in history
                   if h.get("status") == "COMPLETED" and h["latest_ack_timestamp"] > at_ms)
    until = later[0] if later else float("inf")
    failed = any(h.get("status") == "FAILED" and at_ms <= h["trigger_timestamp"] <= until for h in history)
    restored = any(at_ms <= r.get("restore_timestamp", -1) <= until for r in restores)
    recovery = round((until - at_ms) / 1000, 2) if later else None
    return recovery, kill["event"] == "jm_kill" or failed or restored


def replay_estimate(record: dict, history: list[dict], kills: list[dict], spec: dict) -> int:
    """Records the source emitted again: per kill that restarted the job, the source's rate x (kill time - trigger time of the checkpoint
    the job restored from: the latest completed before the kill; a JobManager resume's own ``chk-N``). An estimate:
    a source's position is inline state the artifacts keep only as a size, and records emitted between the kill
    and the tasks' cancellation are not counted (a lower bound)."""
    rate_per_ms = spec["records"] / (spec["duration_s"] * 1000)
    by_id = {(h["job"], h["id"]): h for h in history}
    total = 0.0
    for kill in (k for k in kills if k["restarted"]):
        at = record["t0_unix_s"] * 1000 + kill["at_s"] * 1000
        if kill["event"] == "jm_kill" and record.get("restored_from"):
            job, chk = record["restored_from"].split("/")
            restored = by_id.get((job, int(chk[4:]))) or extrapolated(job, int(chk[4:]), history, spec)
        else:
            before = [h for h in history if h.get("status") == "COMPLETED" and h["latest_ack_timestamp"] < at]
            restored = max(before, key=lambda h: h["latest_ack_timestamp"], default=None)
        start = restored["trigger_timestamp"] if restored else at - kill["at_s"] * 1000
        total += max(0.0, at - start) * rate_per_ms
    return round(total)


def extrapolated(job: str, chk: int, history: list[dict], spec: dict) -> dict | None:
    """A checkpoint the REST history never showed (completed after the last poll before a JobManager kill): its
    trigger time from the job's newest polled checkpoint plus the interval per id in between."""
    known = [h for h in history if h["job"] == job and h["id"] < chk]
    if not known:
        return None
    last = max(known, key=lambda h: h["id"])
    return {"trigger_timestamp": last["trigger_timestamp"] + (chk - last["id"]) * spec["interval_ms"]}


def real_storage_left(m: Mirror) -> dict:
    """Files still on disk at the watcher's last scan that no checkpoint retained then (a chk-N with its
    _metadata present) names; their bytes. A finished job's retained checkpoints are deleted by Flink."""
    from regionchaos.flink.tables import named_files

    inventory = m.json("flink/inventory.json")
    present = {r["path"]: r.get("size") or 0 for r in inventory["files"] if r.get("present_at_end")}
    retained = {(p.split("/")[0], int(_CHK.fullmatch(p.split("/")[1]).group(1))) for p in present
                if p.count("/") == 2 and p.endswith("/_metadata") and _CHK.fullmatch(p.split("/")[1])}
    named: set[str] = set()
    for job, chk in retained:
        key = f"flink/metadata/{job}/chk-{chk}.json"
        if key in m.keys(f"flink/metadata/{job}/"):
            named |= set(named_files({(job, chk): m.json(key)}, {job}))  # from the job folder on
    left = {p: s for p, s in present.items() if p not in named
            and not (p.endswith("/_metadata") and (p.split("/")[0], checkpoint_no(p)) in retained)}
    return {"objects": len(left), "bytes": sum(left.values()), "retained_checkpoints": len(retained),
            "examples": sorted(left)[:5], "on_storage_at_end": {"objects": len(present), "bytes": sum(present.values())}}


def checkpoint_no(path: str) -> int | None:
    match = _CHK.fullmatch(path.split("/")[1]) if path.count("/") >= 1 else None
    return int(match.group(1)) if match else None


# ---- emulated metrics ------------------------------------------------------------------------------------------------

def events_of(m: Mirror) -> list[dict]:
    events = []
    for key in m.keys("history/"):
        events += [json.loads(line) for line in m.get(key).decode().splitlines() if line.strip()]
    return sorted(events, key=lambda e: e["seq"])


def emulated_metrics(m: Mirror) -> dict:
    """The same measures from an emulated run's raw artifacts (its history log, transactions and objects)."""
    events = events_of(m)
    kinds = [e["kind"] for e in events]
    decided = [e for e in events if e["kind"] == "checkpoint_decided"]
    faults = [e for e in events if e["kind"] in ("taskmanager_lost", "jobmanager_failover")]
    completed = [e for e in events if e["kind"] == "checkpoint_completed"]
    recovery = []
    for fault in faults:
        later = [c for c in completed if c["seq"] > fault["seq"]]
        recovery.append(later[0]["attempt"] - fault["attempt"] + 1 if later else None)
    return {
        "checkpoints": {"attempted": kinds.count("checkpoint_triggered"), "completed": len(completed),
                        "failed": sum(e["status"] == "ABORTED" for e in decided) + kinds.count("checkpoint_voided")},
        "faults": [{"kind": f["kind"], "attempt": f["attempt"]} for f in faults],
        "recovery": recovery, "recovery_unit": "checkpoint attempts (emulated intervals, fault's own included)",
        "restores": sum(e["kind"] in ("global_restore", "region_failover") for e in events),
        "records_replayed_estimate": emulated_replay_estimate(m, events),
        "records_precommitted_twice": replayed_from_transactions(m),
        "storage_left": emulated_storage_left(m),
    }


def emulated_replay_estimate(m: Mirror, events: list[dict]) -> int:
    """The real side's estimate in the emulation's terms: per restore, the workload's records per interval (all
    splits, the middle of ``records_per_interval`` in ``scenario.json``) x the intervals between the attempt that
    completed the checkpoint restored from and the restore's attempt (a restore from scratch: from attempt 0)."""
    workload = m.json("scenario.json")["scenario"]["workload"]
    per_interval = workload["splits"] * sum(workload["records_per_interval"]) / 2
    done_at = {e["checkpoint_id"]: e["attempt"] for e in events if e["kind"] == "checkpoint_completed"}
    total = 0.0
    for e in events:
        if e["kind"] in ("global_restore", "region_failover") and e.get("cause") != "rescale":
            base = done_at.get(e.get("restore_from"), -1)
            total += max(0, e["attempt"] - base) * per_interval
    return round(total)


def replayed_from_transactions(m: Mirror) -> int:
    """Records pre-committed by more than one transaction (``sink/txn/``): per split, the summed lengths of every
    transaction's ranges minus the length of their union (a record processed again after a restore)."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for key in m.keys("sink/txn/"):
        for t in m.json(key):
            ranges.setdefault(t["split"], []).append((t["start"], t["end"]))
    extra = 0
    for spans in ranges.values():
        total = sum(b - a for a, b in spans)
        union, reach = 0, None
        for a, b in sorted(spans):
            if reach is None or a >= reach:
                union, reach = union + b - a, b
            elif b > reach:
                union, reach = union + b - reach, b
        extra += total - union
    return extra


def emulated_storage_left(m: Mirror) -> dict:
    """Objects under checkpoints/ at the end that no retained checkpoint (a chk-N with its _metadata) names."""
    keys = m.keys("checkpoints/")
    retained = [k for k in keys if k.endswith("/_metadata")]
    named = set(retained)
    for key in retained:
        named |= {k for k in keys if k in m.get(key).decode()}
    left = [k for k in keys if k not in named]
    size = {k: (m.folder / k).stat().st_size for k in keys}
    return {"objects": len(left), "bytes": sum(size[k] for k in left), "retained_checkpoints": len(retained),
            "examples": left[:5], "on_storage_at_end": {"objects": len(keys), "bytes": sum(size.values())}}


# ---- running ---------------------------------------------------------------------------------------------------------

def run_pair(name: str, seed: int, config, cache: Path) -> list[dict]:
    """The real run and its emulated twin, each mirrored to cache/RUN_ID; their records."""
    from regionchaos import runner
    from regionchaos.flink.run import draw_faults
    from regionchaos.scenario import from_dict, load
    from regionchaos.storage import ObjectStore

    real = load(name, seed=seed)
    faults = draw_faults(real.flink_run_spec)
    shape = emulated_shape(name, seed, real.real_flink.model_dump(), faults)
    out = []
    for side, scenario in (("real", real), ("emulated", from_dict(shape))):
        run_id = f"side-{name}-s{seed}-{side}"
        load_before = os.getloadavg()
        started = time.monotonic()
        runner.run(scenario, storage=config, run_id=run_id)
        wall = round(time.monotonic() - started, 1)
        mirror_run(ObjectStore.for_run(config, run_id), cache / run_id)
        meta = {"side": side, "scenario": name, "seed": seed, "run_id": run_id, "wall_seconds": wall,
                "loadavg_before": [round(x, 2) for x in load_before],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
        (cache / run_id / "_bench.json").write_text(json.dumps(meta, indent=1))
        out.append(record_of(cache / run_id, shape if side == "emulated" else None))
    return out


def record_of(folder: Path, shape: dict | None = None) -> dict:
    """One side's record from its mirrored artifacts and the bench's own timing."""
    m = Mirror(folder)
    meta = json.loads((folder / "_bench.json").read_text())
    summary = m.json("summary.json")
    metrics = real_metrics(m) if meta["side"] == "real" else emulated_metrics(m)
    if meta["side"] == "emulated":
        scenario = m.json("scenario.json")["scenario"]
        metrics["shape"] = {k: scenario[k] for k in ("checkpoints", "topology", "workload", "flink")}
        metrics["shape"]["schedule"] = scenario["faults"].get("schedule")
    return {**meta, "verdict": summary["verdict"], **metrics}


def table(records: list[dict]) -> str:
    """The write-up's Markdown table."""
    head = ("| scenario | seed | side | verdict | ckpts attempted / completed / failed | recovery per fault | "
            "restores | records replayed (est.) | unnamed objects left (n, bytes) | on storage at end (n, bytes) | wall s |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in records:
        c = r["checkpoints"]
        unit = "s" if r["side"] == "real" else " att"
        marks = [f.get("restarted", True) for f in r["faults"]]
        rec = ", ".join("-" if x is None else f"{x}{unit}" + ("" if hit else " (no restart)")
                        for x, hit in zip(r["recovery"], marks)) or "-"
        replay = f"~{r['records_replayed_estimate']}"
        s = r["storage_left"]
        lines.append(f"| {r['scenario']} | {r['seed']} | {r['side']} | {r['verdict']} | {c['attempted']} / "
                     f"{c['completed']} / {c['failed']} | {rec} | {r['restores']} | {replay} | {s['objects']}, {s['bytes']:,} | "
                     f"{s['on_storage_at_end']['objects']}, {s['on_storage_at_end']['bytes']:,} | "
                     f"{r['wall_seconds']} |")
    return head + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS), help="real-Flink catalogue scenarios")
    parser.add_argument("--seeds", default="1,2", help="comma-separated seeds")
    parser.add_argument("--json", type=Path, default=OUT / "flink_side_by_side.json", help="records written here")
    parser.add_argument("--md", type=Path, default=None, help="also write the Markdown table here")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/flink_side_by_side"),
                        help="each run's raw artifacts are copied here (CACHE/RUN_ID)")
    parser.add_argument("--from-cache", action="store_true", help="recompute from --cache, run nothing")
    args = parser.parse_args(argv)
    names = [s for s in args.scenarios.split(",") if s]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    records = []
    if args.from_cache:
        for name in names:
            for seed in seeds:
                for side in ("real", "emulated"):
                    records.append(record_of(args.cache / f"side-{name}-s{seed}-{side}"))
    else:
        from regionchaos.storage import EmbeddedS3

        with EmbeddedS3() as s3:
            for name in names:
                for seed in seeds:
                    records += run_pair(name, seed, s3.config, args.cache)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"records": records}, indent=1, sort_keys=True) + "\n")
    md = table(records)
    if args.md:
        args.md.write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
