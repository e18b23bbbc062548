"""End to end through Airflow: the README's main-job command, and refused triggers.

In:  scripts/demo_airflow.sh (sources scripts/airflow-env.sh: Airflow on SQLite in a
     scratch AIRFLOW_HOME; the runner starts its embedded S3; local Spark), the
     ``airflow dags trigger`` CLI with a bad param. (Triggers over REST, through the api-server of
     scripts/ui.sh, are tests/test_airflow_browser.py's.)
Out: pass/fail on what a person sees: the verdict, the report location, the DAG run state (a caught
     mutant turns a swarm DAG run red, its summarize task saying so in one line); a task log without GX's
     INFO flood; a clear refusal of a bad value, naming the form field, and no DAG run created for it.
     A caught mutant in a manual DAG run (red, its note, its tasks' "Chaos report" links, its failure line
     and progress lines in the task logs) is tests/test_airflow_browser.py's run, through the scheduler;
     what scripts/demo_airflow.sh prints for a failed run is tests/test_demo_summary.py's.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[1]
DEMO_TIMEOUT_S = int(os.environ.get("REGIONCHAOS_DEMO_TIMEOUT_S", "600"))  # longer on a crowded machine


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without Airflow settings or S3 endpoints of its own."""
    dropped = ("AIRFLOW", "REGIONCHAOS_", "AWS_ENDPOINT_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update({"REGIONCHAOS_AIRFLOW_HOME": str(home), "REGIONCHAOS_LOCAL_DIR": str(home / "runs"), **extra})
    return env


@pytest.fixture(scope="module")
def airflow_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("airflow-e2e")


@pytest.fixture(scope="module")
def demo(airflow_home):
    """`scripts/demo_airflow.sh` as the README runs it (default conf: smoke)."""
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo_airflow.sh")], cwd=ROOT, env=clean_env(airflow_home),
        capture_output=True, text=True, timeout=DEMO_TIMEOUT_S,
    )
    log = airflow_home / "demo_airflow.log"
    proc.log = log.read_text() if log.exists() else ""  # the next demo call overwrites it
    return proc


def dag_runs(home: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "airflow.db") as db:
        return db.execute("SELECT run_id, state FROM dag_run WHERE dag_id = 'regionchaos_manual'").fetchall()


def test_the_demo_runs_the_manual_dag_and_prints_verdict_and_report(demo, airflow_home):
    out = demo.stdout
    assert demo.returncode == 0, out + demo.stderr + demo.log[-4000:]
    verdict = re.search(r"^regionchaos verdict: (\w+) \(scenario smoke, seed 1, mutant none, run (\S+)\)$",
                        out, re.M)
    assert verdict, out
    assert verdict.group(1) == "valid", out
    run_id = verdict.group(2)
    assert f"regionchaos report: s3://regionchaos/runs/{run_id}/report/index.html" in out
    assert re.search(r"^regionchaos replay: regionchaos run --scenario smoke --seed 1\b", out, re.M), out
    assert "dag run: success (airflow exit 0)" in out
    local_report = airflow_home / "runs" / run_id / "report" / "index.html"
    assert f"regionchaos report (local copy): {local_report}" in out
    assert local_report.read_text().lstrip().lower().startswith(("<!doctype html", "<html"))
    assert dag_runs(airflow_home) == [(dag_runs(airflow_home)[0][0], "success")]
    assert demo.log and not re.findall(r"^.*\[error\s*\].*$", demo.log, re.M)  # e.g. the link's "XCom not found"
    # the summary is an XCom, not echoed into the log; the log ends with where the report is
    assert "Returned value was: {'findings'" not in demo.log and "Done. Returned value not shown" in demo.log
    chaos_run = demo.log.split("starting task_id=chaos_run")[1].splitlines()
    own = chaos_run[:next(i for i, line in enumerate(chaos_run) if "::group::Post Execute" in line)]
    # the task's last line (a log record: `operators.account`), then Airflow's Post Execute group
    assert re.search(rf"\] regionchaos report \(local copy\): {re.escape(str(local_report))} +\[regionchaos_airflow",
                     own[-1]), own[-3:]
    # the local copy of the Data Docs asks no other host (written offline: regionchaos/datadocs.py)
    pages = list((airflow_home / "runs" / run_id / "datadocs").rglob("*.html"))
    assert pages and (airflow_home / "runs" / run_id / "datadocs" / "static" / "vendor" / "jquery.min.js").is_file()
    assert not [p for p in pages if re.search(r"<(script|link)\b[^>]*(src|href)=[\"']https?://", p.read_text())]


def test_a_trigger_with_an_invalid_param_is_refused_and_starts_no_run(demo, airflow_home):
    """Every param's schema is checked in tests/test_dags.py; here the refusal end to end."""
    conf = '{"scenario": "smoke", "seed": -1}'
    refusal = "Invalid input for param seed: -1 is less than the minimum of 0"
    before = dag_runs(airflow_home)
    assert before, "the demo run should exist (the DAG is known to the metadata DB)"
    trigger = subprocess.run(
        ["bash", "-c", f"source scripts/airflow-env.sh && airflow dags trigger regionchaos_manual --conf '{conf}'"],
        cwd=ROOT, env=clean_env(airflow_home, REGIONCHAOS_SKIP_MIGRATE="1"),
        capture_output=True, text=True, timeout=120,
    )
    assert trigger.returncode != 0
    assert refusal in trigger.stdout + trigger.stderr, (trigger.stdout + trigger.stderr)[-3000:]
    assert dag_runs(airflow_home) == before


def test_the_demo_refuses_an_invalid_conf_before_any_run(demo, airflow_home):
    before = dag_runs(airflow_home)
    refused = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo_airflow.sh"), '{"scenario": "smoke", "mutant": "bogus"}'],
        cwd=ROOT, env=clean_env(airflow_home), capture_output=True, text=True, timeout=120,
    )
    assert refused.returncode != 0
    assert "ParamValidationError: Invalid input for param mutant: 'bogus' is not one of" in refused.stdout
    assert "dag run: not started" in refused.stdout
    assert dag_runs(airflow_home) == before


def test_a_run_created_around_the_api_server_fails_its_first_task_naming_the_field(demo, airflow_home):
    """`airflow dags test` creates the run straight on the metadata DB: the whole-form check
    runs in resolve_scenario, which fails before anything is emulated."""
    failed = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo_airflow.sh"), '{"scenario": "smoke", "rescale": "99:1"}'],
        cwd=ROOT, env=clean_env(airflow_home), capture_output=True, text=True, timeout=300,
    )
    assert failed.returncode != 0
    assert ("AirflowFailException: invalid trigger form: Rescale plan (rescale): '99:1' rescales after "
            "checkpoint 99, but scenario smoke has 12 checkpoints (indices 0 to 11)") in failed.stdout, failed.stdout
    assert "dag run: failed" in failed.stdout
    assert "regionchaos verdict" not in failed.stdout


def test_the_swarm_dag_runs_its_batches_on_the_fast_path_and_a_caught_mutant_turns_it_red(demo, airflow_home):
    """`airflow dags test regionchaos_swarm`: six smoke seeds in two mapped batches, each a fast
    swarm (seeds as Spark tasks, tables under swarms/, one GX pass); with the mutant
    failed-region-commits some seed catches it, through notifications, and the DAG run is red by the
    one outcome table (a caught mutant exits 1), its summarize task saying so."""
    conf = '{"scenario": "smoke", "seeds": 6, "first_seed": 1, "batch_size": 3, "mutant": "failed-region-commits"}'
    log = airflow_home / "swarm.log"
    proc = subprocess.run(
        ["bash", "-c", f"source scripts/airflow-env.sh && airflow dags test regionchaos_swarm --conf '{conf}' "
                       f"> '{log}' 2>&1"],
        cwd=ROOT, env=clean_env(airflow_home, REGIONCHAOS_SKIP_MIGRATE="1"), capture_output=True, text=True,
        timeout=DEMO_TIMEOUT_S,
    )
    text = log.read_text()
    assert proc.returncode != 0, text[-4000:]
    assert re.search(r"DagRun Finished: .*state=failed", text), text[-4000:]
    batches = re.findall(r"batch \d: 3 judged, (\d) failing, 0 unknown in [\d.]+ s; tables: s3://\S+/swarms/(\S+)/tables/",
                         text)
    assert len(batches) == 2, text[-4000:]  # both batches ran: red is the summary's decision, not a crash
    assert sum(int(failing) for failing, _ in batches) >= 1
    caught = re.findall(r"seed (\d): invalid \[([^\]]*)\]; replay: regionchaos run --scenario smoke --seed \1 .*"
                        r"--mutant failed-region-commits; deep replay: regionchaos replay (\S+) --seed \1", text)
    assert any("notifications" in failed for _, failed, _ in caught), text[-4000:]
    said = re.search(r"swarm outcome: swarm of 6 seed\(s\) with mutant failed-region-commits: the checks caught mutant "
                     r"failed-region-commits on (\d) of 6 seeds .*\(exit 1\)", text)
    assert said and int(said.group(1)) == sum(int(failing) for failing, _ in batches), text[-4000:]
    # the judged failure is one line (`RunFailed`), no traceback
    assert re.search(r"Task exited .*exit_code='swarm failed, 1 problem\(s\): swarm of 6 seed", text), text[-4000:]
    assert "Traceback" not in text, text[-4000:]
    assert "great_expectations._docs_decorators" not in text  # GX's INFO lines stay out of the task log
