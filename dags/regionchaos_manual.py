"""Manual chaos trigger: one regionchaos run with the knobs of the trigger form.

Wiring only: the form's Params live in ``regionchaos_airflow.params``, the task bodies in
``regionchaos_airflow.operators``; pyspark, GX and boto3 are imported inside tasks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import dag, get_current_context, task

from regionchaos_airflow.operators import add_scenario_run
from regionchaos_airflow.params import manual_params


@dag(
    dag_id="regionchaos_manual",
    schedule=None,
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=2,
    params=manual_params(),
    tags=["regionchaos", "chaos", "manual"],
    default_args={"owner": "regionchaos", "retries": 1, "retry_delay": timedelta(minutes=1)},
)
def regionchaos_manual():
    """### Manual chaos run

    Trigger with the form: pick a catalogue **scenario**, a **seed**, the topology, fault
    probabilities, the regional-checkpoint bounds, a rescale plan and optionally a
    **mutant** (a deliberately broken protocol the checks must catch). Empty optional
    fields keep the scenario's own values.

    A bad form never starts a run: Airflow checks each field, and the plugin checks the
    whole form (e.g. a rescale after the scenario's last checkpoint) before the run is
    created, naming the field in the form. `resolve_scenario` turns the form into a
    validated scenario (a run created around the api-server, e.g. by `airflow dags
    trigger`, gets the same check here, before anything runs); `chaos_run` emulates,
    validates and reports through `regionchaos.runner` and prints the verdict, the report
    location and the replay command; `publish_report` checks the report is in shared
    storage. Runs are listed under **Browse > Chaos runs**.
    """

    @task(multiple_outputs=False, show_return_value_in_logs=False)  # the entry is an XCom, a few kB of JSON
    def resolve_scenario() -> dict[str, Any]:
        """Form params -> a validated run entry (the run id is keyed by this DAG run)."""
        from airflow.sdk.exceptions import AirflowFailException

        from regionchaos_airflow.params import (check_manual_conf, mutant_from_params, overrides_from_params,
                                                scenario_from_params)
        from regionchaos_airflow.runs import run_key

        context = get_current_context()
        params = dict(context["params"])
        errors = check_manual_conf(params)  # the trigger check's, for runs created around it
        if errors:
            raise AirflowFailException("invalid trigger form: " + "; ".join(map(str, errors)))
        scenario = scenario_from_params(params)
        overrides = overrides_from_params(params)
        mutant = mutant_from_params(params)
        for warning in scenario.warnings:
            print(f"regionchaos warning: {warning}")
        return {
            "run_id": run_key(scenario.name, f"s{scenario.seed}", mutant or "", context["dag_run"].run_id),
            "scenario_name": scenario.name,
            "scenario": scenario.to_dict(),
            "overrides": overrides,  # for the replay line
            "mutant": mutant,
            "expect": scenario.expect.verdict,
            "invariant": scenario.expect.invariant,
        }

    add_scenario_run(resolve_scenario(), fail_on_verdict=True)


regionchaos_manual()
