"""bench/rule_costs.py and bench/rule_diff.py: bad options are refused before anything runs, and the cost report
puts the dearest suite and rule first. No Spark (the measurements themselves are benchmarks, run by hand)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "rule_costs.py"


def script():
    spec = importlib.util.spec_from_file_location("bench_rule_costs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_scenario_that_is_not_emulated_is_refused_naming_the_option():
    for scenario in ("no-such-scenario", "real-flink-tm-kills"):
        done = subprocess.run([sys.executable, "-m", "bench.rule_costs", "--scenario", scenario], capture_output=True,
                              text=True, cwd=ROOT, timeout=60)
        assert done.returncode == 2, done.stderr
        assert f"--scenario {scenario}: not an emulated catalogue scenario" in done.stderr


def test_no_repetition_is_refused():
    done = subprocess.run([sys.executable, "-m", "bench.rule_costs", "--scenario", "smoke", "--repeat", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "--repeat" in done.stderr


def test_the_report_lists_the_dearest_first_and_sums_the_suites():
    result = {"scenario": "large", "seed": 1, "rows": {"entries": 1000, "run": 1, "channel_state": 0},
              "emulate_s": 36.0, "load_s": 31.0,
              "suites": {"liveness": (0.5, 0.9), "notifications": (16.6, 27.6), "flip_bounds": (2.6, 4.1)},
              "rules": {"notifications.a": (0.3, 0.4), "notifications.commit_upon_notification": (15.4, 25.0)}}
    text = script().markdown(result, 2, 1)
    suites = [line.split(" | ")[0].lstrip("| ") for line in text.splitlines() if line.startswith("| ")]
    assert suites[1:4] == ["notifications", "flip_bounds", "liveness"]
    assert "| all | 19.70 | 32.60 |" in text
    assert text.index("notifications.commit_upon_notification") < text.index("notifications.a |")
    assert "channel_state" not in text.splitlines()[0]  # empty tables are left out of the row counts


# bench/rule_diff.py: the differential check of a rule's rewrite refuses what it cannot compare, before any run.
def test_rule_diff_refuses_an_unknown_rule_and_a_revision_without_the_rule():
    done = subprocess.run([sys.executable, "-m", "bench.rule_diff", "notifications.no_such_rule"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "rule notifications.no_such_rule: no expectations/sql" in done.stderr
    done = subprocess.run([sys.executable, "-m", "bench.rule_diff", "notifications.commit_upon_notification",
                           "--against", "no-such-revision"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--against no-such-revision: no expectations/sql/notifications/commit_upon_notification.sql" in done.stderr
