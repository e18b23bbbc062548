"""Task bodies the DAGs share: one chaos run, publishing its report, the spark-submit switch.

In:  a run entry ``{"run_id", "scenario_name", "scenario": Scenario.to_dict(), "overrides",
     "mutant", "expect", "invariant"}`` built by a DAG's planning task (``overrides``, the
     ``--set`` keys asked for, only make the replay line).
Out: tasks added to the current DAG / task group by `add_scenario_run`:
       local (default):  chaos_run -> publish_report
       cluster:          spark_args -> emulate (SparkSubmitOperator) -> validate -> publish_report
     chaos_run / validate return the runner's summary (XCom) and print verdict, report,
     replay; publish_report returns the run's result row (`runs.result_row`).

The switch: the Airflow Variable ``regionchaos_spark_conn_id`` names a Spark connection
(e.g. ``spark://spark-master:7077``); set it as the environment variable
``AIRFLOW_VAR_REGIONCHAOS_SPARK_CONN_ID`` on the dag-processor and the workers. It is read
while DAG files are parsed, so it is read from the environment only (no metadata DB
access at parse time). In cluster mode ``spark_jobs/emulate.py`` emulates the run on the
cluster into shared storage, then `validate` judges and reports it in the worker through
``regionchaos.runner.finish`` (see its docstring); shared storage is required there.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from airflow.sdk import get_current_context, task

from regionchaos_airflow.runs import result_row

log = logging.getLogger(__name__)

SPARK_CONN_VARIABLE = "regionchaos_spark_conn_id"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
EMULATE_APPLICATION = PROJECT_ROOT / "spark_jobs" / "emulate.py"
RUN_TIMEOUT = timedelta(hours=2)
LOCAL_RUNS_AT_ONCE = 2  # each local run holds a Spark session; more thrash a small worker


def spark_conn_id(env: dict[str, str] | None = None) -> str | None:
    """The Spark connection id when the cluster switch is on, else None (local Spark)."""
    env = os.environ if env is None else env
    return env.get(f"AIRFLOW_VAR_{SPARK_CONN_VARIABLE.upper()}") or None


def verdict_lines(summary: dict[str, Any]) -> list[str]:
    """What a run prints: verdict, failed invariants, report location, replay line."""
    row = result_row(summary)
    lines = [
        f"regionchaos verdict: {row['verdict']} (scenario {row['scenario']}, seed {row['seed']}, "
        f"mutant {row['mutant'] or 'none'}, run {row['run_id']})"
    ]
    if row["failed"]:
        lines.append(f"regionchaos failed invariants: {', '.join(row['failed'])}")
    lines.append(f"regionchaos report: {row['report']}")
    if summary.get("local"):
        lines.append(f"regionchaos report (local copy): {Path(summary['local']) / 'report' / 'index.html'}")
    lines.append(f"regionchaos replay: {row['replay']}")
    return lines


def local_runs_dir() -> Path:
    """Where runs on the embedded S3 are mirrored (their S3 ends with the task)."""
    return Path(os.environ.get("REGIONCHAOS_LOCAL_DIR") or PROJECT_ROOT / ".runs")


def _label(entry: dict[str, Any]) -> None:
    """Name the mapped task instance after its scenario (see map_index_template)."""
    get_current_context()["run_label"] = f"{entry.get('scenario_name')} ({entry.get('run_id')})"


@task(map_index_template="{{ run_label }}", execution_timeout=RUN_TIMEOUT, multiple_outputs=False,
      max_active_tis_per_dagrun=LOCAL_RUNS_AT_ONCE)
def chaos_run(entry: dict[str, Any]) -> dict[str, Any]:
    """Emulate, validate and report one run with the runner, in this task's process.

    One task, not three: with the default embedded S3 server, storage lives only as long
    as the process that started it (its human-facing artifacts are mirrored to
    `local_runs_dir()`). Fails (and so retries) on verdict ``unknown``.
    """
    from airflow.sdk.exceptions import AirflowException

    from regionchaos import runner
    from regionchaos.scenario import from_dict
    from regionchaos_airflow.storage import resolve_storage

    _label(entry)
    scenario = from_dict(entry["scenario"])
    storage = resolve_storage()
    summary = runner.run(
        scenario, mutant=entry.get("mutant"), storage=storage, run_id=entry["run_id"],
        overrides=entry.get("overrides"), local_dir=None if storage else local_runs_dir(),
    )
    for line in verdict_lines(summary):
        print(line, flush=True)
    if summary.get("verdict") not in ("valid", "invalid"):
        raise AirflowException(f"run {entry['run_id']}: verdict {summary.get('verdict')!r}")
    return summary


@task
def spark_args(entry: dict[str, Any]) -> list[str]:
    """Arguments of ``spark_jobs/emulate.py`` for one run (shared storage required)."""
    from airflow.sdk.exceptions import AirflowFailException

    from regionchaos_airflow.storage import resolve_storage

    storage = resolve_storage()
    if storage is None or not storage.endpoint_url:
        raise AirflowFailException("cluster mode needs shared storage: set the regionchaos_s3 "
                                   "connection or REGIONCHAOS_S3_ENDPOINT")
    args = ["--scenario", entry["scenario_name"], "--seed", str(entry["scenario"]["seed"]),
            "--run-id", entry["run_id"], "--s3-endpoint", storage.endpoint_url, "--bucket", storage.bucket]
    for key, value in (entry.get("overrides") or {}).items():
        args += ["--set", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
    if entry.get("mutant"):
        args += ["--mutant", entry["mutant"]]
    return args


def _spark_env() -> dict[str, str]:
    """Settings handed to spark-submit's driver (credentials come from its own environment)."""
    names = ("REGIONCHAOS_S3_ENDPOINT", "REGIONCHAOS_BUCKET", "AWS_DEFAULT_REGION", "PYTHONPATH")
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def emulate_operator(conn_id: str, args: Any):
    """The cluster-mode emulate step: spark-submit of spark_jobs/emulate.py."""
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    return SparkSubmitOperator(
        task_id="emulate",
        conn_id=conn_id,
        application=str(EMULATE_APPLICATION),
        application_args=args,
        name="regionchaos-emulate",
        env_vars=_spark_env(),
        execution_timeout=RUN_TIMEOUT,
    )


@task(map_index_template="{{ run_label }}", execution_timeout=RUN_TIMEOUT, multiple_outputs=False)
def validate(entry: dict[str, Any]) -> dict[str, Any]:
    """Cluster mode: validate and report the run spark_jobs/emulate.py wrote to storage."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    from regionchaos import runner
    from regionchaos_airflow.storage import resolve_storage

    _label(entry)
    finish = getattr(runner, "finish", None)
    if finish is None:
        raise AirflowFailException("this regionchaos has no runner.finish(run_id, storage=...) to "
                                   "validate and report an emulated run: use local mode")
    summary = finish(entry["run_id"], storage=resolve_storage(), overrides=entry.get("overrides"))
    for line in verdict_lines(summary):
        print(line, flush=True)
    if summary.get("verdict") not in ("valid", "invalid"):
        raise AirflowException(f"run {entry['run_id']}: verdict {summary.get('verdict')!r}")
    return summary


@task(map_index_template="{{ run_label }}", multiple_outputs=False)
def publish_report(summary: dict[str, Any]) -> dict[str, Any]:
    """Check that the run's summary and report are in shared storage; return its result row.

    With the embedded S3 (no shared storage configured) nothing outlived chaos_run: the
    row says ``published: false`` and the local mirror is where the report is.
    """
    from airflow.sdk.exceptions import AirflowException

    from regionchaos.storage import ObjectStore
    from regionchaos_airflow.storage import resolve_storage

    _label({"scenario_name": summary.get("scenario"), "run_id": summary.get("run_id")})
    storage = resolve_storage()
    row = result_row(summary)
    if storage is None:
        row["published"] = False
        print("regionchaos note: the embedded S3 server ended with chaos_run (summary, report and "
              "Data Docs were mirrored locally); set REGIONCHAOS_S3_ENDPOINT or the regionchaos_s3 "
              "connection to list runs in Airflow", flush=True)
    else:
        store = ObjectStore.for_run(storage, row["run_id"])
        missing = [key for key in ("summary.json", "report/index.html") if not store.exists(key)]
        if missing:
            raise AirflowException(f"run {row['run_id']}: {', '.join(missing)} missing under {store.uri()}")
        row["published"] = True
        row["datadocs"] = store.exists("datadocs/index.html")
        print(f"regionchaos report in Airflow: {row['report_view']}", flush=True)
    return row


def add_scenario_run(entry: Any) -> Any:
    """Add one run's tasks to the current DAG or task group; returns publish_report's output."""
    conn_id = spark_conn_id()
    if conn_id is None:
        return publish_report(chaos_run(entry))
    summary = validate(entry)
    emulate_operator(conn_id, spark_args(entry)) >> summary
    return publish_report(summary)
