"""DAG tests: every DAG file imports cleanly and thin, and each DAG has the task graph,
mapping and params it promises; the spark-submit switch changes the graph.

In:  dags/ and plugins/ of this repo, parsed with Airflow's DagBag (no metadata DB needed).
Out: pass/fail; nothing runs a task (the end-to-end run is tests/test_airflow_e2e.py).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pendulum
import pytest

from tests.airflow_env import ROOT  # noqa: E402  (sets up Airflow before it is imported)

from airflow.dag_processing.dagbag import DagBag  # noqa: E402
from airflow.sdk import Param  # noqa: E402
from airflow.sdk.definitions.mappedoperator import MappedOperator  # noqa: E402
from airflow.sdk.exceptions import ParamValidationError  # noqa: E402

from regionchaos.scenario import MUTANTS, ScenarioError, catalogue  # noqa: E402
from regionchaos_airflow import params as form  # noqa: E402
from regionchaos_airflow.runs import (  # noqa: E402
    dated_first_seed, judge_nightly, judge_swarm, mapped_rows, result_row, run_key, swarm_rows)

SPARK_VAR = "AIRFLOW_VAR_REGIONCHAOS_SPARK_CONN_ID"
DAG_IDS = {"regionchaos_manual", "regionchaos_nightly", "regionchaos_swarm"}


def _dagbag(spark_conn_id: str | None) -> DagBag:
    saved = os.environ.pop(SPARK_VAR, None)
    if spark_conn_id:
        os.environ[SPARK_VAR] = spark_conn_id
    try:
        return DagBag(dag_folder=str(ROOT / "dags"))
    finally:
        os.environ.pop(SPARK_VAR, None)
        if saved is not None:
            os.environ[SPARK_VAR] = saved


@pytest.fixture(scope="module")
def dagbag() -> DagBag:
    return _dagbag(None)


@pytest.fixture(scope="module")
def cluster_dagbag() -> DagBag:
    return _dagbag("spark_cluster")


def edges(dag) -> set[tuple[str, str]]:
    return {(up, t.task_id) for t in dag.tasks for up in t.upstream_task_ids}


# -- every DAG -------------------------------------------------------------------------

def test_dagbag_loads_every_dag_without_import_errors(dagbag):
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == DAG_IDS
    assert sorted(p.name for p in (ROOT / "dags").glob("*.py")) == sorted(f"{d}.py" for d in DAG_IDS)


@pytest.mark.parametrize("dag_id", sorted(DAG_IDS))
def test_dag_conventions(dagbag, dag_id):
    dag = dagbag.dags[dag_id]
    assert "regionchaos" in dag.tags
    assert dag.doc_md and dag.doc_md.lstrip().startswith("###")  # from the docstring
    assert dag.default_args["retries"] >= 1
    assert dag.catchup is False
    for name in dag.params:
        schema = dag.params.get_param(name).schema
        assert schema.get("title"), f"{dag_id}.{name} has no title"
        assert dag.params.get_param(name).description, f"{dag_id}.{name} has no description"
    dag.params.validate()  # the defaults are valid
    # a dict return annotation makes @task push every key as its own XCom unless told not to
    assert [t.task_id for t in dag.tasks if getattr(t, "multiple_outputs", False)] == []


@pytest.mark.slow
def test_dag_files_import_nothing_heavy_at_parse_time():
    code = (
        "import sys\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"bag = DagBag(dag_folder={str(ROOT / 'dags')!r})\n"
        "assert not bag.import_errors, bag.import_errors\n"
        "heavy = ('pyspark', 'great_expectations', 'boto3', 'botocore', 'moto', 'regionchaos.runner')\n"
        "print('HEAVY', sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "HEAVY []" in out.stdout, out.stdout


# -- manual ------------------------------------------------------------------------------

def test_manual_graph(dagbag):
    dag = dagbag.dags["regionchaos_manual"]
    assert dag.schedule is None and type(dag.timetable).__name__ == "NullTimetable"
    assert {t.task_id for t in dag.tasks} == {"resolve_scenario", "chaos_run", "publish_report"}
    assert edges(dag) == {("resolve_scenario", "chaos_run"), ("chaos_run", "publish_report"),
                          ("resolve_scenario", "publish_report")}  # publish_report judges by the scenario


def test_the_run_tasks_carry_the_chaos_report_link_into_the_serialized_dag(dagbag, cluster_dagbag):
    """The api-server shows extra links from the serialized DAG (name -> the XCom key the task's
    process stores the link under when it ends): the run tasks have "Chaos report"."""
    from airflow.serialization.serialized_objects import DagSerialization

    from regionchaos_airflow.operators import ChaosReportLink

    key = ChaosReportLink().xcom_key
    for bag, dag_id, prefix, run_task in ((dagbag, "regionchaos_manual", "", "chaos_run"),
                                          (dagbag, "regionchaos_nightly", "run_scenario.", "chaos_run"),
                                          (cluster_dagbag, "regionchaos_manual", "", "validate")):
        tasks = DagSerialization.to_dict(bag.dags[dag_id])["dag"]["tasks"]
        links = {t["__var"]["task_id"]: t["__var"].get("_operator_extra_links") for t in tasks}
        for task_id in (prefix + run_task, prefix + "publish_report"):
            assert links[task_id] == {"Chaos report": key}, (dag_id, task_id, links)
        assert not any(links[t] for t in links if t.split(".")[-1] not in (run_task, "publish_report"))


def test_manual_form_schema(dagbag):
    params = dagbag.dags["regionchaos_manual"].params
    schema = {name: params.get_param(name).schema for name in params}
    assert set(schema) == set(form.PARAM_NAMES)
    assert schema["scenario"]["examples"] == sorted(catalogue())
    assert schema["mutant"]["enum"] == ["none", *MUTANTS]
    assert params["mutant"] == "none"
    assert form.bounds(schema["seed"])["minimum"] == 0
    assert form.bounds(schema["parallelism"]) == {"minimum": 1, "maximum": 8192}
    assert form.bounds(schema["max_consecutive_failures"])["minimum"] == 0
    for name in (*form.FAULT_FIELDS, "max_failure_ratio"):
        assert form.bounds(schema[name]) == {"minimum": 0.0, "maximum": 1.0}, name
    assert {schema[n]["section"] for n in schema} >= {"Scenario", "Faults", "Rescale", "Mutant"}


def _scenario_value(param, scenario):
    if param == "rescale":
        return ",".join(f"{e.after_checkpoint}:{e.parallelism}" for e in scenario.rescale) or "none"
    if param in form.FAULT_FIELDS:
        return getattr(scenario.faults, param)
    if param in ("max_failure_ratio", "max_consecutive_failures"):
        return getattr(scenario.flink, param)
    if param == "seed":
        return scenario.seed
    return getattr(scenario.topology, param)


def test_an_empty_field_s_description_shows_each_scenario_s_value(dagbag):
    """"Empty: the scenario's value" says which: read back from the text, every emulated catalogue
    scenario gets the value its YAML gives (a real-Flink one takes none of these fields)."""
    import re

    from regionchaos.scenario import load

    params = dagbag.dags["regionchaos_manual"].params
    scenarios = {name: load(name) for name in catalogue("emulation")}
    optional = [name for name in params if params[name] is None]
    assert set(optional) == set(form.OVERRIDE_KEYS) | {"seed", "rescale"}
    for param in optional:
        text = params.get_param(param).description.split("Empty: the scenario's value")[1]
        shown = {}
        if text.startswith(", "):  # one value everywhere
            value = re.match(r", (\S+) in every emulated scenario\.$", text)[1]
            shown = dict.fromkeys(scenarios, value)
        else:
            for part in text.lstrip(": ").rstrip(".").split("; "):
                value, _, names = part.partition(" in ")
                if names == "the others":
                    shown.update({n: value for n in scenarios if n not in shown})
                else:
                    shown.update({n: value for n in names.split(", ")})
        assert set(shown) == set(scenarios), (param, text)
        for name, scenario in scenarios.items():
            expected = _scenario_value(param, scenario)
            expected = getattr(expected, "value", expected)
            if isinstance(expected, float):
                assert float(shown[name]) == expected, (param, name, text)
            else:
                assert shown[name] == str(expected), (param, name, text)


def test_the_form_s_choices_have_labels_not_null_or_bare_names(dagbag):
    for dag_id in ("regionchaos_manual", "regionchaos_swarm"):
        mutant = dagbag.dags[dag_id].params.get_param("mutant").schema
        for name, what in MUTANTS.items():
            assert what in mutant["values_display"][name], (dag_id, name)
        assert set(mutant["values_display"]) == set(mutant["enum"])
    partitioning = dagbag.dags["regionchaos_manual"].params.get_param("partitioning").schema
    assert None in partitioning["enum"]  # the empty choice keeps the scenario's
    labels = partitioning["values_display"]
    # the UI labels an enum value by values_display[String(value)], null as "null"
    assert set(labels) == {"null" if v is None else v for v in partitioning["enum"]}
    assert labels["null"].startswith("the scenario's own") and "forward" in labels["null"]


@pytest.mark.parametrize("dag_id", ["regionchaos_manual", "regionchaos_swarm"])
def test_number_fields_leave_the_typed_value_alone_and_are_refused_naming_it(dagbag, dag_id):
    """The form's number input clamps to a top-level minimum/maximum (a typed 0 became 1): the
    ranges sit where only the checks read them, and the refusal names the value typed."""
    params = dagbag.dags[dag_id].params
    ranged = [name for name in params if form.bounds(params.get_param(name).schema)]
    assert ranged
    for name in ranged:
        schema = params.get_param(name).schema
        assert "minimum" not in schema and "maximum" not in schema, (dag_id, name)
    check = form.TRIGGER_CHECKS[dag_id]
    field = "parallelism" if dag_id == "regionchaos_manual" else "seeds"
    (error,) = check({field: 0})
    assert (error.param, error.reason) == (field, "must be at least 1, got 0"), error
    with pytest.raises(ParamValidationError, match=field):
        bad = copy.deepcopy(params)
        bad.update({field: 0})
        bad.validate()


@pytest.mark.parametrize("dag_id", ["regionchaos_manual", "regionchaos_swarm"])
def test_a_typed_unknown_scenario_is_sent_and_refused_never_another_scenario(dagbag, dag_id):
    """The scenario field is text with suggestions (no closed list that answers "No options" and
    keeps the previous choice): what was typed reaches the checks, which refuse it."""
    schema = dagbag.dags[dag_id].params.get_param("scenario").schema
    # the swarm emulates: it offers the emulated scenarios only; the manual form every one
    assert "enum" not in schema and schema["examples"] == sorted(catalogue(
        "emulation" if dag_id == "regionchaos_swarm" else None))
    (error,) = form.TRIGGER_CHECKS[dag_id]({"scenario": "smok"})
    assert error.param == "scenario" and error.reason.startswith("unknown scenario 'smok'; known: "), error
    assert form.TRIGGER_CHECKS[dag_id]({"scenario": None})[0].param == "scenario"
    params = copy.deepcopy(dagbag.dags[dag_id].params)
    with pytest.raises(ParamValidationError, match="scenario"):
        params.update({"scenario": "smok"})
        params.validate()


GOOD_CONF = {"scenario": "rescale-4-2-1", "seed": 7, "parallelism": 6, "decline": 0.2,
             "max_failure_ratio": 0.25, "max_consecutive_failures": 2, "rescale": "3:2,7:1",
             "mutant": "no-forced-global"}


@pytest.mark.parametrize(
    "key, bad",
    [("scenario", "nope"), ("seed", -1), ("seed", "seven"), ("seed", "7.5"), ("parallelism", 0), ("parallelism", 9000),
     ("decline", 1.5), ("timeout", -0.1), ("max_failure_ratio", 2), ("max_consecutive_failures", -1),
     ("rescale", "3-2"), ("rescale", "3:2,"), ("rescale", "3:0"), ("rescale", "3:9999"),
     ("rescale", "3:2,7:00"), ("rescale", "1" * 1001 + ":1"), ("mutant", "bogus"), ("partitioning", "shuffle")],
)
def test_manual_form_rejects_bad_values(dagbag, key, bad):
    params = copy.deepcopy(dagbag.dags["regionchaos_manual"].params)
    with pytest.raises(ParamValidationError, match=key):
        params.update({**GOOD_CONF, key: bad})
        params.validate()


def test_manual_form_accepts_a_full_conf(dagbag):
    params = copy.deepcopy(dagbag.dags["regionchaos_manual"].params)
    params.update(GOOD_CONF)
    assert params.validate()["seed"] == 7


def test_an_optional_number_field_is_a_text_field_that_keeps_what_was_typed(dagbag):
    """Airflow's form draws a field of several types with examples as a text input (its number input
    turned a typed -1 into NaN, then empty: a run with the scenario's seed): the text is sent as typed,
    read as its number by the check and the DAG, or refused naming the field."""
    for dag_id, names in (("regionchaos_manual", ("seed", "parallelism", "decline", "max_failure_ratio",
                                                  "max_consecutive_failures")), ("regionchaos_swarm", ("first_seed",))):
        for name in names:
            schema = dagbag.dags[dag_id].params.get_param(name).schema
            assert schema["type"][:2] == ["null", "string"] and len(schema["type"]) == 3, schema  # text, first
            assert isinstance(schema["examples"], list) and schema["examples"], schema  # suggestions, not a JSON box
    assert "1" in dagbag.dags["regionchaos_manual"].params.get_param("seed").schema["examples"]  # smoke's seed
    conf = {"scenario": "smoke", "seed": " 7 ", "decline": "0.05", "parallelism": "", "max_consecutive_failures": "2"}
    assert form.check_manual_conf(conf) == []
    scenario = form.scenario_from_params(conf)
    assert (scenario.seed, scenario.faults.decline, scenario.flink.max_consecutive_failures) == (7, 0.05, 2)
    assert form.overrides_from_params(conf)["faults.decline"] == 0.05 and "topology.parallelism" not in \
        form.overrides_from_params(conf)  # empty: the scenario's own
    assert form.typed({"seed": "-1", "first_seed": "x", "rescale": "3:2"}) == {"seed": -1, "first_seed": "x",
                                                                               "rescale": "3:2"}
    (error,) = form.check_swarm_conf({"first_seed": "-5"})
    assert str(error) == "First seed (first_seed): must be at least 0, got -5"


def test_scenario_from_params_maps_the_form_onto_the_scenario():
    scenario = form.scenario_from_params(GOOD_CONF)
    assert (scenario.name, scenario.seed, scenario.topology.parallelism) == ("rescale-4-2-1", 7, 6)
    assert scenario.faults.decline == 0.2
    assert scenario.flink.max_failure_ratio == 0.25
    assert scenario.flink.max_consecutive_failures == 2
    assert [(e.after_checkpoint, e.parallelism) for e in scenario.rescale] == [(3, 2), (7, 1)]
    assert form.mutant_from_params(GOOD_CONF) == "no-forced-global"
    # empty fields keep the scenario's own values; "none" clears the rescale plan
    plain = form.scenario_from_params({"scenario": "rescale-4-2-1", "seed": None, "rescale": "none"})
    assert plain.seed == 1 and plain.rescale == () and plain.faults.decline == 0.1
    assert form.mutant_from_params({"mutant": "none"}) is None


@pytest.mark.parametrize(
    "conf, field",
    [({"scenario": "smoke", "rescale": "30:2"}, "rescale"),  # beyond smoke's 12 checkpoints
     ({"scenario": "smoke", "sed": 3}, "sed"),
     ({"scenario": "nope"}, "scenario")],
)
def test_scenario_from_params_names_the_bad_field(conf, field):
    with pytest.raises(ScenarioError) as err:
        form.scenario_from_params(conf)
    assert any(f.startswith(field) for f, _ in err.value.errors), err.value.errors


# -- the whole-form check (what the plugin's trigger check and the first task run) ---------

INTERNAL_KEYS = ("topology.", "faults.", "flink.", "execution.checkpointing", "rescale.0", "rescale.1")


@pytest.mark.parametrize(
    "conf, param, title, reason",
    [({"rescale": "3:0"}, "rescale", "Rescale plan", "'3:0': parallelism 0 is out of range, it must be 1 to 8192"),
     ({"rescale": "3:9999"}, "rescale", "Rescale plan", "'3:9999': parallelism 9999 is out of range"),
     ({"rescale": "99:1"}, "rescale", "Rescale plan",
      "'99:1' rescales after checkpoint 99, but scenario smoke has 12 checkpoints (indices 0 to 11)"),
     ({"rescale": "3:2,3:1"}, "rescale", "Rescale plan", "'3:1' does not come after '3:2'"),
     ({"rescale": "3:2, 12:1"}, "rescale", "Rescale plan", "'12:1' rescales after checkpoint 12"),
     ({"rescale": "3-2"}, "rescale", "Rescale plan", "'3-2' is not a plan like '3:2,7:1' or 'none'"),
     ({"parallelism": 1}, "parallelism", "Parallelism (regions)",
      "1 is fewer than the 2 TaskManagers of scenario smoke"),
     ({"scenario": "pr-all-regions-failed", "parallelism": 2}, "parallelism", "Parallelism (regions)",
      "2 pipeline region(s) are fewer than the 4 regions scenario pr-all-regions-failed fails together"),
     ({"scenario": "pr-all-regions-failed", "partitioning": "rebalance"}, "partitioning", "Partitioning",
      "rebalance joins every subtask into one pipeline region"),
     ({"seed": -1}, "seed", "Seed", "must be at least 0, got -1"),
     ({"max_failure_ratio": 2}, "max_failure_ratio", "Max failure ratio", "must be at most 1.0, got 2"),
     ({"mutant": "bogus"}, "mutant", "Mutant", "'bogus' is not one of the choices: none, cleaner-ignores-refs"),
     ({"seed": "seven"}, "seed", "Seed", "must be a whole number from 0 to 9007199254740991 or left empty, got 'seven'"),
     ({"seed": "-1"}, "seed", "Seed", "must be at least 0, got -1"),  # typed into the form: its text
     ({"decline": " 1.5"}, "decline", "Fault: decline", "must be at most 1.0, got 1.5"),
     ({"seed": True}, "seed", "Seed", "must be a whole number or left empty, got true"),
     ({"sed": 3}, "sed", None, "unknown parameter of this DAG")],
)
def test_the_whole_form_check_names_the_field_the_user_typed(conf, param, title, reason):
    errors = form.check_manual_conf({"scenario": "smoke", **conf})
    assert [(e.param, e.title) for e in errors] == [(param, title)], errors
    assert reason in errors[0].reason
    text = str(errors[0])
    assert text.startswith(f"{title} ({param}): " if title else f"{param}: ")
    assert not any(key in text for key in INTERNAL_KEYS), text


@pytest.mark.parametrize("conf", [{}, GOOD_CONF, {"scenario": "smoke", "rescale": "none"},
                                  {"scenario": "smoke", "rescale": " 0:2 , 11:8192 "}, {"scenario": "smoke", "rescale": ""},
                                  {"scenario": "large", "rescale": "196:512", "parallelism": 8}])
def test_the_whole_form_check_passes_good_forms(conf):
    assert form.check_manual_conf(conf) == []


def test_the_whole_form_check_sees_the_defaults_and_reports_every_field():
    errors = form.check_manual_conf({"seed": -1, "decline": 3, "bogus": 1})
    assert [e.param for e in errors] == ["bogus", "seed", "decline"]
    assert form.check_manual_conf(["not", "a", "mapping"])[0].param == "conf"
    swarm = form.check_swarm_conf({"seeds": 0, "scenario": "nope", "extra": True})
    assert [e.param for e in swarm] == ["extra", "scenario", "seeds"]
    assert form.check_swarm_conf({"scenario": "rescale-4-2-1", "mutant": "union-as-split"}) == []
    assert set(form.TRIGGER_CHECKS) == {"regionchaos_manual", "regionchaos_swarm"} <= DAG_IDS  # the DAGs with a form


@pytest.mark.parametrize(
    "field, reason, param, expected",
    [("topology.parallelism", "Input should be greater than or equal to 1", "parallelism",
      "Input should be greater than or equal to 1"),
     ("topology.partitioning", "Input should be 'forward' or 'rebalance'", "partitioning", "Input should be"),
     ("flink.execution.checkpointing.region.max-failure-ratio", "Input should be less than or equal to 1",
      "max_failure_ratio", "Input should be less than or equal to 1"),
     ("execution.checkpointing.region.max-consecutive-failures", "bad", "max_consecutive_failures", "bad"),
     ("faults.decline", "Input should be less than or equal to 1", "decline", "Input should be"),
     ("rescale.1.after_checkpoint", "30 is beyond the 12 checkpoints of the fault phase", "rescale",
      "'30:1' rescales after checkpoint 30, but scenario smoke has 12 checkpoints (indices 0 to 11)"),
     ("rescale.0.parallelism", "Input should be less than or equal to 8192", "rescale",
      "'3:2': parallelism: Input should be less than or equal to 8192"),
     ("rescale", "'x' is not a plan", "rescale", "'x' is not a plan"),
     ("topology.taskmanagers", "2 TaskManagers for 1 subtasks, at most one TaskManager per subtask",
      "parallelism", "1 is fewer than the 2 TaskManagers of scenario smoke"),
     ("faults.correlated_regions", "4 is more than the 2 pipeline region(s) of the job", "parallelism",
      "2 pipeline region(s) are fewer than the 4 regions"),
     ("seed", "Input should be greater than or equal to 0", "seed", "Input should be"),
     ("mutant", "unknown mutant 'x'", "mutant", "unknown mutant 'x'"),
     ("sed", "unknown parameter of this DAG", "sed", "unknown parameter of this DAG"),
     ("expect.invariant", "not an invariant", "scenario",
      "scenario smoke cannot run with these values: expect.invariant: not an invariant")],
)
def test_scenario_errors_map_back_to_form_fields(field, reason, param, expected):
    values = {"scenario": "smoke", "rescale": "3:2,30:1", "partitioning": None}
    titles = {name: p.schema["title"] for name, p in form.manual_params().items()}
    (error,) = form.form_errors(ScenarioError([(field, reason)]), values, titles)
    assert (error.param, error.title) == (param, titles.get(param))
    assert error.reason == expected or error.reason.startswith(expected), error.reason


def test_every_override_key_maps_back_to_its_param():
    for param, key in form.OVERRIDE_KEYS.items():
        prefixed = key if key.startswith(("topology.", "faults.")) else f"flink.{key}"
        (error,) = form.form_errors(ScenarioError([(prefixed, "why")]), {"scenario": "smoke"})
        assert (error.param, error.reason) == (param, "why")


def test_the_rescale_pattern_and_the_plan_parser_agree():
    """The schema (Airflow's check, field by field) refuses exactly what parse_rescale refuses,
    except the order of the pairs, which only the parser (the whole-form check) sees."""
    import re

    pattern = re.compile(form.RESCALE_PATTERN)

    def parser_accepts(text):
        try:
            form.parse_rescale(text)
            return True
        except ScenarioError:
            return False

    for parallelism in range(0, form.MAX_PARALLELISM + 20):
        text = f"3:{parallelism}"
        assert bool(pattern.search(text)) == parser_accepts(text) == (1 <= parallelism <= 8192), text
    for text in ["", " ", "none", "3:2,7:1", " 3 : 2 , 7 : 1 ", "3:02", "3-2", "3:2,", ":2", "3:", "none,3:2",
                 "3:2;7:1", "-1:2", "3:2.0", "x"]:
        assert bool(pattern.search(text)) == parser_accepts(text), text
    assert pattern.search("3:2,3:1") and not parser_accepts("3:2,3:1")


def test_the_swarm_form_is_its_params_module_s(dagbag):
    params = dagbag.dags["regionchaos_swarm"].params
    assert {name: params.get_param(name).schema for name in params} == {
        name: p.schema for name, p in form.swarm_params().items()}


# -- nightly -----------------------------------------------------------------------------

def test_nightly_graph_maps_a_task_group_over_the_catalogue(dagbag):
    dag = dagbag.dags["regionchaos_nightly"]
    assert type(dag.timetable).__name__ == "CronTriggerTimetable" and dag.timetable.expression == "0 2 * * *"
    assert {t.task_id for t in dag.tasks} == {
        "plan_runs", "run_scenario.chaos_run", "run_scenario.publish_report", "swarm_sample", "explore_findings",
        "summarize"}
    assert edges(dag) >= {("plan_runs", "run_scenario.chaos_run"),
                          ("run_scenario.chaos_run", "run_scenario.publish_report"),
                          ("run_scenario.publish_report", "summarize"), ("plan_runs", "summarize"),
                          ("swarm_sample", "summarize"), ("explore_findings", "summarize")}
    assert dag.params["swarm_seeds"] == 100  # a nightly slot on a small machine: ~1 min
    assert dag.params["explore_findings"] is True
    group = dag.task_group_dict["run_scenario"]
    assert type(group).__name__ == "MappedTaskGroup"
    for task_id in ("run_scenario.chaos_run", "run_scenario.publish_report"):
        assert dag.get_task(task_id).get_closest_mapped_task_group() is group
    assert dag.get_task("summarize").trigger_rule == "all_done"
    # every emulated catalogue scenario but `large` by default, and one real-Flink scenario; the others
    # (`large`, the other real-Flink ones) can be asked for
    assert dag.params["scenarios"] == sorted(set(catalogue("emulation")) - {"large"} | {"real-flink-tm-kills"})
    assert dag.params.get_param("scenarios").schema["items"]["enum"] == sorted(catalogue())
    params = copy.deepcopy(dag.params)
    params.update({"scenarios": ["large", "smoke"], "swarm_seeds": 500})
    params.validate()


STOCK_DAILY = """
import pendulum
from airflow.sdk import dag, task


@dag(dag_id="stock_daily", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False)
def stock_daily():
    @task
    def noop():
        pass

    noop()


stock_daily()
"""


def test_unpausing_the_nightly_starts_no_run_before_its_schedule(tmp_path):
    """On a real metadata DB: the DAGs as the dag-processor writes them, unpaused as the UI does,
    then the scheduler's own run-creation step. A DAG with the stock settings (@daily, a start
    date in the past, catchup=False) gets a run at once; the nightly waits for 02:00 UTC."""
    import datetime as dt

    from sqlalchemy import select, update

    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import sync_bag_to_db
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models import DagModel, DagRun
    from airflow.utils.db import initdb
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit

    initdb()
    DagBundlesManager().sync_bundles_to_db()
    (tmp_path / "stock_daily.py").write_text(STOCK_DAILY)
    ids = ["regionchaos_nightly", "stock_daily"]
    for bag in (DagBag(dag_folder=str(ROOT / "dags" / "regionchaos_nightly.py")), DagBag(dag_folder=str(tmp_path))):
        assert not bag.import_errors, bag.import_errors
        sync_bag_to_db(bag, "dags-folder", None)
    with create_session() as session:
        session.execute(update(DagModel).where(DagModel.dag_id.in_(ids)).values(is_paused=False))
    unpaused = pendulum.now("UTC")
    with create_session() as session, prohibit_commit(session) as guard:
        SchedulerJobRunner(job=Job())._create_dagruns_for_dags(guard, session)
    with create_session() as session:
        runs = session.execute(select(DagRun.dag_id, DagRun.run_after).where(DagRun.dag_id.in_(ids))).all()
        next_nightly = session.get(DagModel, "regionchaos_nightly").next_dagrun_create_after
    last_2am = unpaused.replace(hour=2, minute=0, second=0, microsecond=0)
    last_2am = last_2am if last_2am <= unpaused else last_2am.subtract(days=1)
    assert [dag_id for dag_id, _ in runs].count("stock_daily") == 1  # the stock settings: a run at unpause
    nightly = [run_after for dag_id, run_after in runs if dag_id == "regionchaos_nightly"]
    if unpaused - last_2am > dt.timedelta(minutes=10):  # outside the grace after 02:00 (FIRST_RUN_GRACE)
        assert nightly == []
        assert next_nightly == last_2am.add(days=1)
    else:  # unpaused within 10 min after 02:00: that night's run, at its schedule
        assert nightly == [last_2am]


BOUND = "flip_bounds.consecutive_regional_within_bound"


def _judged(scenario, run_id: str, failed: dict[str, list[str]], *, unknown: tuple[str, ...] = (),
            tags: dict | None = None, mutant: str | None = None) -> dict:
    """A stored summary's judgement fields for checks that fail ``failed`` (suite -> rules), each violating
    row tagged by every finding that declares its rule unless ``tags`` (rule -> tags) says otherwise,
    judged against ``scenario`` by the judge room (pure logic)."""
    from regionchaos.judge import judgement_of

    checks = _checks(failed, unknown)
    for check in checks:
        for rule, tag in (tags or {}).items():
            if rule.split(".")[0] == check["name"]:
                check["explained"][rule.split(".")[1]] = tag
    judged = judgement_of(run_id, checks, scenario=scenario, mutant=mutant)
    return {**judged.fields(), "run_id": run_id, "scenario": scenario.name, "seed": scenario.seed,
            "mutant": mutant, "checks": checks, "replay": f"regionchaos run --scenario {scenario.name}"}


def test_nightly_judgement_fails_on_unexpected_verdicts():
    from regionchaos.scenario import load

    smoke, tier2, jm = load("smoke"), load("forced-global-tier2"), load("jm-failover")
    plan = [{"scenario_name": "smoke", "run_id": "a"}, {"scenario_name": "forced-global-tier2", "run_id": "b"},
            {"scenario_name": "jm-failover", "run_id": "c"}]
    f1 = {"flip_bounds": [BOUND.split(".")[1]]}
    good = [result_row(_judged(smoke, "a", {})), result_row(_judged(tier2, "b", f1)), result_row(_judged(jm, "c", {}))]
    assert judge_nightly(plan, good) == []
    regression = [good[0], good[1], result_row(_judged(jm, "c", {"exactly_once_output": ["no_duplicate_commit"]}))]
    assert [p.split(":")[0] for p in judge_nightly(plan, regression)] == ["jm-failover"]
    finding_gone = [good[0], result_row(_judged(tier2, "b", {})), good[2]]  # its own schedule must show F1
    (gone,) = judge_nightly(plan, finding_gone)
    assert gone.startswith("forced-global-tier2: valid, not as its scenario expects: expected to fail flip_bounds")
    wrong_reason = [good[0], result_row(_judged(tier2, "b", {"exactly_once_output": ["no_duplicate_commit"]})), good[2]]
    assert "exactly_once_output, which no finding declares" in judge_nightly(plan, wrong_reason)[0]
    assert "no result" in judge_nightly(plan, good[:2])[0]
    # F1 (the FLIP's tier 2) is declared for every scenario with regional checkpoints: flip_bounds
    # alone is accepted there, anything more is not
    tier2_smoke = [result_row(_judged(smoke, "a", f1)), good[1], good[2]]
    assert judge_nightly(plan, tier2_smoke) == []
    # the same rule failed, but no row of it shows F1's mechanism: not excused
    not_f1 = [result_row(_judged(smoke, "a", f1, tags={BOUND: {"": 1}})), good[1], good[2]]
    assert [p.split(":")[0] for p in judge_nightly(plan, not_f1)] == ["smoke"]
    more = [result_row(_judged(smoke, "a", {**f1, "notifications": ["commits_only_on_completion"]})), good[1], good[2]]
    assert [p.split(":")[0] for p in judge_nightly(plan, more)] == ["smoke"]
    # a failed check that does not say which rules failed cannot be put down to a finding
    unattributed = [result_row(_judged(smoke, "a", {"flip_bounds": []})), good[1], good[2]]
    assert "no finding can be named" in judge_nightly(plan, unattributed)[0]
    unknown = [good[0], good[1], result_row(_judged(jm, "c", {}, unknown=("liveness",)))]
    assert [p.split(":")[0] for p in judge_nightly(plan, unknown)] == ["jm-failover"]
    assert "unknown: no result for liveness" in judge_nightly(plan, unknown)[0]


def test_a_result_row_carries_the_judgement_the_nightly_holds_it_to():
    from regionchaos.scenario import load

    summary = _judged(load("smoke"), "nightly-x-smoke", {"flip_bounds": ["ref_chain_depth_within_bound"]},
                      tags={"flip_bounds.ref_chain_depth_within_bound": {"F1": 3}})
    row = result_row(summary)
    assert row["failed_rules"] == ["flip_bounds.ref_chain_depth_within_bound"] and row["standing"] == "finding"
    assert row["outcome"]["kind"] == "finding" and row["outcome"]["green"]
    plan = [{"scenario_name": "smoke", "run_id": "nightly-x-smoke"}]
    assert judge_nightly(plan, [row]) == []
    # a row read back from a summary that does not store its standing is never read more favourably
    legacy = {k: v for k, v in summary.items() if k not in ("standing", "why", "as_expected")}
    assert result_row(legacy)["outcome"]["kind"] == "violation" and judge_nightly(plan, [result_row(legacy)])


def test_the_nightly_explorations_fail_it_when_not_green_or_their_finding_is_gone():
    from regionchaos.judge.policy import infrastructure, swarm_outcome
    from regionchaos_airflow.runs import exploration_row, judge_explorations

    def summary(outcome, shown):
        return {"scenario": "pr-gateway-stays-closed", "overrides": {}, "max_checkpoints": 3, "states": 4,
                "schedules": 4096, "proof_statement": "...", "findings": shown, "outcome": outcome.as_dict()}

    green = swarm_outcome([{"seed": 1, "verdict": "valid", "standing": "valid"}], seeds=1)
    found = {"F16": {"checkpoints": 2}}
    assert judge_explorations([exploration_row("F16", summary(green, found))]) == []
    (gone,) = judge_explorations([exploration_row("F16", summary(green, {}))])
    assert "no representative shows F16 within 3 attempts" in gone
    red = judge_explorations([exploration_row("F16", summary(infrastructure("the model drifted"), found))])
    assert red == ["exploration of pr-gateway-stays-closed for F16: the model drifted"]
    assert "no result" in judge_explorations(None)[0]


# -- real Flink (backend flink) --------------------------------------------------------------------

def test_a_skipped_real_flink_run_is_no_problem_of_the_nightly_but_said_in_its_note():
    from regionchaos_airflow.operators import nightly_note
    from regionchaos_airflow.runs import skipped_runs

    why = "scenario real-flink-tm-kills runs on real Flink, and this machine has no Flink distribution: ..."
    plan = [{"scenario_name": "smoke", "run_id": "a", "expect": "valid"},
            {"scenario_name": "real-flink-tm-kills", "run_id": "b", "expect": "valid", "skip": why}]
    rows = [{"run_id": "a", "verdict": "valid", "failed": []}]
    assert judge_nightly(plan, rows) == [] and skipped_runs(plan) == [f"real-flink-tm-kills: {why}"]
    note = nightly_note(plan, rows, None, [], base_url="http://h")
    assert "**nightly: 1 scenario(s) as expected**" in note and f"- real-flink-tm-kills: {why}" in note
    assert note.endswith("[Chaos runs](http://h/plugin/chaos/regionchaos/)")  # the runs view inside Airflow
    # not skipped on purpose, and no row: its task failed, a problem
    unplanned = [plan[0], {k: v for k, v in plan[1].items() if k != "skip"}]
    assert [p.split(":")[0] for p in judge_nightly(unplanned, rows)] == ["real-flink-tm-kills"]
    # judged: the real run's row is held to its scenario (valid expected)
    assert judge_nightly(unplanned, rows + [{"run_id": "b", "verdict": "valid", "failed": []}]) == []


def test_without_a_distribution_a_real_scenario_is_refused_by_the_manual_form_and_planned_skipped(monkeypatch,
                                                                                                  tmp_path):
    from regionchaos.scenario import load

    monkeypatch.setenv("FLINK_HOME", str(tmp_path / "no-flink"))
    reason = form.real_flink_refusal(load("real-flink-tm-kills"))
    assert "no Flink distribution" in reason and "scripts/setup.sh" in reason and "FLINK_HOME" in reason
    assert form.real_flink_refusal(load("smoke")) is None
    (error,) = form.check_manual_conf({"scenario": "real-flink-tm-kills"})
    assert error.param == "scenario" and "scripts/setup.sh" in error.reason


@pytest.mark.parametrize("conf, param, says", [
    ({"scenario": "real-flink-tm-kills", "parallelism": 4}, "parallelism", "only the emulation reads it"),
    ({"scenario": "real-flink-tm-kills", "decline": 0.1}, "decline", "only the emulation reads it"),
    ({"scenario": "real-flink-tm-kills", "mutant": "failed-region-commits"}, "mutant", "a real run has none"),
])
def test_the_manual_form_refuses_the_emulation_s_knobs_for_a_real_scenario(conf, param, says, monkeypatch):
    monkeypatch.setattr(form, "real_flink_refusal", lambda scenario: None)  # as with a distribution installed
    errors = form.check_manual_conf(conf)
    assert [e.param for e in errors] == [param] and says in errors[0].reason, errors
    assert form.check_manual_conf({"scenario": "real-flink-tm-kills", "seed": 4}) == []


def test_the_swarm_form_refuses_a_real_scenario():
    (error,) = form.check_swarm_conf({"scenario": "real-flink-tm-kills"})
    assert error.param == "scenario" and "this DAG only emulates the protocol" in error.reason, error


def test_a_real_negative_control_shown_invalid_stays_green_and_says_so():
    from regionchaos.scenario import load
    from regionchaos_airflow.operators import run_outcome

    control = load("real-flink-resume-older")
    shown = run_outcome(_judged(control, "r", {"exactly_once_output": ["no_duplicate_commit"]}))
    assert shown.green and shown.sentence == ("invalid as expected: a negative control; failed invariants: "
                                              "exactly_once_output")
    more = run_outcome(_judged(control, "r", {"exactly_once_output": ["no_duplicate_commit"],
                                              "storage_safety": ["retained_objects_exist"]}))
    assert not more.green and "a negative control" in more.sentence

# -- swarm -------------------------------------------------------------------------------

def test_swarm_graph_maps_over_seed_batches(dagbag):
    dag = dagbag.dags["regionchaos_swarm"]
    assert {t.task_id for t in dag.tasks} == {"plan_batches", "run_batch", "summarize"}
    assert edges(dag) == {("plan_batches", "run_batch"), ("run_batch", "summarize"),
                          ("plan_batches", "summarize")}
    run_batch = dag.get_task("run_batch")
    assert isinstance(run_batch, MappedOperator)
    assert dag.get_task("summarize").trigger_rule == "all_done"
    assert dag.params["scenario"] == "smoke"


def test_a_nightly_of_one_scenario_still_gets_a_list_of_rows():
    row = {"run_id": "a", "scenario": "smoke", "verdict": "valid", "failed": []}
    assert mapped_rows(row) == [row]  # Airflow unpacks a group mapped once (apache/airflow#69036)
    assert mapped_rows([row, None, row]) == [row, row]
    assert mapped_rows(None) == []


def _seed(seed: int, summary: dict) -> dict:
    """A swarm seed's record: its judgement's fields, as `regionchaos.swarm.seed_result` keeps them."""
    return {**{k: v for k, v in summary.items() if k not in ("checks", "findings", "as_expected", "scenario")},
            "seed": seed, "replay": f"x{seed}"}


def test_swarm_rows_mark_known_findings_and_carry_replay_lines():
    from regionchaos.scenario import load

    smoke = load("smoke", overrides={"faults.swarm": True})
    result = {"swarm_id": "smoke-correct-s1-n2-abc", "known_findings": [{"seed": 2}],
              "runs": [_seed(1, _judged(smoke, "r1", {})),
                       _seed(2, _judged(smoke, "r2", {"flip_bounds": [BOUND.split(".")[1]]}))]}
    rows = swarm_rows(result)
    assert [r["known_finding"] for r in rows] == [False, True] and rows[1]["standing"] == "finding"
    assert rows[1]["replay_deep"] == "regionchaos replay smoke-correct-s1-n2-abc --seed 2"
    outcome, problems = judge_swarm(rows, mutant=None, seeds=2)
    assert problems == [] and outcome.kind == "finding" and "F1" in outcome.sentence
    assert dated_first_seed(pendulum.datetime(2026, 11, 23)) == 20261123 * 1_000_000


def test_swarm_judgement():
    from regionchaos.scenario import load

    smoke = load("smoke", overrides={"faults.swarm": True})
    valid = _seed(1, _judged(smoke, "r1", {}))
    # a duplicate commit no finding's mechanism explains (F12 declares the rule in smoke swarms)
    broken = _seed(2, _judged(smoke, "r2", {"exactly_once_output": ["no_duplicate_commit"]},
                              tags={"exactly_once_output.no_duplicate_commit": {"": 1}}))
    assert judge_swarm([valid], mutant=None, seeds=1)[1] == []
    assert "seed 2: invalid" in judge_swarm([valid, broken], mutant=None, seeds=2)[1][0]
    assert "no result" in judge_swarm([valid], mutant=None, seeds=2)[1][0]
    # with a mutant: red whether a seed caught it or none did, the note saying which
    caught, problems = judge_swarm([valid, broken], mutant="no-forced-global", seeds=2)
    assert (caught.kind, caught.caught) == ("violation", True) and "on 1 of 2 seeds" in problems[0]
    missed, problems = judge_swarm([valid], mutant="no-forced-global", seeds=1)
    assert (missed.kind, missed.caught) == ("mutant-not-caught", False)
    assert "no seed caught mutant no-forced-global" in problems[0]


# -- the spark-submit switch -------------------------------------------------------------

def test_without_the_variable_nothing_is_spark_submitted(dagbag):
    for dag in dagbag.dags.values():
        assert not [t for t in dag.tasks if type(t).__name__ == "SparkSubmitOperator"]


def test_the_variable_switches_emulate_to_spark_submit(cluster_dagbag):
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    assert cluster_dagbag.import_errors == {}
    nightly = cluster_dagbag.dags["regionchaos_nightly"]
    emulate = nightly.get_task("run_scenario.emulate")
    assert isinstance(emulate, SparkSubmitOperator)
    assert emulate._conn_id == "spark_cluster"
    assert emulate.application == str(ROOT / "spark_jobs" / "emulate.py")
    assert emulate.get_closest_mapped_task_group() is nightly.task_group_dict["run_scenario"]
    assert "run_scenario.chaos_run" not in nightly.task_ids
    assert edges(nightly) >= {("run_scenario.spark_args", "run_scenario.emulate"),
                              ("run_scenario.emulate", "run_scenario.validate"),
                              ("run_scenario.validate", "run_scenario.publish_report"),
                              ("run_scenario.publish_report", "summarize")}
    for task_id in ("run_scenario.spark_args", "run_scenario.validate", "run_scenario.publish_report"):
        assert nightly.get_task(task_id).get_closest_mapped_task_group() is nightly.task_group_dict["run_scenario"]
    manual = cluster_dagbag.dags["regionchaos_manual"]
    assert isinstance(manual.get_task("emulate"), SparkSubmitOperator)
    assert "chaos_run" not in manual.task_ids


# -- run ids -----------------------------------------------------------------------------

def test_run_ids_are_keyed_by_the_airflow_run_and_storage_safe():
    a = run_key("nightly", "scheduled__2025-01-02T00:00:00+00:00", "rescale-4-2-1")
    assert a == run_key("nightly", "scheduled__2025-01-02T00:00:00+00:00", "rescale-4-2-1")
    assert a != run_key("nightly", "scheduled__2025-01-03T00:00:00+00:00", "rescale-4-2-1")
    assert a == "nightly-scheduled-2025-01-02T00-00-00-00-00-rescale-4-2-1"
    assert ".." not in run_key("a/../b", "..") and "/" not in run_key("a/../b")
    with pytest.raises(ValueError):
        run_key("///")


def test_param_objects_are_airflow_params():
    assert all(isinstance(p, Param) for p in form.manual_params().values())


def test_spark_args_match_the_cli_of_spark_jobs_emulate(monkeypatch):
    """The cluster path hands spark_jobs/emulate.py arguments its own parser accepts."""
    import importlib.util

    from regionchaos.run import parse_set
    from regionchaos.scenario import load
    from regionchaos_airflow.operators import EMULATE_APPLICATION, spark_args

    spec = importlib.util.spec_from_file_location("emulate_job", EMULATE_APPLICATION)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    monkeypatch.setenv("REGIONCHAOS_S3_ENDPOINT", "http://minio:9000")
    monkeypatch.setenv("REGIONCHAOS_BUCKET", "chaos")
    scenario = form.scenario_from_params(GOOD_CONF)
    entry = {"run_id": "r-1", "scenario_name": scenario.name, "scenario": scenario.to_dict(),
             "overrides": form.overrides_from_params(GOOD_CONF), "mutant": "no-forced-global"}
    args = job.parse_args(spark_args.function(entry))
    assert (args.scenario, args.seed, args.run_id, args.mutant) == ("rescale-4-2-1", 7, "r-1", "no-forced-global")
    assert (args.s3_endpoint, args.bucket) == ("http://minio:9000", "chaos")
    overrides = parse_set(args.overrides)  # as the job reads them
    assert overrides == entry["overrides"]
    assert load(args.scenario, overrides, seed=args.seed) == scenario  # the job emulates the same run



def test_the_cluster_path_refuses_a_real_flink_scenario_before_spark_submit(monkeypatch):
    """A real-Flink run cannot be spark-submitted (the cluster only emulates): its spark_args task fails
    saying so and how to run it, and hands spark-submit nothing."""
    from airflow.sdk.exceptions import AirflowFailException

    from regionchaos.scenario import load
    from regionchaos_airflow.operators import spark_args

    monkeypatch.setenv("REGIONCHAOS_S3_ENDPOINT", "http://minio:9000")
    monkeypatch.setenv("REGIONCHAOS_BUCKET", "chaos")
    scenario = load("real-flink-tm-kills")
    entry = {"run_id": "r-1", "scenario_name": scenario.name, "scenario": scenario.to_dict(), "overrides": {}}
    with pytest.raises(AirflowFailException, match="runs on real Flink .*unset regionchaos_spark_conn_id"):
        spark_args.function(entry)

# -- the verdict in Airflow's terms (what fails a manual run, what its note and link say) ---

def _checks(failed: dict[str, list[str]], unknown: tuple[str, ...] = ()) -> list[dict]:
    from regionchaos.judge.suites import load_suites

    from regionchaos import findings

    def tags(suite, rules):  # one violating row per rule, explained by every finding that declares it
        return {r: {",".join(sorted(f.id for f in findings.FINDINGS if f"{suite}.{r}" in f.rules)): 1} for r in rules}
    return [{"name": s.name, "success": None if s.name in unknown else s.name not in failed,
             "failed_rules": failed.get(s.name, []), "explained": tags(s.name, failed.get(s.name, []))}
            for s in load_suites()]


def test_a_run_fails_its_dag_run_only_when_the_table_says_red():
    from regionchaos.scenario import load
    from regionchaos_airflow.operators import run_outcome

    smoke, tier2 = load("smoke"), load("forced-global-tier2")
    valid = run_outcome(_judged(smoke, "r", {}))
    assert valid.green and valid.sentence.startswith("valid")
    caught = run_outcome(_judged(smoke, "r", {"notifications": ["commits_only_on_completion"],
                                              "exactly_once_output": ["no_duplicate_commit"]},
                                 mutant="failed-region-commits"))
    assert not caught.green and caught.caught
    assert caught.sentence == ("invalid: the checks caught mutant failed-region-commits; failed invariants: "
                               "exactly_once_output, notifications")
    missed = run_outcome(_judged(smoke, "r", {}, mutant="regional-final-checkpoint"))
    assert not missed.green and missed.caught is False and "did not catch" in missed.sentence
    # a finding's scenario showing its finding: green, and it says which finding
    finding = run_outcome(_judged(tier2, "r", {"flip_bounds": [BOUND.split(".")[1]]}))
    assert finding.green, finding
    assert finding.sentence.startswith("invalid as expected: the run shows finding F1 (")
    # the same failure plus a rule no finding declares: red, naming both invariants and why
    regression = run_outcome(_judged(tier2, "r", {"flip_bounds": [BOUND.split(".")[1]],
                                                  "notifications": ["commits_only_on_completion"]}))
    assert not regression.green and set(regression.failed) == {"flip_bounds", "notifications"}
    assert "notifications, which no finding declares" in regression.sentence
    unknown = run_outcome({"verdict": "unknown", "error": "validate failed: boom", "checks": []})
    assert (unknown.green, unknown.sentence) == (False, "unknown: validate failed: boom")
    no_result = run_outcome(_judged(smoke, "r", {}, unknown=("liveness",)))
    assert not no_result.green and "liveness" in no_result.sentence


def test_the_note_and_the_link_point_into_airflow():
    from regionchaos_airflow.listener import MAX_NOTE_CHARS, compose
    from regionchaos.judge import RunOutcome
    from regionchaos_airflow.operators import note_text, report_url

    url = report_url("smoke-s1-manual-x", base_url="http://127.0.0.1:8091/")
    # the report's own page, inside Airflow's UI (Airflow 3.3 frames the plugin's view at /plugin/chaos)
    assert url == "http://127.0.0.1:8091/plugin/chaos/regionchaos/runs/smoke-s1-manual-x/report"
    assert report_url("../etc", base_url="http://h") is None
    outcome = RunOutcome("violation", "invalid: failed invariants: notifications")
    note = note_text(outcome, {"scenario": "smoke", "seed": 1, "mutant": None, "run_id": "smoke-s1-manual-x"}, url)
    assert note.splitlines()[0] == "**invalid: failed invariants: notifications**"
    assert f"[Chaos report]({url})" in note
    assert compose([note, note, ""]) == note  # one note per run, duplicates dropped
    assert len(compose(["x" * 5000])) <= MAX_NOTE_CHARS


def test_the_swarm_note_links_the_runs_view_inside_airflow():
    from regionchaos.judge import swarm_outcome
    from regionchaos_airflow.operators import swarm_note

    rows = [{"seed": 1, "verdict": "valid"}, {"seed": 2, "verdict": "valid"}]
    note = swarm_note(rows, swarm_outcome(rows, seeds=2), base_url="http://h/")
    assert note.startswith("**swarm of 2 seed(s)")
    assert note.endswith("[Chaos runs](http://h/plugin/chaos/regionchaos/)")


def test_a_run_s_dag_run_is_read_from_beside_its_summary_for_the_runs_view_link():
    from types import SimpleNamespace

    from regionchaos_airflow.operators import airflow_key
    from regionchaos_airflow.runs import dag_run_link, result_row

    dag_run = SimpleNamespace(dag_id="regionchaos_manual", run_id="manual__2026-11-25T03:00:00+00:00")
    key = airflow_key({"dag_run": dag_run, "run_id": dag_run.run_id, "dag": None})
    assert key == {"dag_id": "regionchaos_manual", "dag_run_id": "manual__2026-11-25T03:00:00+00:00"}
    assert airflow_key({"dag": SimpleNamespace(dag_id="d"), "run_id": "r"}) == {"dag_id": "d", "dag_run_id": "r"}
    assert airflow_key({}) is None and airflow_key({"run_id": "r"}) is None  # no DAG run: nothing to link
    summary = {"run_id": "smoke-s1-manual-x", "verdict": "invalid", "checks": []}
    beside = {**key, "note": "**invalid**"}  # airflow.json
    link = "/airflow/dags/regionchaos_manual/runs/manual__2026-11-25T03%3A00%3A00%2B00%3A00"
    assert dag_run_link(beside, "/airflow") == link
    assert result_row(summary, beside)["dag_run"] == dag_run_link(beside)
    assert result_row(summary)["dag_run"] is None  # nothing beside it, nothing in it
    assert dag_run_link({**summary, "airflow": key}, "/airflow") == link  # runs stored before airflow.json


def test_a_task_stores_its_dag_run_beside_the_summary_and_never_rewrites_it(s3_server, tmp_path):
    import json

    from regionchaos.storage import ObjectStore
    from regionchaos_airflow.operators import record_dag_run
    from regionchaos_airflow.runs import AIRFLOW_KEY, dag_run_link

    run_id = "dagrun-key-smoke-s1"
    stored = json.dumps({"run_id": run_id, "verdict": "valid", "checks": [], "local": str(tmp_path / run_id)}).encode()
    store = ObjectStore.for_run(s3_server.config, run_id)
    store.put("summary.json", stored)
    (tmp_path / run_id).mkdir()
    (tmp_path / run_id / "summary.json").write_bytes(stored)
    key = {"dag_id": "regionchaos_manual", "dag_run_id": "manual__x"}
    summary = json.loads(stored)
    record_dag_run(summary, s3_server.config, key, note="**valid**")
    assert store.get("summary.json") == stored == (tmp_path / run_id / "summary.json").read_bytes()
    assert summary == json.loads(stored)  # nor the task's copy
    for doc in (json.loads(store.get(AIRFLOW_KEY)), json.loads((tmp_path / run_id / AIRFLOW_KEY).read_text())):
        assert doc == {**key, "note": "**valid**"} and dag_run_link(doc) == "/dags/regionchaos_manual/runs/manual__x"
    client = s3_server.config.client()

    def every_key() -> set[str]:
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=s3_server.config.bucket)
        return {o["Key"] for page in pages for o in page.get("Contents", [])}

    before = every_key()
    record_dag_run({"run_id": "../x"}, s3_server.config, key)  # not a run id: nothing written
    # (other workers' tests write to the same bucket meanwhile: only a key naming "x" or ".." can be this call's)
    written = every_key() - before
    assert not {k for k in written if {"x", ".."} & set(k.split("/"))}, written


def test_a_finding_is_shown_only_where_its_mechanism_tags_its_rows():
    """F1 and F18 both declare the consecutive-regional bound for a smoke swarm seed; a run shows the one whose
    mechanism tagged its violating rows, both when both did, and (no tags recorded) every one that declares it."""
    from regionchaos.scenario import load

    smoke = load("smoke", overrides={"faults.swarm": True})
    rule = "flip_bounds.consecutive_regional_within_bound"
    failed = {"flip_bounds": [rule.split(".")[1]]}

    def shown(tags):
        return [f["id"] for f in _judged(smoke, "r", failed, tags={rule: tags})["findings_shown"]]

    assert shown({"F1": 2}) == ["F1"]
    assert shown({"F1,F18": 1, "F1": 1}) == ["F1", "F18"]
    assert shown({"F18": 2}) == ["F18"]
