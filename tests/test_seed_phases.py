"""bench/seed_phases.py: a swarm seed's phases are measured on the code it is pointed at, and a bad
``--against`` is refused before anything runs. No Spark, no S3 (in-memory stores)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_inner_process_times_every_phase_of_real_seeds():
    done = subprocess.run([sys.executable, "-m", "bench.seed_phases", "--inner", "--seeds", "2"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    phases = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(phases) == {"scenario", "emulate", "read", "rows", "arrow", "total"}
    assert all(phases[p] > 0 for p in ("emulate", "read", "rows", "arrow"))
    assert abs(phases["total"] - sum(v for k, v in phases.items() if k != "total")) < 0.05


def test_against_a_directory_that_is_no_checkout_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.seed_phases", "--against", str(tmp_path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert "--against" in done.stderr and "not a checkout" in done.stderr


def test_an_unknown_scenario_is_refused_naming_the_option():
    done = subprocess.run([sys.executable, "-m", "bench.seed_phases", "--scenario", "no-such-scenario"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert "--scenario no-such-scenario" in done.stderr


def test_a_big_run_is_refused_before_it_is_emulated():
    done = subprocess.run([sys.executable, "-m", "bench.seed_phases", "--scenario", "large"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert "--scenario large: a big run" in done.stderr and "bench/run.py" in done.stderr
