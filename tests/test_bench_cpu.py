"""bench/cpu_by_test.py (which tests spend the CPU) and bench/suite_cpu.py's kinds of process."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pytest_workers_are_the_suite_not_kernel_threads():
    """xdist's workers retitle themselves in brackets; a kernel thread's name is in brackets too."""
    kind = _load("suite_cpu").kind
    assert kind("[pytest-xdist idle]") == "Python: pytest worker"
    assert kind("[pytest-xdist running] tests/test_swarm.py::test_x") == "Python: pytest worker"
    assert kind("[kdamond.0]") == "not the suite: kernel thread [kdamond.0]"
    assert kind("[kworker/0:1-events]") == "not the suite: kernel thread [kworker"


# Each loop burns a fixed amount of CPU time, not a fixed count of steps: 15 M steps took 0.29 CPU s on the
# fast machine of 2026-11-28, under the 0.3 s floor that slower machines had cleared.
BURN_CPU_S = 1.0  # the sampler looks every 0.25 s, so a process that ends loses up to that much
BURN = f"""import sys, time
until = time.process_time() + {BURN_CPU_S}
while time.process_time() < until:
    pass
""" + """if len(sys.argv) > 1:
    open(sys.argv[1], "w").write("done")
"""
TESTS = f'''
BURN_CPU_S = {BURN_CPU_S}
import os, subprocess, sys, time
from pathlib import Path

def test_burns_in_a_grandchild():
    inner = "import subprocess, sys; subprocess.run([sys.executable, 'burn.py'], check=True)"
    subprocess.run([sys.executable, "-c", inner], check=True)

def test_burns_in_a_daemon_that_forked_away():
    inner = "import os, subprocess, sys; subprocess.Popen([sys.executable, 'burn.py', 'daemon.done']); os._exit(0)"
    subprocess.run([sys.executable, "-c", inner], check=True)  # its child is orphaned: no longer a descendant
    deadline = time.monotonic() + 60
    while not Path("daemon.done").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the sampler's last look at it

def test_sleeps():
    time.sleep(0.5)

def test_burns_here():
    until = time.process_time() + BURN_CPU_S
    while time.process_time() < until:
        pass
'''


@pytest.mark.slow
def test_each_test_is_charged_the_cpu_of_the_suite_s_processes(tmp_path):
    """A loop in the test, the same loop two processes down, and in a daemon that forked away from its parent
    (a standalone cluster's daemons do): each charged to its test; a sleep is not."""
    (tmp_path / "test_probe.py").write_text(TESTS)
    (tmp_path / "burn.py").write_text(BURN)
    out = tmp_path / "cpu.json"
    done = subprocess.run([sys.executable, "-m", "bench.cpu_by_test", "--out", str(out), "--",
                           "test_probe.py", "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(BENCH.parent)},  # -m bench.* from another folder
                          start_new_session=True)  # a session of its own: the suite's other processes are not its
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    cpu = {rec["test"].rsplit("::", 1)[1]: rec["cpu_s"] for rec in record["tests"]}
    burn = cpu["test_burns_here"]
    assert burn > 0.6 * BURN_CPU_S, record  # a loop in this process
    assert cpu["test_burns_in_a_grandchild"] > 0.6 * burn, record  # the same loop two processes down
    assert cpu["test_burns_in_a_daemon_that_forked_away"] > 0.6 * burn, record  # and in a re-parented daemon
    assert cpu["test_sleeps"] < 0.2 * burn, record  # waiting is not charged
    [file] = record["files"]
    assert file["file"] == "test_probe.py" and file["tests"] == 4
    assert abs(file["cpu_s"] - sum(cpu.values())) < 0.1
    assert "test_burns_in_a_grandchild" in done.stdout  # the printed table
