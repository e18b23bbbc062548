"""Benchmark: emulate the `large` scenario through the Spark data plane, embedded S3.

    .venv/bin/python -m bench.large_emulate [--scenario large] [--no-spark] [--profile FILE]

In:  a catalogue scenario (default ``large``), the shared local Spark session.
Out: one JSON object on stdout: Spark session start, wall seconds (total, control plane,
     data plane by phase), S3 requests and bytes, objects written, peak RSS of this
     process tree (driver + JVM + Python workers, sampled every 0.2 s). Write-up of the committed
     runs: bench/results/large_emulate/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import threading
import time


def tree_rss_bytes(root: int) -> int:
    """Resident memory of `root` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/statm") as f:
                rss[int(name)] = int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


class PeakRss:
    def __init__(self, interval_s: float = 0.2):
        self.peak, self.interval_s, self._stop = 0, interval_s, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(os.getpid()))
            self._stop.wait(self.interval_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="large")
    parser.add_argument("--no-spark", action="store_true", help="run the partition function in the driver")
    parser.add_argument("--profile", help="write a cProfile of the driver to this file")
    args = parser.parse_args()

    from regionchaos import spark as spark_mod
    from regionchaos.dataplane import S3Persistence
    from regionchaos.emulator import Emulation
    from regionchaos.scenario import load
    from regionchaos.storage import EmbeddedS3, ObjectStore

    with EmbeddedS3() as s3, PeakRss() as rss:
        spark = None if args.no_spark else spark_mod.get_spark("regionchaos-bench")
        scenario = load(args.scenario)
        store = ObjectStore.for_run(s3.config, f"bench-{args.scenario}")
        persistence = S3Persistence(store, scenario, spark=spark)
        profiler = cProfile.Profile() if args.profile else None
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        result = Emulation(scenario, persistence).run()
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        wall = time.perf_counter() - started
        keys = store.list_keys("")
    dataplane = persistence.stats
    print(json.dumps({
        "scenario": args.scenario,
        "spark": not args.no_spark,
        "spark_session_start_seconds": spark_mod.session_start_seconds,
        "wall_seconds_emulate": round(wall, 2),
        "wall_seconds_data_plane": dataplane["wall_seconds_data_plane"],
        "wall_seconds_control_plane_only": round(wall - dataplane["wall_seconds_data_plane"], 2),
        "data_plane_by_phase": dataplane["wall_seconds_by_phase"],
        "s3_requests": dataplane["s3_requests"],
        "s3_requests_by_op": dataplane["s3_requests_by_op"],
        "s3_mib_written": round(dataplane["s3_bytes_written"] / 2**20, 1),
        "state_files": dataplane["state_files"],
        "txn_files": dataplane["txn_files"],
        "objects_at_end": len(keys),
        "flushes": dataplane["flushes"],
        "checkpoints": {k: result.stats[k] for k in ("triggered", "global", "regional", "aborted")},
        "peak_rss_mib_process_tree": round(rss.peak / 2**20),
        "loadavg_1m_at_end": os.getloadavg()[0],
    }, indent=1))


if __name__ == "__main__":
    main()
