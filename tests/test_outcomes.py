"""One outcome policy, applied by every entry point: the table of README's "Outcomes" section.

In:  four runs emulated into the session's S3 server and judged by its one GX pass (tests/judge_pool.py):
     `bounded-final` seed 1 (the correct protocol; finding F1 shows, as its settings allow), `smoke` seed 1
     with the mutant failed-region-commits (the checks catch it), `smoke` seed 1 with regional-final-checkpoint
     (they cannot: smoke never finishes), and `smoke` seed 1 with its history's ``run_finished`` event removed
     (unknown); and one deep run through the CLI, `regionchaos run --scenario bounded-final --seed 1`, on a
     bucket that keeps every version of an object.
Out: each entry point's outcome step fed those real judgements: `run`, `swarm`, `replay`, `shrink`,
     ``spark_jobs/validate.py``, the manual DAG's `publish_report` (and its run task on unknown), the nightly's
     and the swarm DAG's `summarize`; each gives the table's exit code (or colour) for a declared finding (0,
     green), a caught mutant (1, red), an uncaught mutant (1, red) and unknown (3, red), and says which in its
     sentence. The CLI's deep run exits 0 naming F1, its ``summary.json`` is written once (one version on the
     bucket) even after the DAG's recording step, which writes ``airflow.json`` beside it; every command that
     takes a scenario reads ``--set`` through the one parser.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

from regionchaos import cli, runner
from regionchaos import shrink as shrink_mod
from regionchaos import swarm as swarm_mod
from regionchaos.judge import Judgement, crashed, run_outcome, swarm_outcome
from regionchaos.judge.policy import TABLE, table_markdown
from regionchaos.run.summary import build_summary
from regionchaos.scenario import ScenarioError, load
from regionchaos.storage import ObjectStore, StorageConfig
from tests.judge_pool import pooled
from tests.tamper_helpers import edit_history

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parent.parent
CASES = {  # case -> (scenario, seed, mutant)
    "finding": ("bounded-final", 1, None),
    "caught": ("smoke", 1, "failed-region-commits"),
    "missed": ("smoke", 1, "regional-final-checkpoint"),
    "unknown": ("smoke", 1, None),
}
EXPECTED = {"finding": ("finding", 0), "caught": ("violation", 1), "missed": ("mutant-not-caught", 1),
            "unknown": ("unknown", 3)}
SAYS = {"finding": "the run shows finding F1", "caught": "the checks caught mutant failed-region-commits",
        "missed": "the checks did not catch mutant regional-final-checkpoint", "unknown": "unknown: "}


def _run_id(case: str) -> str:
    return f"outcomes-{case}"


def _build(config, spark) -> list[ObjectStore]:
    stores = []
    for case, (name, seed, mutant) in CASES.items():
        store = ObjectStore.for_run(config, _run_id(case))
        runner.start(store, load(name, seed=seed), run_id=_run_id(case), mutant=mutant,
                     replay=runner.replay_line(name, seed, None, mutant))
        if case == "unknown":  # the history ends before the run did: what judges decisions cannot be judged
            edit_history(store, lambda events: [e for e in events if e["kind"] != "run_finished"])
        stores.append(store)
    return stores


pooled(__name__, _build)


@pytest.fixture(scope="module")
def judged(judge_pool) -> dict[str, Judgement]:
    results = judge_pool.results(__name__)
    return {case: results[_run_id(case)] for case in CASES}


def summary_of(judged: dict, case: str, config) -> dict:
    name, seed, mutant = CASES[case]
    return build_summary(judged[case], load(name, seed=seed), config=config,
                         replay=runner.replay_line(name, seed, None, mutant), stats={}, drawn={})


def _argv(case: str) -> list[str]:
    name, seed, mutant = CASES[case]
    return ["--scenario", name, "--seed", str(seed)] + (["--mutant", mutant] if mutant else [])


def seed_records(judged: dict, case: str) -> list[dict]:
    """A one-seed swarm's records of the case's judgement, as `regionchaos.swarm.fast_swarm` keeps them."""
    name, seed, mutant = CASES[case]
    record = {"seed": seed, "run_id": _run_id(case), "replay": runner.replay_line(name, seed, None, mutant)}
    return [swarm_mod.seed_result(record, judged[case])]


def swarm_summary(judged: dict, case: str, config) -> dict:
    """The swarm's summary of those records, assembled where `fast_swarm` assembles it."""
    name, seed, mutant = CASES[case]
    return swarm_mod._summarize(scenario_ref=name, mutant=mutant, sid=f"outcomes-swarm-{case}",
                                runs=seed_records(judged, case), store=ObjectStore(config, f"swarms/outcomes-{case}"),
                                overrides={}, first_seed=seed, seeds=1, partitions=1, rows=0, walls={},
                                wall_seconds=0.0)


# -- the table -----------------------------------------------------------------------------------


def test_each_real_run_lands_in_its_row_of_the_table(judged, s3_server):
    assert [(row.kind, int(row.exit_code)) for row in TABLE] == [
        ("valid", 0), ("finding", 0), ("finding-gone", 1), ("violation", 1), ("mutant-not-caught", 1),
        ("unknown", 3), ("bad-input", 2)]
    for case, (kind, code) in EXPECTED.items():
        outcome = run_outcome(judged[case])
        assert (outcome.kind, outcome.exit_code, outcome.green) == (kind, code, code == 0), (case, outcome)
        assert SAYS[case] in outcome.sentence, outcome.sentence
        # read back from the summary a run stores, the outcome is the same
        stored = json.loads(json.dumps(summary_of(judged, case, s3_server.config), default=str))
        assert run_outcome(stored) == outcome and stored["outcome"] == outcome.as_dict()
    assert judged["finding"].verdict == "invalid" and judged["finding"].standing == "finding"
    assert [f["id"] for f in judged["finding"].findings_shown] == ["F1"]
    assert judged["missed"].verdict == "valid" and run_outcome(judged["missed"]).caught is False
    assert run_outcome(judged["caught"]).caught is True and judged["caught"].standing == "violation"
    assert judged["unknown"].verdict == "unknown" and "decisions_follow_rules" in judged["unknown"].unknown


def test_the_readme_shows_the_table_the_policy_applies():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Outcomes\n", 1)[1].split("\n## ", 1)[0]
    assert table_markdown() in section


def test_a_swarm_is_its_worst_seed_and_a_mutant_no_seed_caught_is_said_so(judged):
    finding, missed = seed_records(judged, "finding"), seed_records(judged, "missed")
    assert swarm_outcome(finding).kind == "finding" and swarm_outcome(finding).green
    assert swarm_outcome(finding + seed_records(judged, "unknown")).kind == "unknown"
    assert swarm_outcome(finding, seeds=2).kind == "unknown"  # a seed without a result
    # with a mutant: caught if any seed caught it; else not caught, red either way, and said so
    caught = swarm_outcome(seed_records(judged, "caught") + missed, mutant="failed-region-commits")
    assert (caught.kind, caught.caught, caught.exit_code) == ("violation", True, 1)
    none = swarm_outcome(missed, mutant="regional-final-checkpoint")
    assert (none.kind, none.caught, none.exit_code) == ("mutant-not-caught", False, 1)
    assert "no seed caught mutant regional-final-checkpoint" in none.sentence


# -- the commands --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_exits_by_the_table(case, judged, s3_server, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(runner, "run", lambda *args, **kwargs: summary_of(judged, case, s3_server.config))
    code = cli.main(["run", *_argv(case), "--local-dir", str(tmp_path)])
    out = " ".join(capsys.readouterr().out.split())
    assert code == EXPECTED[case][1], out
    assert SAYS[case] in out and f"(exit {EXPECTED[case][1]})" in out


@pytest.mark.parametrize("case", sorted(CASES))
def test_swarm_exits_by_the_table_and_its_json_says_whether_the_mutant_was_caught(case, judged, s3_server,
                                                                                   monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "fast_swarm", lambda *args, **kwargs: swarm_summary(judged, case, s3_server.config))
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["swarm", "--seeds", "1", *[a for a in _argv(case) if a != "--seed" and not a.isdigit()],
                         "--first-seed", "1", "--local-dir", str(tmp_path), "--json"])
    result = json.loads(out.getvalue())
    assert code == EXPECTED[case][1] == result["outcome"]["exit_code"], result["outcome"]
    assert result["outcome"]["caught"] is {"caught": True, "missed": False}.get(case)  # None: no mutant
    if case == "missed":
        assert result["outcome"]["kind"] == "mutant-not-caught" and "no seed caught" in result["outcome"]["sentence"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_replay_exits_by_the_table_unless_the_deep_run_disagrees(case, judged, s3_server, monkeypatch, tmp_path,
                                                               capsys):
    summary = summary_of(judged, case, s3_server.config)
    monkeypatch.setattr(cli, "replay_seed", lambda *a, **k: {**summary, "replay_of": {"differences": []}})
    assert cli.main(["replay", "outcomes-swarm", "--seed", "1", "--local-dir", str(tmp_path)]) == EXPECTED[case][1]
    assert SAYS[case] in " ".join(capsys.readouterr().out.split())
    monkeypatch.setattr(cli, "replay_seed", lambda *a, **k: {**summary, "replay_of": {"differences": ["verdict"]}})
    assert cli.main(["replay", "outcomes-swarm", "--seed", "1", "--local-dir", str(tmp_path)]) == 3  # a tool bug


@pytest.mark.parametrize("case, code", [("finding", 0), ("caught", 0), ("missed", 2), ("unknown", 3)])
def test_shrink_shrinks_what_fails_refuses_what_does_not_and_not_what_is_unknown(case, code, judged, spark,
                                                                                 monkeypatch, tmp_path, capsys):
    """A declared finding and a caught mutant fail an invariant: shrunk (0); an uncaught mutant fails nothing:
    bad input (2, nothing written); an unknown run cannot say: unknown (3)."""
    def judge(spark, scenarios, mutant):  # the run itself as judged; no smaller candidate fails here
        return [judged[case]] + [crashed(f"candidate-{i}", "not judged here", scenario=s, mutant=mutant)
                                 for i, s in enumerate(scenarios[1:])]

    monkeypatch.setattr(shrink_mod, "judge", judge)
    out = tmp_path / "shrunk.yaml"
    assert cli.main(["shrink", *_argv(case), "--max-rounds", "1", "--out", str(out)]) == code
    said = " ".join(capsys.readouterr().out.split())
    assert out.exists() is (code == 0), said
    assert {0: "shrunk", 2: "nothing to shrink", 3: "could not be judged"}[code] in said


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_spark_validate_job_exits_by_the_table(case, judged, s3_server, monkeypatch, capsys):
    path = ROOT / "spark_jobs" / "validate.py"
    spec = importlib.util.spec_from_file_location("spark_job_validate_outcomes", path)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    monkeypatch.setattr(runner, "finish_stored", lambda *a, **k: summary_of(judged, case, s3_server.config))
    code = job.main(["--run-id", _run_id(case), "--s3-endpoint", s3_server.config.endpoint_url,
                     "--bucket", s3_server.config.bucket])
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == EXPECTED[case][1] and printed["outcome"]["kind"] == EXPECTED[case][0], printed


# -- the DAGs ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def airflow():
    """The plugin's operators and the two summarizing DAGs' modules (Airflow set up for this process)."""
    import tests.airflow_env  # noqa: F401  (sets up Airflow before it is imported)

    from regionchaos_airflow import operators, runs

    def dag_module(name: str):
        spec = importlib.util.spec_from_file_location(f"outcomes_{name}", ROOT / "dags" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return SimpleNamespace(operators=operators, runs=runs, nightly=dag_module("regionchaos_nightly"),
                           swarm=dag_module("regionchaos_swarm"), failed=operators.RunFailed)


class _TaskInstance:
    def __init__(self):
        self.xcom: dict = {}

    def xcom_push(self, key, value):
        self.xcom[key] = value


def _context(monkeypatch, *modules) -> _TaskInstance:
    ti = _TaskInstance()
    context = {"ti": ti, "dag_run": SimpleNamespace(dag_id="regionchaos_manual", run_id="manual__outcomes")}
    for module in modules:
        monkeypatch.setattr(module, "get_current_context", lambda: context)
    monkeypatch.setattr("regionchaos_airflow.storage.resolve_storage", lambda: None)
    return ti


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_manual_dag_is_green_only_where_the_table_says(case, judged, s3_server, airflow, monkeypatch):
    ti = _context(monkeypatch, airflow.operators)
    summary = summary_of(judged, case, s3_server.config)
    entry = {"run_id": _run_id(case), "scenario_name": CASES[case][0], "mutant": CASES[case][2]}
    if EXPECTED[case][1] == 0:
        row = airflow.operators.publish_report.function(summary, entry, True)
        assert row["outcome"]["green"] and "F1" in ti.xcom["regionchaos_note"].splitlines()[0]
    else:
        with pytest.raises(airflow.failed, match=re.escape(SAYS[case])):
            airflow.operators.publish_report.function(summary, entry, True)
        assert ti.xcom["regionchaos_note"].startswith(f"**{run_outcome(judged[case]).sentence}**")
    # the run task itself fails (and is retried) on unknown only
    monkeypatch.setattr(runner, "run", lambda *args, **kwargs: summary)
    entry["scenario"] = load(CASES[case][0], seed=CASES[case][1]).to_dict()
    if case == "unknown":
        with pytest.raises(airflow.failed, match="unknown"):
            airflow.operators.chaos_run.function(entry)
    else:
        assert airflow.operators.chaos_run.function(entry)["outcome"]["kind"] == EXPECTED[case][0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_nightly_dag_is_red_on_any_run_the_table_makes_red(case, judged, s3_server, airflow, monkeypatch):
    ti = _context(monkeypatch, airflow.nightly)
    plan = [{"scenario_name": CASES[case][0], "run_id": _run_id(case)}]
    rows = [airflow.runs.result_row(summary_of(judged, case, s3_server.config))]
    if EXPECTED[case][1] == 0:
        no_swarm, no_exploration = {"seeds": 0, "rows": []}, {"rows": []}
        assert airflow.nightly.summarize.function(plan, rows, no_swarm, no_exploration) == {"runs": 1, "problems": []}
        assert "as expected" in ti.xcom["regionchaos_note"]
    else:
        with pytest.raises(airflow.failed, match=re.escape(SAYS[case])):
            airflow.nightly.summarize.function(plan, rows, {"seeds": 0, "rows": []}, {"rows": []})
    # its swarm sample by the same table
    sample = {"seeds": 1, "rows": airflow.runs.swarm_rows(swarm_summary(judged, case, s3_server.config))}
    if case == "finding":
        airflow.nightly.summarize.function(plan, rows, sample, {"rows": []})


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_swarm_dag_is_red_on_a_caught_and_on_an_uncaught_mutant(case, judged, s3_server, airflow, monkeypatch):
    ti = _context(monkeypatch, airflow.swarm)
    batches = [{"batch": 0, "scenario_name": CASES[case][0], "first_seed": 1, "seeds": 1, "mutant": CASES[case][2]}]
    rows = airflow.runs.swarm_rows(swarm_summary(judged, case, s3_server.config))
    if EXPECTED[case][1] == 0:
        done = airflow.swarm.summarize.function(batches, [rows])
        assert done["outcome"]["kind"] == "finding" and done["outcome"]["green"]
    else:
        with pytest.raises(airflow.failed):
            airflow.swarm.summarize.function(batches, [rows])
        note = ti.xcom["regionchaos_note"]
        kind = {"caught": "the checks caught mutant failed-region-commits",
                "missed": "no seed caught mutant regional-final-checkpoint", "unknown": "1 unknown"}[case]
        assert kind in note, note


# -- the CLI's deep run: exit 0 naming F1, summary.json written once ---------------------------------


VERSIONED = "regionchaos-versioned"  # a bucket that keeps every version of an object: each PUT is counted


def test_bounded_final_exits_0_names_f1_and_its_summary_is_written_once(spark, s3_server, airflow, tmp_path):
    config = StorageConfig(endpoint_url=s3_server.config.endpoint_url, bucket=VERSIONED)
    client = config.client()
    client.create_bucket(Bucket=VERSIONED)
    client.put_bucket_versioning(Bucket=VERSIONED, VersioningConfiguration={"Status": "Enabled"})
    run_id = "outcomes-cli-bounded-final"
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(["run", "--scenario", "bounded-final", "--seed", "1", "--run-id", run_id, "--json",
                         "--s3-endpoint", config.endpoint_url, "--bucket", VERSIONED, "--local-dir", str(tmp_path)])
    summary = json.loads(out.getvalue())
    assert code == 0, summary["outcome"]
    assert summary["verdict"] == "invalid" and summary["outcome"]["kind"] == "finding"
    assert summary["outcome"]["findings"] == ["F1"] and "finding F1" in summary["outcome"]["sentence"]
    store = ObjectStore.for_run(config, run_id)
    page = store.get("report/index.html").decode()
    assert "data-kind='finding'" in page and "finding F1" in page
    # the DAG's recording step: what Airflow knows goes beside the summary, never into it
    key = {"dag_id": "regionchaos_manual", "dag_run_id": "manual__outcomes"}
    airflow.operators.record_dag_run(summary, config, key, note="**a note**")
    versions = client.list_object_versions(Bucket=VERSIONED, Prefix=store.run_prefix)
    written = [v for v in versions.get("Versions", []) if v["Key"] == store.run_prefix + "summary.json"]
    assert len(written) == 1, written  # built once, written once
    assert json.loads(store.get("summary.json")) == {k: v for k, v in json.loads(json.dumps(
        runner.wall_clock_part(summary)[0], default=str)).items() if k != "local"}
    beside = json.loads(store.get("airflow.json"))
    assert beside == {**key, "note": "**a note**"}
    row = airflow.runs.result_row(json.loads(store.get("summary.json")), beside)
    assert row["dag_run"] == "/dags/regionchaos_manual/runs/manual__outcomes" and row["outcome"]["green"]
    local = json.loads((tmp_path / run_id / "airflow.json").read_text())
    assert local == beside and "airflow" not in json.loads((tmp_path / run_id / "summary.json").read_text())
    client.close()


# -- --set, through the one parser -----------------------------------------------------------------


@pytest.mark.parametrize("command", [["run"], ["swarm", "--seeds", "2"], ["shrink"], ["pin"]])
def test_every_command_that_takes_a_scenario_takes_set(command, tmp_path, capsys):
    extra = ["--out", str(tmp_path / "x.yaml")] if command[0] in ("shrink", "pin") else []
    checked = cli.check([*command, "--scenario", "smoke", "--set", "workload.splits=7", *extra])
    assert checked["scenario"].workload.splits == 7 and checked["overrides"] == {"workload.splits": 7}
    with pytest.raises(ScenarioError, match="workload.splits"):
        cli.check([*command, "--scenario", "smoke", "--set", "workload.splits=x", *extra])
    assert cli.main([*command, "--scenario", "smoke", "--set", "workload.splits=x", *extra]) == 2
    assert "workload.splits" in capsys.readouterr().out and not list(tmp_path.iterdir())
    if command[0] == "swarm":  # the swarm's own fault mix stays on, and its id tells the two swarms apart
        assert checked["scenario"].faults.swarm is True
        assert checked["swarm_id"] != cli.check([*command, "--scenario", "smoke"])["swarm_id"]
