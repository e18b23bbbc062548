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

    `resolve_scenario` turns the form into a validated scenario (a value only the whole
    scenario can judge fails here, before anything runs); `chaos_run` emulates,
    validates and reports through `regionchaos.runner` and prints the verdict, the report
    location and the replay command; `publish_report` checks the report is in shared
    storage. Runs are listed under **Browse > Chaos runs**.
    """

    @task(multiple_outputs=False)
    def resolve_scenario() -> dict[str, Any]:
        """Form params -> a validated run entry (the run id is keyed by this DAG run)."""
        from airflow.sdk.exceptions import AirflowFailException

        from regionchaos.scenario import ScenarioError
        from regionchaos_airflow.params import mutant_from_params, overrides_from_params, scenario_from_params
        from regionchaos_airflow.runs import run_key

        context = get_current_context()
        params = dict(context["params"])
        try:
            scenario = scenario_from_params(params)
            overrides = overrides_from_params(params)
            mutant = mutant_from_params(params)
        except ScenarioError as exc:
            raise AirflowFailException(str(exc)) from None
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

    add_scenario_run(resolve_scenario())


regionchaos_manual()
