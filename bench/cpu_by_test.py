"""Which tests spend the suite's CPU: pytest run in this process, each test charged what it cost.

    .venv/bin/python -m bench.cpu_by_test [--out bench/results/cpu_by_test/NAME.json] [--top N] -- [PYTEST ARGS...]
    e.g. two files:  setsid .venv/bin/python -m bench.cpu_by_test -- tests/test_ack_loss.py tests/test_swarm.py

The README's test command keeps both cores busy (`bench/suite_cpu.py`), so its wall time follows the CPU
it spends; `bench/suite_cpu.py` says which kinds of process spend it, this says which tests. The tests run in
ONE process (``-p no:xdist``: a worker's tests cannot be told apart by process), and each test (set-up, call and
tear-down, so a module fixture is charged to its module's first test) is charged the CPU seconds spent meanwhile by
this process (its own user + system time, less the sampler's thread) and by every process of the suite's
sessions: every descendant of this process (the Spark JVM, Spark's Python workers, the S3 server's child, CLI
subprocesses, Airflow's processes, Chromium), and every process that shares a session with this process or with
one of them, so a daemon that forks away from its parent (a standalone cluster's, Flink's, a service that
`scripts/ui.sh` leaves behind) still counts. A sampler thread reads ``/proc`` every `INTERVAL_S` and at every test's
start and end, and keeps each process's highest CPU time seen (like `bench/suite_cpu.py`): a process that lives
less than the interval is missed, so the totals are lower bounds. Run it under ``setsid`` (a session of its own):
anything else in this process's session would be charged too. Linux only. The wall time of a test run alone is not the suite's:
the suite runs two workers on two cores. `bench/jvm_per_test.py` (a plugin for ``-p``) splits a test's CPU
between the JVMs below this process and this process's Python instead; this counts every process of the suite.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import psutil
import pytest

from bench.suite_cpu import cpu_seconds, proc_stat  # /proc's fields, read as bench/suite_cpu.py reads them

INTERVAL_S = 0.25


class SuiteCPU:
    """The CPU seconds the suite's processes have spent so far (`__call__`), sampled from ``/proc``."""

    def __init__(self, interval_s: float = INTERVAL_S):
        self.me = os.getpid()
        self.ancestors = {p.pid for p in psutil.Process().parents()}  # the shell that started this: not the suite
        self.sessions = {os.getsid(0)}
        self.seen: dict[tuple[int, int], float] = {}  # (pid, start time) -> highest CPU seconds seen
        self.sampler_cpu = 0.0  # what the sampler thread itself spent (this process's time includes it)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, args=(interval_s,), daemon=True)
        self.thread.start()

    def _loop(self, interval_s: float) -> None:
        while not self.done.wait(interval_s):
            self._timed_sample()

    def _timed_sample(self) -> None:
        """`sample`, its own CPU time kept apart: the tests are charged this process's time less it."""
        started = time.thread_time()
        self.sample()
        spent = time.thread_time() - started
        with self.lock:
            self.sampler_cpu += spent

    def sample(self) -> None:
        """One look at every process: the suite's (descendants and their sessions') CPU time, kept at its highest."""
        try:
            descendants = {p.pid for p in psutil.Process().children(recursive=True)}
        except psutil.Error:
            descendants = set()
        with self.lock:
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                pid = int(entry.name)
                if pid == self.me or pid in self.ancestors:
                    continue
                try:
                    _, fields = proc_stat(pid)
                except (OSError, ValueError):
                    continue
                session = int(fields[3])
                if pid in descendants:
                    self.sessions.add(session)
                elif session not in self.sessions:
                    continue
                key, cpu = (pid, int(fields[19])), cpu_seconds(fields)
                if cpu > self.seen.get(key, 0.0):
                    self.seen[key] = cpu

    def __call__(self) -> float:
        self._timed_sample()
        own = os.times()
        with self.lock:
            return own.user + own.system - self.sampler_cpu + sum(self.seen.values())

    def close(self) -> None:
        self.done.set()
        self.thread.join()


class ChargeEachTest:
    """The pytest plugin: one record per test, {"test", "cpu_s", "wall_s"}."""

    def __init__(self, clock):
        self.clock = clock
        self.records: list[dict] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = self.clock(), time.perf_counter()
        yield
        self.records.append({"test": item.nodeid, "cpu_s": round(self.clock() - cpu, 2),
                             "wall_s": round(time.perf_counter() - wall, 2)})


def by_file(records: list[dict]) -> list[dict]:
    """Per test file: CPU and wall seconds and the number of tests, the costliest first."""
    files: dict[str, dict] = defaultdict(lambda: {"cpu_s": 0.0, "wall_s": 0.0, "tests": 0})
    for rec in records:
        entry = files[rec["test"].split("::", 1)[0]]
        entry["cpu_s"] += rec["cpu_s"]
        entry["wall_s"] += rec["wall_s"]
        entry["tests"] += 1
    return sorted(({"file": name, "cpu_s": round(v["cpu_s"], 1), "wall_s": round(v["wall_s"], 1),
                    "tests": v["tests"]} for name, v in files.items()), key=lambda f: -f["cpu_s"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write every test's record and the per-file totals as JSON here")
    ap.add_argument("--top", type=int, default=25, help="how many tests and files to print (default 25)")
    ap.add_argument("pytest_args", nargs="*", help="pytest's arguments (after --)")
    args = ap.parse_args(argv)
    clock = SuiteCPU()
    plugin = ChargeEachTest(clock)
    started = time.perf_counter()
    try:
        code = pytest.main(["-p", "no:xdist", "-p", "no:cacheprovider", *args.pytest_args], plugins=[plugin])
    finally:
        clock.close()
    wall = round(time.perf_counter() - started, 1)
    files = by_file(plugin.records)
    total = round(sum(r["cpu_s"] for r in plugin.records), 1)
    print(f"\n{len(plugin.records)} tests, {total} CPU s charged in {wall} s of wall (pytest exit {int(code)})")
    print(f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  file")
    for f in files[:args.top]:
        print(f"{f['cpu_s']:8.1f} {f['wall_s']:8.1f} {f['tests']:6d}  {f['file']}")
    print(f"\n{'CPU s':>8} {'wall s':>8}  test")
    for rec in sorted(plugin.records, key=lambda r: -r["cpu_s"])[:args.top]:
        print(f"{rec['cpu_s']:8.1f} {rec['wall_s']:8.1f}  {rec['test']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"command": [sys.executable, *sys.argv], "pytest_exit": int(code),
                                        "wall_s": wall, "charged_cpu_s": total, "files": files,
                                        "tests": plugin.records}, indent=1) + "\n")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
