"""Nightly chaos matrix: the catalogue scenarios, one mapped task group per scenario.

Wiring only: the tasks, defined at module level and wired by the DAG function, call into
``regionchaos_airflow``; pyspark, GX and boto3 are imported inside tasks.

Schedule: 02:00 UTC every day (`NIGHTLY`), no catch-up, and no start date: Airflow 3's cron
timetable then makes the first run wait for the next 02:00 after the DAG appears (unpausing
starts nothing; with a start date in the past, catchup=False alone still creates the latest
past night's run at once, see tests/test_dags.py).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import CronTriggerTimetable, Param, TriggerRule, dag, get_current_context, task, task_group

from regionchaos_airflow.operators import add_scenario_run
from regionchaos_airflow.params import scenario_names

# The first run waits for the schedule; a DAG unpaused at most this long after a 02:00 still
# gets that night's run (a re-parse just after 02:00 must not move the first run a day on).
FIRST_RUN_GRACE = timedelta(minutes=10)
NIGHTLY = CronTriggerTimetable("0 2 * * *", timezone="UTC", run_immediately=FIRST_RUN_GRACE)
HEAVY_SCENARIOS = ("large",)  # opt in through the `scenarios` param: ~5 min and ~3 GB alone on 2 cores
# the real-Flink scenario of every night (a loopback cluster, ~1.3 GB, a few minutes); the others opt in.
# Without a Flink distribution its run is skipped, with the reason (never a green valid)
NIGHTLY_REAL_FLINK = ("real-flink-tm-kills",)
DEFAULT_SWARM_SEEDS = 100  # ~1 min on the fast path; opt in to more through `swarm_seeds`


def nightly_scenarios() -> list[str]:
    """The default matrix: every emulated catalogue scenario but the heavy ones, and one real-Flink scenario."""
    return sorted([name for name in scenario_names("emulation") if name not in HEAVY_SCENARIOS]
                  + list(NIGHTLY_REAL_FLINK))


@task(show_return_value_in_logs=False)  # the plan is an XCom, a few kB of JSON a scenario
def plan_runs() -> list[dict[str, Any]]:
    """One run entry per selected scenario; run ids keyed by this DAG run. A real-Flink scenario on a machine
    without a Flink distribution gets ``skip`` (the reason): its run task ends skipped, saying why."""
    from regionchaos.scenario import load
    from regionchaos_airflow.params import real_flink_refusal
    from regionchaos_airflow.runs import run_key

    context = get_current_context()
    plan = []
    for name in context["params"]["scenarios"]:
        scenario = load(name)
        refusal = real_flink_refusal(scenario)
        plan.append({
            "run_id": run_key("nightly", context["dag_run"].run_id, name),
            "scenario_name": name,
            "scenario": scenario.to_dict(),
            "mutant": None,
            "expect": scenario.expect.verdict,
            "invariant": scenario.expect.invariant,
            **({"skip": refusal} if refusal else {}),
        })
    return plan


@task_group
def run_scenario(entry: dict[str, Any]):
    """Emulate, validate and publish the report of one scenario."""
    return add_scenario_run(entry)


@task(execution_timeout=timedelta(hours=2), multiple_outputs=False, show_return_value_in_logs=False)
def swarm_sample() -> dict[str, Any]:
    """`swarm_seeds` smoke seeds on the fast path, first seed from the run's date."""
    from regionchaos.swarm import fast_swarm
    from regionchaos_airflow.jvmlog import jvm_output_as_warnings
    from regionchaos_airflow.runs import dated_first_seed, swarm_rows
    from regionchaos_airflow.storage import resolve_storage

    context = get_current_context()
    seeds = context["params"]["swarm_seeds"]
    if not seeds:
        return {"seeds": 0, "rows": []}
    dag_run = context["dag_run"]
    first = dated_first_seed(dag_run.logical_date or dag_run.run_after)
    with jvm_output_as_warnings():
        result = fast_swarm("smoke", seeds, first_seed=first, storage=resolve_storage())
    print(f"swarm {result['swarm_id']}: {result['judged']} seeds, {result['verdicts']}, "
          f"{len(result['failing'])} failing, {result['wall_seconds']} s", flush=True)
    return {"seeds": seeds, "rows": swarm_rows(result)}


@task(execution_timeout=timedelta(hours=1), multiple_outputs=False, show_return_value_in_logs=False)
def explore_findings() -> dict[str, Any]:
    """Each finding's scenario at the explorer's size (`regionchaos.explore.cases.FINDING_CASES`: P <= 4, N <= 6),
    every schedule up to N, the representatives of all of them judged in one GX pass; each exploration kept with
    its report under ``swarms/`` (`regionchaos.explore.report`)."""
    from regionchaos.explore import explore_many
    from regionchaos.explore.cases import FINDING_CASES
    from regionchaos.explore.report import store_exploration
    from regionchaos.runner import storage_for
    from regionchaos_airflow.jvmlog import jvm_output_as_warnings
    from regionchaos_airflow.runs import exploration_row
    from regionchaos_airflow.storage import resolve_storage

    if not get_current_context()["params"]["explore_findings"]:
        return {"rows": []}
    cases = {finding: case for finding, case in FINDING_CASES.items() if not isinstance(case, str)}
    with jvm_output_as_warnings():
        summaries = explore_many(list(cases.values()))
    with storage_for(resolve_storage()) as config:  # kept with their reports: the runs view lists them
        summaries = [store_exploration(summary, config, None) for summary in summaries]
    rows = [exploration_row(finding, summary) for finding, summary in zip(cases, summaries)]
    for row in rows:
        print(f"{row['finding']:<4} {row['scenario']:<34} {row['states']} states, "
              f"{'found' if row['found'] else 'NOT found'}; {row['outcome']['sentence']}", flush=True)
    return {"rows": rows}


@task(trigger_rule=TriggerRule.ALL_DONE, retries=0, multiple_outputs=False)
def summarize(plan: list[dict[str, Any]], rows: list[dict[str, Any]],
              swarm: dict[str, Any] | None, explored: dict[str, Any] | None) -> dict[str, Any]:
    """Fail (one line, `RunFailed`) when a scenario's outcome is not green by the one outcome table (README:
    Outcomes; a missing row counts as a failure), the swarm sample's is not (an unexplained invalid, unknown
    or missing seed), or an exploration of a finding's scenario is not (or no longer finds its finding)."""
    from regionchaos_airflow.operators import NOTE_XCOM, RunFailed, nightly_note
    from regionchaos_airflow.runs import judge_explorations, judge_nightly, judge_swarm, mapped_rows, skipped_runs

    rows = mapped_rows(rows)
    for row in rows:
        print(f"{row['scenario']:<26} {row['verdict']:<8} failed={row['failed']} {row['run_id']}")
    for line in skipped_runs(plan):
        print(f"skipped (not judged): {line}")
    problems = judge_nightly(plan, rows)
    if swarm is None:
        problems.append("swarm sample: no result (its task failed)")
    elif swarm["seeds"]:
        problems += [f"swarm sample: {p}" for p in judge_swarm(swarm["rows"], mutant=None, seeds=swarm["seeds"])[1]]
    problems += judge_explorations(None if explored is None else explored["rows"])
    get_current_context()["ti"].xcom_push(NOTE_XCOM, nightly_note(plan, rows, swarm, problems))
    if problems:
        raise RunFailed(f"nightly chaos matrix failed, {len(problems)} problem(s): " + "; ".join(problems))
    return {"runs": len(rows), "problems": []}


@dag(
    dag_id="regionchaos_nightly",
    schedule=NIGHTLY,
    catchup=False,
    max_active_runs=1,
    params={
        "scenarios": Param(
            nightly_scenarios(),
            type="array",
            items={"type": "string", "enum": scenario_names()},
            minItems=1,
            uniqueItems=True,
            title="Scenarios",
            description="Catalogue scenarios to run (default: every emulated one but "
                        f"{', '.join(HEAVY_SCENARIOS)}, which takes as long as the rest together, and the real-Flink "
                        f"{', '.join(NIGHTLY_REAL_FLINK)}: skipped, saying why, without a Flink distribution).",
        ),
        "swarm_seeds": Param(
            DEFAULT_SWARM_SEEDS,
            type="integer",
            minimum=0,
            maximum=100_000,
            title="Swarm seeds",
            description="After the matrix, this many smoke seeds (each drawing its own fault mix) on the "
                        "swarm's fast path; the first seed comes from the run's date, so each night explores "
                        "new seeds. 0: no swarm. About 15 seeds a second on 2 cores.",
        ),
        "explore_findings": Param(
            True,
            type="boolean",
            title="Explore the findings' scenarios",
            description="Every schedule of up to a few checkpoints of each finding's scenario at parallelism "
                        "up to 4 (`regionchaos explore`), judged in one pass: each must show its finding and "
                        "nothing unexplained. A few minutes on 2 cores.",
        ),
    },
    tags=["regionchaos", "chaos", "scheduled"],
    default_args={"owner": "regionchaos", "retries": 1, "retry_delay": timedelta(minutes=5)},
)
def regionchaos_nightly():
    """### Nightly chaos matrix

    `plan_runs` lists the catalogue scenarios (each with its expected verdict; the real-Flink
    one skipped, with the reason, where no Flink distribution is installed) and keys a run id
    by this DAG run; `run_scenario` is mapped over them: `chaos_run` emulates,
    validates and reports through `regionchaos.runner` (or, with the Variable
    `regionchaos_spark_conn_id` set, `emulate` spark-submits `spark_jobs/emulate.py` to
    the cluster), then `publish_report` checks the report is in storage. `swarm_sample`
    judges `swarm_seeds` smoke seeds on the swarm's fast path (`regionchaos.swarm`). `explore_findings`
    explores each finding's scenario at a small size (`regionchaos.explore`).
    `summarize` holds every run to the one outcome table (README: Outcomes) and fails the DAG run
    when one is not green: a violation no recorded finding explains, a finding's scenario that no
    longer fails for the invariant it names, a run or swarm seed unknown or missing, an exploration
    with an unexplained violation or that no longer finds its finding.
    """

    plan = plan_runs()
    summarize(plan, run_scenario.expand(entry=plan), swarm_sample(), explore_findings())


regionchaos_nightly()
