"""What scripts/demo_airflow.sh prints of an `airflow dags test` log (scripts/dag-test-summary.sh), and its exit code.

In:  tests/data/dag-test-caught-mutant.log, the log of a real `scripts/demo_airflow.sh '{"scenario": "smoke",
     "mutant": "failed-region-commits"}'` (its AIRFLOW_HOME's path replaced), and edited copies of it.
Out: pass/fail: the verdict lines once each, the judged failure as one "task failed:" line, the DAG run's state,
     and an exit code that is 0 only for a run that succeeded with airflow exiting 0. The real manual DAG run of a
     caught mutant is tests/test_airflow_browser.py's (through the scheduler); the valid path of demo_airflow.sh is
     tests/test_airflow_e2e.py's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "dag-test-caught-mutant.log"
RUN = "smoke-s1-failed-region-commits-manual-2026-11-29T00-11-12-467238-00-00"


def summary(log: Path, status: int) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "dag-test-summary.sh"), str(log), str(status)],
                          capture_output=True, text=True, timeout=30)


def test_a_caught_mutant_s_log_gives_its_verdict_lines_once_and_one_failure_line():
    done = summary(LOG, 1)
    failed = "exactly_once_output, notifications"
    assert done.returncode != 0
    assert done.stdout.splitlines() == [
        f"regionchaos verdict: invalid (scenario smoke, seed 1, mutant failed-region-commits, run {RUN})",
        f"regionchaos failed invariants: {failed}",
        f"regionchaos report: s3://regionchaos/runs/{RUN}/report/index.html",
        f"regionchaos report (local copy): /home/user/.regionchaos/airflow/runs/{RUN}/report/index.html",
        "regionchaos replay: regionchaos run --scenario smoke --seed 1 --mutant failed-region-commits",
        "regionchaos note: the embedded S3 server ended with chaos_run (summary, report and Data Docs were mirrored "
        "locally); run scripts/ui.sh, or set the regionchaos_s3 connection or REGIONCHAOS_S3_ENDPOINT, to list runs "
        "in Airflow",
        f"regionchaos outcome: invalid: the checks caught mutant failed-region-commits; failed invariants: {failed}",
        f"task failed: run {RUN} invalid: the checks caught mutant failed-region-commits; failed invariants: {failed}",
        "dag run: failed (airflow exit 1)",
    ], done.stdout


def test_only_a_successful_run_with_airflow_exiting_0_exits_0(tmp_path):
    succeeded = tmp_path / "succeeded.log"
    succeeded.write_text(LOG.read_text().replace("state=failed", "state=success"))
    assert summary(succeeded, 0).returncode == 0
    assert summary(succeeded, 0).stdout.splitlines()[-1] == "dag run: success (airflow exit 0)"
    assert summary(succeeded, 1).returncode != 0  # airflow itself failed
    assert summary(LOG, 0).returncode != 0  # the run failed
    empty = tmp_path / "empty.log"
    empty.write_text("")
    done = summary(empty, 2)
    assert done.returncode != 0 and done.stdout == "dag run: not started (airflow exit 2)\n"
