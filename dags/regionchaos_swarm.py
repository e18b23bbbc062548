"""Swarm: many seeds of a small scenario, each seed drawing its own fault mix.

Wiring only: the tasks, defined at module level and wired by the DAG function, call pure
helpers in ``regionchaos_airflow``; pyspark, GX and boto3 are imported inside tasks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import CronTriggerTimetable, TriggerRule, dag, get_current_context, task

from regionchaos_airflow.params import swarm_params


@task
def plan_batches() -> list[dict[str, Any]]:
    """Seed batches (the first seed derived from the run's date when not given)."""
    from airflow.sdk.exceptions import AirflowFailException

    from regionchaos.scenario import check_mutant, load
    from regionchaos_airflow.params import check_swarm_conf, typed
    from regionchaos_airflow.runs import dated_first_seed

    context = get_current_context()
    params, dag_run = context["params"], context["dag_run"]
    errors = check_swarm_conf(dict(params))  # the trigger check's, for runs created around it
    if errors:
        raise AirflowFailException("invalid trigger form: " + "; ".join(map(str, errors)))
    scenario = load(params["scenario"], overrides={"faults.swarm": True})
    mutant = check_mutant(params["mutant"])
    first = typed(params)["first_seed"]  # the form sends a number field's typed text
    if first is None:
        first = dated_first_seed(dag_run.logical_date or dag_run.run_after)
    size, total = params["batch_size"], params["seeds"]
    return [
        {"batch": i // size, "scenario_name": scenario.name, "first_seed": first + i,
         "seeds": min(size, total - i), "mutant": mutant}
        for i in range(0, total, size)
    ]


@task(map_index_template="{{ batch_label }}", execution_timeout=timedelta(hours=4), show_return_value_in_logs=False)
def run_batch(batch: dict[str, Any]) -> list[dict[str, Any]]:
    """Run the seeds of one batch through the swarm's fast path (one S3, one Spark session)."""
    from regionchaos.swarm import fast_swarm
    from regionchaos_airflow.jvmlog import jvm_output_as_warnings
    from regionchaos_airflow.operators import quiet_libraries
    from regionchaos_airflow.runs import swarm_rows
    from regionchaos_airflow.storage import resolve_storage

    quiet_libraries()  # GX, Spark and py4j at WARNING: their INFO lines buried the batch's verdict lines
    first, count = batch["first_seed"], batch["seeds"]
    get_current_context()["batch_label"] = f"seeds {first}..{first + count - 1}"
    with jvm_output_as_warnings():
        result = fast_swarm(batch["scenario_name"], count, first_seed=first, mutant=batch["mutant"],
                            storage=resolve_storage())
    rows = swarm_rows(result)
    for run in rows:
        if run["verdict"] != "valid":
            print(f"seed {run['seed']}: {run['verdict']} {run['failed']}; replay: {run['replay']}; "
                  f"deep replay: {run['replay_deep']}", flush=True)
    print(f"batch {batch['batch']}: {result['judged']} judged, {len(result['failing'])} failing, "
          f"{result['unknown']} unknown in {result['wall_seconds']} s; tables: {result['prefix']}tables/",
          flush=True)
    return rows


@task(trigger_rule=TriggerRule.ALL_DONE, retries=0, multiple_outputs=False)
def summarize(batches: list[dict[str, Any]], results: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The swarm's outcome over every batch's seeds (the one outcome table: the worst of its seeds'; with
    a mutant, caught or not, red either way); list the problem seeds with replay lines and fail, in one line
    (`RunFailed`), when it is not green (see judge_swarm)."""
    from regionchaos_airflow.operators import NOTE_XCOM, RunFailed, swarm_note
    from regionchaos_airflow.runs import judge_swarm

    rows = [row for batch_rows in results if batch_rows for row in batch_rows]
    seeds = sum(batch["seeds"] for batch in batches)
    mutant = batches[0]["mutant"] if batches else None
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("valid", "invalid", "unknown")}
    print(f"swarm: {seeds} seeds, {counts}")
    outcome, problems = judge_swarm(rows, mutant=mutant, seeds=seeds)
    print(f"swarm outcome: {outcome.sentence} (exit {outcome.exit_code})", flush=True)
    get_current_context()["ti"].xcom_push(NOTE_XCOM, swarm_note(rows, outcome))
    if problems:
        raise RunFailed(f"swarm failed, {len(problems)} problem(s): " + "; ".join(problems))
    return {"seeds": seeds, **counts, "outcome": outcome.as_dict()}


@dag(
    dag_id="regionchaos_swarm",
    # Sundays 03:00 UTC; no start date, so the first run waits for its schedule (regionchaos_nightly.py)
    schedule=CronTriggerTimetable("0 3 * * 0", timezone="UTC", run_immediately=timedelta(minutes=10)),
    catchup=False,
    max_active_runs=1,
    params=swarm_params(),
    tags=["regionchaos", "chaos", "swarm"],
    default_args={"owner": "regionchaos", "retries": 1, "retry_delay": timedelta(minutes=5)},
)
def regionchaos_swarm():
    """### Swarm

    `plan_batches` splits the seeds into batches (the scenario is validated once, with
    `faults.swarm` on); `run_batch` is mapped over the batches and runs the seeds of its
    batch through the swarm's fast path (`regionchaos.swarm`: the seeds are Spark tasks
    emulating in memory, their rows Parquet under `swarms/SWARM_ID/`, one pass of the GX
    suites judges the batch; the swarm id is keyed by scenario, seeds and mutant, so a
    retried batch replaces its own tables); `summarize` lists the failing seeds with their
    replay lines and holds the swarm to the one outcome table (README: Outcomes): red on a seed
    that is invalid beyond a recorded finding, unknown or missing, and with a mutant whether a
    seed caught it or none did (the note says which).
    """

    batches = plan_batches()
    summarize(batches, run_batch.expand(batch=batches))


regionchaos_swarm()
