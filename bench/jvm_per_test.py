"""pytest plugin: how much CPU each test costs in the JVMs it drives (the GX passes) and in Python.

    PYTHONPATH=bench .venv/bin/python -m pytest -n 0 -p jvm_per_test tests/test_x.py ...
    (env JVM_PER_TEST_OUT: where the table goes; default bench/results/jvm_per_test/last.tsv)

In:  the tests pytest runs in this process (``-n 0``: one process, so its Spark driver is the one
     shared session of tests/conftest_spark.py).
Out: one line per test (setup, call and teardown together): node id, CPU seconds of every java
     process below this one (the Spark driver, and the drivers of subprocesses while they live),
     CPU seconds of this Python process, wall seconds; tab-separated, appended.

Why: the test suite's time is CPU (both cores busy), and most of it is the JVMs' (bench/results/
suite_cpu/README.md); this says which tests spend it. A subprocess's JVM that exits within the
test is counted up to its last sample only (psutil sees it while it lives). Every process of the suite, not only
the JVMs and this one (Airflow's, Chromium, daemons that fork away): `bench/cpu_by_test.py`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

OUT = Path(os.environ.get("JVM_PER_TEST_OUT", Path(__file__).resolve().parent / "results" / "jvm_per_test" / "last.tsv"))


def jvm_cpu_seconds() -> float:
    """CPU seconds so far of every java process below this one."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            if "java" in child.name():
                times = child.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    jvm, wall, own = jvm_cpu_seconds(), time.time(), psutil.Process().cpu_times()
    yield
    after = psutil.Process().cpu_times()
    python = (after.user + after.system) - (own.user + own.system)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("a") as fh:
        fh.write(f"{item.nodeid}\t{jvm_cpu_seconds() - jvm:.2f}\t{python:.2f}\t{time.time() - wall:.2f}\n")
