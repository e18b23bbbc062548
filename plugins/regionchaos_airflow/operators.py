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

The verdict in Airflow's own terms, by the one outcome table (`regionchaos.judge.policy.run_outcome`,
README: Outcomes), as the CLI's exit code:
  * `publish_report` of a manual run fails the task (so the DAG run) once the report is
    published, when the run's outcome is not green (a violation no finding explains, a caught
    or uncaught mutant, a finding's scenario that no longer fails, unknown): one log line
    (`RunFailed`: no traceback, no retry) with the outcome's sentence and the report. A run showing
    a recorded finding stays green and says so.
  * every run task pushes the XCom ``regionchaos_note`` (the outcome's sentence, the run, the report
    link), which ``regionchaos_airflow.listener`` copies into the DAG run's note, and
    ``regionchaos_report_url``, which the "Chaos report" extra link (`ChaosReportLink`) opens: the
    report's one address inside Airflow's UI (`report_url`). The DAG run and its note are stored beside
    the run's ``summary.json``, in ``airflow.json`` (`record_dag_run`): the summary itself is written
    once, by the run.
  * task logs: GX, Spark and py4j at WARNING (`quiet_libraries`), the JVM's output at WARNING
    (`regionchaos_airflow.jvmlog`), the runner's progress (emulation, then one line per GX suite:
    `suite_progress`), the outcome, and last the report's address in Airflow, where Airflow's log
    view makes it a link; the return value is an XCom, not echoed into the log.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn

from airflow.providers.standard.decorators.python import _PythonDecoratedOperator
from airflow.sdk import BaseOperatorLink, get_current_context, task
from airflow.sdk.bases.decorator import task_decorator_factory

from regionchaos.judge import RunOutcome, run_outcome
from regionchaos.judge.judgement import UNKNOWN
from regionchaos_airflow.jvmlog import jvm_output_as_warnings
from regionchaos_airflow.runs import (AIRFLOW_KEY, PLUGIN_PREFIX, RUN_ID_RE, in_airflow, result_row, skipped_runs,
                                      view_links)

log = logging.getLogger(__name__)

SPARK_CONN_VARIABLE = "regionchaos_spark_conn_id"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
EMULATE_APPLICATION = PROJECT_ROOT / "spark_jobs" / "emulate.py"
RUN_TIMEOUT = timedelta(hours=2)
LOCAL_RUNS_AT_ONCE = 2  # each local run holds a Spark session; more thrash a small worker
NOTE_XCOM = "regionchaos_note"  # the DAG run's note (copied by regionchaos_airflow.listener)
REPORT_URL_XCOM = "regionchaos_report_url"  # what the "Chaos report" extra link opens
REPORT_LINE = "regionchaos_report_line"  # context key: the report's address, the run task's last log line
QUIET_LOGGERS = ("great_expectations", "py4j", "pyspark")  # INFO from these buries the verdict


def spark_conn_id(env: dict[str, str] | None = None) -> str | None:
    """The Spark connection id when the cluster switch is on, else None (local Spark)."""
    env = os.environ if env is None else env
    return env.get(f"AIRFLOW_VAR_{SPARK_CONN_VARIABLE.upper()}") or None


# -- the verdict in Airflow's terms ----------------------------------------------------------

class RunFailed(SystemExit):
    """A run task's judged failure: its one line (verdict, failed invariants, the report's address).

    Airflow's task runner logs any other exception with its traceback ("Task failed with exception"
    and a dozen frames of Airflow's own); a SystemExit it logs as one ERROR line, ``Task exited
    exit_code=<this text>``, and then retries the task only if the task has retries left. The tasks
    that judge (`publish_report`, the nightly's and the swarm's summaries) have none: the same
    summary gives the same verdict."""


def airflow_base_url() -> str:
    """Where this Airflow's UI answers (``[api] base_url``, else the API host and port)."""
    from airflow.sdk.configuration import conf

    base = conf.get("api", "base_url", fallback=None)
    if not base:
        host = conf.get("api", "host", fallback="") or "127.0.0.1"
        host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        base = f"http://{host}:{conf.get('api', 'port', fallback='8080')}"
    return base.rstrip("/")


def report_url(run_id: str, base_url: str | None = None) -> str | None:
    """The run's report page inside Airflow's UI (`runs.in_airflow`; None for an unsafe run id): the one
    address the "Chaos report" link, the DAG run's note, the task log and the runs view share."""
    if not run_id or not RUN_ID_RE.match(run_id):
        return None
    base = airflow_base_url() if base_url is None else base_url.rstrip("/")
    return base + in_airflow(view_links(run_id)["report_view"])


def note_text(outcome: RunOutcome, summary: dict[str, Any], url: str | None) -> str:
    """The DAG run's note (Markdown): the outcome's sentence (verdict, failed invariants, the findings that
    explain them, a mutant caught or not), the run, the report link."""
    lines = [f"**{outcome.sentence}**",
             f"scenario {summary.get('scenario')}, seed {summary.get('seed')}, mutant {summary.get('mutant') or 'none'}, "
             f"run `{summary.get('run_id')}`"]
    if url:
        lines.append(f"[Chaos report]({url})")
    elif summary.get("local"):
        lines.append(f"report (local copy, no shared storage): `{Path(summary['local']) / 'report' / 'index.html'}`")
    return "\n\n".join(lines)


def runs_view_url(base_url: str | None = None) -> str:
    """The plugin's runs view (Browse > Chaos runs) inside Airflow's UI."""
    return (airflow_base_url() if base_url is None else base_url.rstrip("/")) + in_airflow(PLUGIN_PREFIX + "/")


def _problem_lines(problems: list[str], limit: int = 8) -> list[str]:
    lines = [f"- {p}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"- ... and {len(problems) - limit} more (see the summarize task's log)")
    return lines


def nightly_note(plan: list[dict[str, Any]], rows: list[dict[str, Any]], swarm: dict[str, Any] | None,
                 problems: list[str], base_url: str | None = None) -> str:
    """The nightly DAG run's note: how many scenarios ran as expected (green by the outcome table), the
    problems, the runs view."""
    verdicts = {v: sum(r.get("verdict") == v for r in rows) for v in ("valid", "invalid", "unknown")}
    skipped = skipped_runs(plan)
    head = (f"**nightly: {len(plan) - len(skipped)} scenario(s) as expected**" if not problems else
            f"**nightly FAILED: {len(problems)} problem(s)**")
    lines = [head, f"verdicts: {verdicts['valid']} valid, {verdicts['invalid']} invalid, {verdicts['unknown']} unknown"
             + (f"; swarm sample: {swarm['seeds']} seeds" if swarm and swarm.get("seeds") else "")]
    if problems:
        lines.append("\n".join(_problem_lines(problems)))
    if skipped:
        lines.append("skipped (not judged):\n" + "\n".join(f"- {line}" for line in skipped))
    lines.append(f"[Chaos runs]({runs_view_url(base_url)})")
    return "\n\n".join(lines)


def swarm_note(rows: list[dict[str, Any]], outcome: RunOutcome, base_url: str | None = None) -> str:
    """The swarm DAG run's note: the swarm's outcome (`regionchaos.judge.policy.swarm_outcome`: the worst of
    its seeds'; with a mutant, whether a seed caught it), the verdicts, the problems (seeds with replay lines),
    the runs view (its swarm reports)."""
    counts = {v: sum(r.get("verdict") == v for r in rows) for v in ("valid", "invalid", "unknown")}
    lines = [f"**{outcome.sentence}**", f"{counts['valid']} valid, {counts['invalid']} invalid, "
                                        f"{counts['unknown']} unknown"]
    if not outcome.green:
        lines.append("\n".join(_problem_lines(list(outcome.problems))))
    lines.append(f"[Chaos runs]({runs_view_url(base_url)})")
    return "\n\n".join(lines)


def _push(key: str, value: Any) -> None:
    get_current_context()["ti"].xcom_push(key, value)


class ChaosReportLink(BaseOperatorLink):
    """The task instance's "Chaos report" button: the run's report served by the plugin.

    Airflow 3 computes the link in the task's process when the task ends and stores it as an
    XCom; the api-server shows that value. It comes from the XCom ``regionchaos_report_url``
    the task pushed (empty, so no button, when the run has no report in shared storage)."""

    name = "Chaos report"

    def get_link(self, operator, *, ti_key) -> str:
        from airflow.sdk.bases.xcom import BaseXCom

        return BaseXCom.get_value(ti_key=ti_key, key=REPORT_URL_XCOM) or ""


class ChaosRunOperator(_PythonDecoratedOperator):
    """``@task``'s operator with the "Chaos report" extra link; its log ends with the report's address."""

    operator_extra_links = (ChaosReportLink(),)

    def execute(self, context):
        # The link's XCom exists from the start (empty: no button), so computing the link at the task's end
        # never asks for a missing XCom, which Airflow's client logs as an error ("XCom not found") in
        # the task log of every run without a report in shared storage.
        context["ti"].xcom_push(REPORT_URL_XCOM, "")
        result = super().execute(context)  # then the operator's "Done. Returned value not shown"
        if context.get(REPORT_LINE):  # last: where Airflow's log view makes the address a link
            account(context[REPORT_LINE])
        return result


def chaos_task(python_callable: Callable | None = None, **kwargs):
    """``@task`` for the run tasks: the same, plus the "Chaos report" extra link. The return value is an
    XCom, not echoed into the log (a summary is a few thousand characters of JSON)."""
    kwargs.setdefault("show_return_value_in_logs", False)
    return task_decorator_factory(python_callable=python_callable, decorated_operator_class=ChaosRunOperator, **kwargs)


# -- task logs a person can read -----------------------------------------------------------

def quiet_libraries(names: tuple[str, ...] = QUIET_LOGGERS) -> None:
    """GX, Spark and py4j at WARNING in this task's log (GX alone logs ~650 INFO lines a run)."""
    for name in names:
        logging.getLogger(name).setLevel(logging.WARNING)


def say(text: str) -> None:
    """One progress line in the task log."""
    print(f"regionchaos: {text}", flush=True)


def account(line: str) -> None:
    """A line of the task's closing account (verdict, outcome, where the report is) in its log, in
    order with Airflow's own closing lines: through logging, which reaches Airflow on the channel its
    own lines take. What a task prints travels on another one, and its last lines arrived after
    Airflow's "Task exited" and inside its "Post Execute" group."""
    log.info("%s", line)


class TaskConsole:
    """The runner's console (``console.print`` with rich markup) as plain task-log lines."""

    def print(self, *objects: Any, **_: Any) -> None:
        from rich.errors import MarkupError
        from rich.text import Text

        parts = []
        for obj in objects:
            try:
                parts.append(Text.from_markup(obj).plain if isinstance(obj, str) else str(obj))
            except MarkupError:
                parts.append(str(obj))
        say(" ".join(parts).strip())


def suite_progress(report: Callable[[str], None] = say):
    """One line per GX suite as the validation goes, in this task's log (the CLI's own
    `regionchaos.progress.suite_progress`, reporting through `say`)."""
    from regionchaos.progress import suite_progress as lines_per_suite

    return lines_per_suite(report)


def verdict_lines(summary: dict[str, Any]) -> list[str]:
    """What a run prints: verdict, failed invariants, report location, replay line."""
    row = result_row(summary)
    lines = [
        f"regionchaos verdict: {row['verdict']} (scenario {row['scenario']}, seed {row['seed']}, "
        f"mutant {row['mutant'] or 'none'}, run {row['run_id']})"
    ]
    if row["failed"]:
        lines.append(f"regionchaos failed invariants: {', '.join(row['failed'])}")
    if row["report"]:  # None: no report was written (a crashed run)
        lines.append(f"regionchaos report: {row['report']}")
    if summary.get("local") and summary.get("report"):
        lines.append(f"regionchaos report (local copy): {Path(summary['local']) / 'report' / 'index.html'}")
    lines.append(f"regionchaos replay: {row['replay']}")
    return lines


def local_runs_dir() -> Path:
    """Where runs on the embedded S3 are mirrored (their S3 ends with the task)."""
    return Path(os.environ.get("REGIONCHAOS_LOCAL_DIR") or PROJECT_ROOT / ".runs")


def _label(entry: dict[str, Any]) -> None:
    """Name a mapped task instance after its scenario (see map_index_template); an unmapped one gets no
    label (Airflow shows a rendered one in its Map Index column, linked to a ``/mapped/0`` that is not there)."""
    context = get_current_context()
    index = getattr(context.get("ti"), "map_index", None)
    if isinstance(index, int) and index >= 0:
        context["run_label"] = f"{entry.get('scenario_name')} ({entry.get('run_id')})"
    else:  # no template, nothing rendered: Airflow's task runner renders the one in the context
        context["map_index_template"] = None


def _scenario(entry: dict[str, Any] | None):
    from regionchaos.scenario import from_dict

    return from_dict(entry["scenario"]) if entry and entry.get("scenario") else None


def _tell(summary: dict[str, Any], url: str | None) -> tuple[RunOutcome, str]:
    """Push the note and the link's address, leave the log's last line; return the run's outcome and its note."""
    outcome = run_outcome(summary)
    note = note_text(outcome, summary, url)
    _push(NOTE_XCOM, note)
    if url:
        _push(REPORT_URL_XCOM, url)
    get_current_context()[REPORT_LINE] = report_line(summary, url)
    return outcome, note


def report_line(summary: dict[str, Any], url: str | None) -> str | None:
    """Where the run's report opens: inside Airflow (shared storage), else its local copy."""
    if url:
        return f"regionchaos report in Airflow: {url}"
    if summary.get("local") and summary.get("report"):
        return f"regionchaos report (local copy): {Path(summary['local']) / 'report' / 'index.html'}"
    return None


def _shared(storage) -> bool:
    return storage is not None and bool(getattr(storage, "endpoint_url", None))


def airflow_key(context: Any) -> dict[str, str] | None:
    """``{"dag_id", "dag_run_id"}`` of the DAG run a task context belongs to (the runs view links a
    run to it: `regionchaos_airflow.runs.dag_run_link`); None when the context names no DAG run."""
    dag_run = context.get("dag_run")
    dag_id = getattr(dag_run, "dag_id", None) or getattr(context.get("dag"), "dag_id", None)
    dag_run_id = getattr(dag_run, "run_id", None) or context.get("run_id")
    if isinstance(dag_id, str) and isinstance(dag_run_id, str) and dag_id and dag_run_id:
        return {"dag_id": dag_id, "dag_run_id": dag_run_id}
    return None


def record_dag_run(summary: dict[str, Any], storage, key: dict[str, str] | None, note: str | None = None) -> None:
    """Store what Airflow knows of the run beside its summary: ``airflow.json`` (``{"dag_id", "dag_run_id",
    "note"}``, `AIRFLOW_KEY`) under the run's prefix (shared storage) and in its local mirror. The run's
    ``summary.json`` is never rewritten. Best effort: a run whose DAG run cannot be stored keeps its verdict,
    unlinked."""
    run_id = summary.get("run_id") or ""
    if key is None or not RUN_ID_RE.match(run_id):
        return
    body = json.dumps({**key, "note": note}, indent=1, sort_keys=True).encode()
    try:
        if _shared(storage):
            from regionchaos.storage import ObjectStore

            ObjectStore.for_run(storage, run_id).put(AIRFLOW_KEY, body)
        local = Path(summary["local"]) if summary.get("local") else None
        if local is not None and local.is_dir():
            (local / AIRFLOW_KEY).write_bytes(body)
    except Exception as exc:  # noqa: BLE001 - the link is a convenience; the verdict stands
        log.warning("run %s: could not store DAG run %s beside its summary: %s", run_id, key, exc)


@chaos_task(map_index_template="{{ run_label }}", execution_timeout=RUN_TIMEOUT, multiple_outputs=False,
            max_active_tis_per_dagrun=LOCAL_RUNS_AT_ONCE)
def chaos_run(entry: dict[str, Any]) -> dict[str, Any]:
    """Emulate, validate and report one run with the runner, in this task's process.

    One task, not three: with the default embedded S3 server, storage lives only as long
    as the process that started it (its human-facing artifacts are mirrored to
    `local_runs_dir()`). Fails (`RunFailed`, one line; retried as the task's retries allow) on
    verdict ``unknown``. Its log ends with the report's address.
    """
    from airflow.sdk.exceptions import AirflowSkipException

    from regionchaos import runner
    from regionchaos_airflow.storage import resolve_storage

    quiet_libraries()
    _label(entry)
    if entry.get("skip"):  # a real-Flink scenario where no distribution is installed: skipped, never green valid
        account(f"regionchaos skipped: {entry['skip']}")
        raise AirflowSkipException(entry["skip"])
    scenario = _scenario(entry)
    storage = resolve_storage()
    with suite_progress(), jvm_output_as_warnings():
        summary = runner.run(
            scenario, mutant=entry.get("mutant"), storage=storage, run_id=entry["run_id"],
            overrides=entry.get("overrides"), local_dir=None if storage else local_runs_dir(), console=TaskConsole(),
        )
    for line in verdict_lines(summary):
        account(line)
    url = report_url(summary.get("run_id", "")) if _shared(storage) else None
    outcome, note = _tell(summary, url)
    record_dag_run(summary, storage, airflow_key(get_current_context()), note)
    _fail_without_verdict(outcome, entry, url)
    return summary


def _fail_without_verdict(outcome: RunOutcome, entry: dict[str, Any], url: str | None) -> None:
    """`RunFailed` when the run has no verdict (the outcome table's unknown: it raised, or a check has no
    result): the run task fails; a run with a verdict is judged by `publish_report`."""
    if outcome.kind == UNKNOWN:
        fail(f"run {entry['run_id']}: {outcome.sentence}" + (f"; report: {url}" if url else ""))


def fail(text: str) -> NoReturn:
    """Fail the task with `RunFailed` (its one line ``text``), the report's address just above it, where
    Airflow's log view makes it a link."""
    line = get_current_context().get(REPORT_LINE)
    if line:
        account(line)
    raise RunFailed(text)


@task
def spark_args(entry: dict[str, Any]) -> list[str]:
    """Arguments of ``spark_jobs/emulate.py`` for one run (shared storage required)."""
    from airflow.sdk.exceptions import AirflowFailException

    from regionchaos.run import set_args
    from regionchaos_airflow.storage import resolve_storage

    storage = resolve_storage()
    if storage is None or not storage.endpoint_url:
        raise AirflowFailException("cluster mode needs shared storage: set the regionchaos_s3 "
                                   "connection or REGIONCHAOS_S3_ENDPOINT")
    if entry["scenario"].get("backend", "emulation") != "emulation":
        raise AirflowFailException(f"scenario {entry['scenario_name']} runs on real Flink (backend flink): the Spark "
                                   "cluster only emulates; unset regionchaos_spark_conn_id to run it in local mode")
    args = ["--scenario", entry["scenario_name"], "--seed", str(entry["scenario"]["seed"]),
            "--run-id", entry["run_id"], "--s3-endpoint", storage.endpoint_url, "--bucket", storage.bucket]
    args += set_args(entry.get("overrides"))
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


@chaos_task(map_index_template="{{ run_label }}", execution_timeout=RUN_TIMEOUT, multiple_outputs=False)
def validate(entry: dict[str, Any]) -> dict[str, Any]:
    """Cluster mode: validate and report the run spark_jobs/emulate.py wrote to storage."""
    from airflow.sdk.exceptions import AirflowFailException

    from regionchaos import runner
    from regionchaos_airflow.storage import resolve_storage

    quiet_libraries()
    _label(entry)
    finish = getattr(runner, "finish", None)
    if finish is None:
        raise AirflowFailException("this regionchaos has no runner.finish(run_id, storage=...) to "
                                   "validate and report an emulated run: use local mode")
    storage = resolve_storage()
    with suite_progress(), jvm_output_as_warnings():
        summary = finish(entry["run_id"], storage=storage, overrides=entry.get("overrides"), console=TaskConsole())
    for line in verdict_lines(summary):
        account(line)
    url = report_url(summary.get("run_id", ""))
    outcome, note = _tell(summary, url)
    record_dag_run(summary, storage, airflow_key(get_current_context()), note)
    _fail_without_verdict(outcome, entry, url)
    return summary


@chaos_task(map_index_template="{{ run_label }}", multiple_outputs=False, retries=0)
def publish_report(summary: dict[str, Any], entry: dict[str, Any] | None = None,
                   fail_on_verdict: bool = False) -> dict[str, Any]:
    """Check that the run's summary and report are in shared storage; return its result row.

    With the embedded S3 (no shared storage configured) nothing outlived chaos_run: the
    row says ``published: false`` and the local mirror is where the report is. Ends with the
    verdict and the report's address in Airflow; with ``fail_on_verdict`` (a manual run) the
    task then fails when the run's outcome is not green (`run_outcome`), in one line (`RunFailed`) with its
    sentence and the report. No retries: the same summary gives the same outcome, and a report missing from
    storage does not appear on a second look.
    """
    from airflow.sdk.exceptions import AirflowException

    from regionchaos.storage import ObjectStore
    from regionchaos_airflow.storage import resolve_storage

    _label({"scenario_name": summary.get("scenario"), "run_id": summary.get("run_id")})
    storage = resolve_storage()
    row = result_row(summary)
    url = None
    if not _shared(storage):
        row["published"] = False
        account("regionchaos note: the embedded S3 server ended with chaos_run (summary, report and "
                "Data Docs were mirrored locally); run scripts/ui.sh, or set the regionchaos_s3 connection "
                "or REGIONCHAOS_S3_ENDPOINT, to list runs in Airflow")
    else:
        store = ObjectStore.for_run(storage, row["run_id"])
        missing = [key for key in ("summary.json", "report/index.html") if not store.exists(key)]
        if missing:
            raise AirflowException(f"run {row['run_id']}: {', '.join(missing)} missing under {store.uri()}")
        row["published"] = True
        row["datadocs"] = store.exists("datadocs/index.html")
        url = report_url(row["run_id"])
    outcome, _ = _tell(summary, url)
    row["outcome"] = outcome.as_dict()
    account(f"regionchaos outcome: {outcome.sentence}")
    if fail_on_verdict and not outcome.green:
        fail(f"run {row['run_id']} {outcome.sentence}" + (f"; report: {url}" if url else ""))
    return row


def add_scenario_run(entry: Any, *, fail_on_verdict: bool = False) -> Any:
    """Add one run's tasks to the current DAG or task group; returns publish_report's output.
    ``fail_on_verdict``: publish_report fails when the run's outcome is not green (manual runs;
    the nightly holds all its runs to the same table in its summary task instead)."""
    conn_id = spark_conn_id()
    if conn_id is None:
        return publish_report(chaos_run(entry), entry, fail_on_verdict)
    summary = validate(entry)
    emulate_operator(conn_id, spark_args(entry)) >> summary
    return publish_report(summary, entry, fail_on_verdict)
