"""Which tests spend the suite's CPU: pytest run in this process, each test charged what it cost.

    .venv/bin/python bench/cpu_by_test.py [--out bench/results/cpu_by_test/NAME.json] [--top N] -- [PYTEST ARGS...]
    e.g. the Spark group:  .venv/bin/python bench/cpu_by_test.py -- tests/test_ack_loss.py tests/test_swarm.py

The README's test command keeps both cores busy (`bench/suite_cpu.py`), so its wall time follows the CPU
it spends; `bench/suite_cpu.py` says which kinds of process spend it, this says which tests. The tests run in
ONE process (``-p no:xdist``: a worker's tests cannot be told apart by process), and each test (set-up, call and
tear-down, so a module fixture is charged to its module's first test) is charged the CPU seconds that this
process and all its descendants spent meanwhile:
- this process: its own user + system time, plus its reaped children's (``os.times``);
- every live descendant (the Spark JVM, Spark's Python workers, the S3 server's child, CLI subprocesses, Airflow's
  processes, Chromium): its own time plus its reaped children's (psutil), read before and after each test.
A descendant that ends during a test is counted through whoever reaps it; one re-parented to init (a daemon that
forks away) is lost from then on, so a long-lived service is charged to the test that ends it (the module's last
tear-down). The wall time of a test run alone is not the suite's: the suite runs two workers on two cores.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import psutil
import pytest


def tree_cpu_s() -> float:
    """CPU seconds spent so far by this process, its reaped children, and every live descendant."""
    me = psutil.Process()
    own = os.times()
    total = own.user + own.system + own.children_user + own.children_system
    for child in me.children(recursive=True):
        try:
            t = child.cpu_times()
        except psutil.Error:  # it ended between the listing and the read: its reaper counts it
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


class ChargeEachTest:
    """The pytest plugin: one record per test, {"test", "cpu_s", "wall_s"}."""

    def __init__(self, clock=tree_cpu_s):
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
    plugin = ChargeEachTest()
    started = time.perf_counter()
    code = pytest.main(["-p", "no:xdist", "-p", "no:cacheprovider", *args.pytest_args], plugins=[plugin])
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
