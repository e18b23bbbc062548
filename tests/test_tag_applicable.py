"""A violating row is tagged only with the findings that apply to its run, on Spark.

In:  `SEED`, a `smoke` swarm seed (FLIP semantics: F1 applies, and F14, about concurrent checkpoints, which a
     swarm draws) that fails flip_bounds' two rules through
     F1's mechanism, where F7's mechanism (a finding about the PR's semantics) matches the same rows; its rows
     judged in one pass twice, under its own run id and under a second one whose run row says F7 applies too
     (as a PR run's would).
Out: the run table's ``findings`` names the findings that apply to the seed's Scenario; the seed's
     rows are tagged "F1" only, the copy's "F1,F7", with the same counts; the seed is as the smoke scenario
     expects (F1 excuses its rows). Before the ``findings`` column, both got "F1,F7": a run's tags named a
     finding that could not apply to it, and depended on nothing of the run.
"""

from __future__ import annotations

import pytest
import yaml

from regionchaos.findings import applicable, applicable_ids
from regionchaos.judge.runs import judge_rows
from regionchaos.scenario import catalogue, from_dict
from regionchaos.swarm import SWARM_OVERRIDES, SwarmContext, emulate_seed
from regionchaos.tables import column_names

pytestmark = pytest.mark.spark

SEED = 307  # smoke swarm seeds 201-800 under the event simulation: F1 on 9 seeds, F7's mechanism matching too on 4
BOUNDS = ("consecutive_regional_within_bound", "ref_chain_depth_within_bound")
AS_PR = "tags-as-if-f7-applied"


@pytest.fixture(scope="module")
def judged(spark, s3_server):
    data = yaml.safe_load(catalogue()["smoke"].read_text())
    ctx = SwarmContext("smoke", data, dict(SWARM_OVERRIDES), None, s3_server.config, "swarms/tag-applicable/", {})
    record, rows = emulate_seed(ctx, SEED)
    assert rows is not None, record.get("error")
    at = column_names("run").index("findings")
    copy = {name: [(AS_PR, *row[1:]) for row in table] for name, table in rows.items()}
    copy["run"] = [tuple("F1,F7" if i == at else v for i, v in enumerate(row)) for row in copy["run"]]
    both = {name: rows[name] + copy[name] for name in rows}
    scenario = from_dict(data, {**SWARM_OVERRIDES, "seed": SEED})  # each run held to the seed's own settings
    results = judge_rows(spark, both, [record, {**record, "run_id": AS_PR}], scenario_of=lambda r: scenario,
                         mutant=None)
    return data, record, rows["run"][0][at], results


def flip_bounds_tags(result) -> dict[str, dict[str, int]]:
    [check] = [c for c in result.checks if c["name"] == "flip_bounds"]
    return {rule: dict(check["explained"][rule]) for rule in BOUNDS}


def test_the_run_row_names_the_findings_that_apply(judged):
    """The row, built from the seed's scenario.json, names the findings its judgement reads from its Scenario."""
    data, _, findings, _ = judged
    scenario = from_dict(data, {**SWARM_OVERRIDES, "seed": SEED})
    assert findings == ",".join(f.id for f in applicable(scenario)) == "F1,F14,F18"
    assert applicable_ids({"not": "a scenario"}) == applicable_ids(None) == ""


def test_the_rows_name_only_the_findings_that_apply_to_their_run(judged):
    data, record, _, results = judged
    own, as_pr = flip_bounds_tags(results[record["run_id"]]), flip_bounds_tags(results[AS_PR])
    for rule in BOUNDS:
        # F7 matches these rows, but does not apply here (F18, which applies, tags those of its two overlapping
        # REGIONAL checkpoints too)
        assert own[rule] and all("F1" in tag.split(",") and "F7" not in tag.split(",") for tag in own[rule]), own
        # the same rows, where the run row says F7 applies
        assert any({"F1", "F7"} <= set(tag.split(",")) for tag in as_pr[rule]), as_pr
        assert sum(as_pr[rule].values()) == sum(own[rule].values())
    own_run = results[record["run_id"]]  # as the smoke scenario expects: F1 excuses its rows
    assert (own_run.verdict, own_run.standing, own_run.why) == ("invalid", "finding", "")
    shown = [f["id"] for f in own_run.findings_shown]
    assert "F1" in shown and "F7" not in shown, shown


def test_only_runs_reads_the_given_runs_rows_and_leaves_no_view(spark):
    """`expectations.custom.only_runs`: the query it hands out reads each ``rc_`` view's rows (the batch's
    included) of the given runs only, so the tagging query's joins see only the runs it tags; its views are gone
    after the block."""
    from expectations import custom

    spark.createDataFrame([("r1", 1), ("r2", 2), ("r2", 3)], "run_id string, v int").createOrReplaceTempView(
        "rc_onlyruns_probe")
    spark.createDataFrame([("r1",), ("r2",)], "run_id string").createOrReplaceTempView(custom.BATCH_VIEW)
    query = "SELECT p.run_id, p.v FROM rc_onlyruns_probe p JOIN {batch} b ON b.run_id = p.run_id"
    with custom.only_runs(spark, query, ["r2"]) as sql:
        assert "rc_onlyruns_probe" not in sql and "{batch}" not in sql and custom.BATCH_VIEW not in sql
        made = {t.name for t in spark.catalog.listTables() if t.name.startswith("rcs")}
        assert sorted(tuple(r) for r in spark.sql(sql).collect()) == [("r2", 2), ("r2", 3)]
    assert made and not made & {t.name for t in spark.catalog.listTables()}
