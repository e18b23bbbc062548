"""Real-Flink scenarios (``backend: flink``): the scenario key, the catalogue, `regionchaos run`.

In:  the catalogue's real-Flink scenarios, `regionchaos.scenario` / `regionchaos.cli` / `regionchaos.runner` /
     `regionchaos.findings` / `regionchaos.report`, the GX validator's suite choice per backend; for the tests
     marked ``flink``, a real loopback cluster (skipped, with the reason, without a distribution), the
     session's Spark and S3, and `regionchaos run` in a subprocess.
Out: without Flink: the section's fields reach the run (``--set real_flink.FIELD``); the emulation's fields are
     refused for backend flink and ``real_flink`` for the emulation, each named, exit 2 and nothing written;
     no distribution is exit 2 naming ``scripts/setup.sh`` and FLINK_HOME; the emulation-only commands
     refuse a real scenario; a negative control is as expected only failing its one invariant; GX's pass for
     backend flink holds the applicable suites with the rules that judge it only; the report and the console
     say the other suites apart, never as passed.
     With Flink: `regionchaos run --scenario real-flink-tm-kills --seed 1` exits 0 with summary, report and
     Data Docs stored and no process left; Ctrl-C mid-run stops every process and removes the scratch folder;
     real-flink-resume-older is invalid through exactly_once_output only. The short CI run (one TaskManager
     kill) is tests/test_real_flink_ci.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from regionchaos import cli, findings, runner
from regionchaos.judge import checks as C
from regionchaos.judge import suites as S
from regionchaos.report import build_report
from regionchaos.run import parse_set
from regionchaos.scenario import ScenarioError, catalogue, from_dict, load
from tests.expectation_helpers import meets, shows
from tests.flink_dist import DIST, needs_flink

ROOT = Path(__file__).resolve().parent.parent
REAL = ("real-flink-jm-resume", "real-flink-resume-older", "real-flink-tm-kills")
APPLICABLE = {"storage_safety", "exactly_once_output"}  # suites whose applies_to names flink


def _refused(name: str, overrides: dict) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as caught:
        load(name, overrides=overrides)
    return caught.value.errors


# -- the scenario key ---------------------------------------------------------------------------

def test_the_catalogue_holds_the_real_scenarios_apart_from_the_emulated_ones():
    assert sorted(catalogue("flink")) == list(REAL)
    assert set(catalogue("flink")) | set(catalogue("emulation")) == set(catalogue())
    assert not set(catalogue("flink")) & set(catalogue("emulation"))
    assert {load(name).backend for name in REAL} == {"flink"} and load("smoke").backend == "emulation"
    control = load("real-flink-resume-older")
    assert (control.expect.verdict, control.expect.invariant) == ("invalid", "exactly_once_output")
    assert control.flink_run_spec.resume == "older" and control.flink_run_spec.jm_kill


def test_set_reaches_the_real_runs_fields_and_the_seed_its_draw():
    scenario = load("real-flink-tm-kills", overrides=parse_set(["real_flink.tm_kills=3", "real_flink.keys=5"]), seed=9)
    spec = scenario.flink_run_spec
    assert (spec.tm_kills, spec.keys, spec.seed, spec.records) == (3, 5, 9, 8000)
    assert runner.drawn_parameters(scenario)["faults"] != runner.drawn_parameters(load("real-flink-tm-kills"))["faults"]
    assert [f["kind"] for f in runner.drawn_parameters(scenario)["faults"]] == ["tm_kill"] * 3
    # a real-Flink field changes the default run id; an emulated scenario's dict has no backend key
    assert runner.default_run_id(scenario, None) != runner.default_run_id(load("real-flink-tm-kills", seed=9), None)
    assert "backend" not in load("smoke").to_dict() and "real_flink" not in load("smoke").to_dict()
    assert from_dict(scenario.to_dict()) == scenario  # scenario.json round trip (finish, the DAGs' entries)


@pytest.mark.parametrize("overrides, field", [
    ({"topology.parallelism": 4}, "topology.parallelism"),
    ({"faults.decline": 0.1}, "faults.decline"),
    ({"execution.checkpointing.region.enabled": True}, "flink.execution.checkpointing.region.enabled"),
    ({"checkpoints": 5}, "checkpoints"),
    ({"rescale": [{"after_checkpoint": 1, "parallelism": 1}]}, "rescale"),
    ({"compare_regional_off": True}, "compare_regional_off"),
])
def test_a_field_only_the_emulation_reads_is_refused_for_backend_flink_by_name(overrides, field):
    errors = _refused("real-flink-tm-kills", overrides)
    assert [name for name, _ in errors] == [field]
    assert errors[0][1].startswith("only the emulation reads it (backend flink runs a real cluster")


@pytest.mark.parametrize("name, overrides, field, says", [
    ("smoke", {"real_flink.tm_kills": 1}, "real_flink", "only a real Flink run reads it"),
    ("real-flink-tm-kills", {"real_flink.records": 0}, "real_flink.records", "must be at least 1, got 0"),
    ("real-flink-tm-kills", {"real_flink.resume": "older"}, "real_flink.resume", "'older' needs jm_kill: true"),
    ("real-flink-tm-kills", {"real_flink.state_backend": "forst"}, "real_flink.state_backend", "'hashmap' or"),
    ("real-flink-tm-kills", {"real_flink.jm_kill": "yes"}, "real_flink.jm_kill", "must be true or false"),
    ("real-flink-tm-kills", {"real_flink.retries": 1}, "real_flink.retries", "unknown key"),
    ("real-flink-tm-kills", {"backend": "real"}, "backend", "must be 'emulation' or 'flink'"),
])
def test_a_bad_real_flink_value_is_refused_naming_the_field(name, overrides, field, says):
    errors = _refused(name, overrides)
    assert [f for f, _ in errors] == [field] and says in errors[0][1], errors


def test_no_distribution_is_exit_2_naming_the_set_up_before_anything_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLINK_HOME", str(tmp_path / "no-flink"))
    local = tmp_path / "runs"
    assert cli.main(["run", "--scenario", "real-flink-tm-kills", "--local-dir", str(local)]) == 2
    out = capsys.readouterr().out
    assert "backend: flink needs a Flink distribution" in " ".join(out.split()), out
    assert "scripts/setup.sh" in out and "FLINK_HOME" in out and not local.exists()


@pytest.mark.parametrize("argv, says", [
    (["run", "--scenario", "real-flink-tm-kills", "--set", "topology.parallelism=4"], "topology.parallelism"),
    (["run", "--scenario", "real-flink-tm-kills", "--mutant", "failed-region-commits"], "--mutant"),
    (["swarm", "--scenario", "real-flink-tm-kills", "--seeds", "3"], "swarm only emulates the protocol"),
    (["pin", "--scenario", "real-flink-tm-kills"], "pin only emulates the protocol"),
    (["shrink", "--scenario", "real-flink-resume-older"], "shrink only emulates the protocol"),
])
def test_the_emulation_only_commands_and_bad_input_refuse_a_real_scenario_with_exit_2(argv, says, tmp_path, capsys):
    local = tmp_path / "runs"
    extra = ["--local-dir", str(local)] if argv[0] in ("run", "swarm") else ["--out", str(tmp_path / "x.yaml")]
    assert cli.main(argv + extra) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert says in out, out
    assert not local.exists() and not (tmp_path / "x.yaml").exists()


def test_an_in_memory_emulation_refuses_a_real_scenario():
    with pytest.raises(ScenarioError, match="only emulates the protocol"):
        runner.emulate_in_memory(load("real-flink-tm-kills"), None)


def test_the_catalogue_listing_shows_each_backend(capsys):
    assert cli.main(["scenarios"]) == 0
    out = capsys.readouterr().out
    assert "real-flink-tm-kills (flink)" in out and "smoke (emulation)" in out


# -- a negative control's expectation, not-applicable suites --------------------------------------

def _check(name: str, success, state: str | None = None) -> dict:
    return {"name": name, "success": success, **({"state": state} if state else {}), "failed_rules": ["r"]}


def test_a_negative_control_is_as_expected_only_failing_its_one_invariant():
    control, twin = load("real-flink-resume-older"), load("real-flink-jm-resume")
    assert findings.applicable(control) == [] and findings.applicable(twin) == []
    assert meets(control, "invalid", ["exactly_once_output"], [], failed_rules=None)[0]
    assert not meets(control, "invalid", ["exactly_once_output", "storage_safety"], [], failed_rules=None)[0]
    assert not meets(control, "valid", [], [], failed_rules=[])[0]
    assert meets(twin, "valid", [], [], failed_rules=[])[0]
    assert not meets(twin, "invalid", ["exactly_once_output"], [], failed_rules=None)[0]
    # a suite that does not apply is neither failed nor unknown
    shown = shows([_check("exactly_once_output", True), _check("flip_bounds", None, "not_applicable"),
                   _check("liveness", None)])
    assert shown["unknown"] == ["liveness"] and shown["failed"] == []


def _real_summary() -> dict:
    from regionchaos.judge.checks import not_applicable_check
    from regionchaos.judge.suites import load_suites

    checks = [not_applicable_check(s, "flink") if s.name not in APPLICABLE else
              {"name": s.name, "invariant": s.invariant, "success": True, "unexpected_count": 0, "rules": {}}
              for s in load_suites()]
    return {"run_id": "r1", "scenario": "real-flink-tm-kills", "seed": 1, "backend": "flink", "verdict": "valid",
            "checks": checks, "stats": {"final_state": "FINISHED", "taskmanager_kills": 2}, "replay": "x",
            "drawn": {"faults": [{"at_s": 5.0, "kind": "tm_kill"}]}, "expect": {"verdict": "valid"}}


def test_the_report_and_the_console_say_the_suites_not_applying_apart_never_as_passed(capsys):
    summary = _real_summary()
    page = build_report(summary)  # a real run: no emulation tables read
    rows = [row for row in page.split("<tr") if "inv-" in row]
    assert sum("<td class='na'>not applicable to this distribution</td>" in row for row in rows) == 10
    assert sum(">holds<" in row for row in rows) == 2 and "Real Flink cluster" in page
    assert "UNKNOWN" not in page and "not evaluable" not in page
    assert all(">holds<" not in row for row in rows if "not applicable" in row)
    from rich.console import Console

    cli.print_summary(summary, Console(width=400))
    out = capsys.readouterr().out
    assert out.count(" ok ") == 2 and "unknown" not in out
    assert "not applicable to this distribution: metadata_well_formed" in out


@pytest.mark.spark
def test_gx_runs_for_backend_flink_the_applicable_suites_with_their_flink_rules_only(spark):
    from regionchaos.judge.engine import GXValidator
    from regionchaos.judge.suites import EVALUABLE

    validator = GXValidator.get()
    assert {s.name for s in validator.applicable("flink")} == APPLICABLE
    assert len(validator.applicable("emulation")) == 12
    definitions = validator.checkpoint_for("flink").validation_definitions
    assert sorted(d.name for d in definitions) == sorted(f"{name}.flink" for name in APPLICABLE)
    for definition in definitions:
        suite = next(s for s in validator.suites if f"{s.name}.flink" == definition.name)
        rules = {e.rule for e in definition.suite.expectations}
        assert rules == {EVALUABLE} | {r.name for r in suite.rules_for("flink")}
        assert rules < {EVALUABLE} | {r.name for r in suite.rules}  # some rules judge the emulation only
    assert validator.checkpoint_for("flink") is validator.checkpoint_for("flink")  # built once
    assert len(validator.checkpoint_for("emulation").validation_definitions) == 12


# -- on a real cluster ----------------------------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _processes_naming(text: str) -> list[int]:
    return [p.info["pid"] for p in psutil.process_iter(["pid", "cmdline"])
            if any(text in part for part in p.info["cmdline"] or []) and _alive(p.info["pid"])]


@pytest.mark.flink
@needs_flink
@pytest.mark.spark
def test_regionchaos_run_on_a_real_scenario_is_valid_stores_everything_and_leaves_no_process(tmp_path):
    scratch = tmp_path / "tmp"  # the run's scratch folder (the cluster's files) is made under TMPDIR
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "regionchaos.cli", "run", "--scenario", "real-flink-tm-kills",
                           "--seed", "1", "--local-dir", str(tmp_path / "runs")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    print(f"regionchaos run --scenario real-flink-tm-kills --seed 1: {time.monotonic() - started:.1f} s wall")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (local,) = (tmp_path / "runs").iterdir()
    summary = json.loads((local / "summary.json").read_text())
    assert (summary["verdict"], summary["backend"], summary["as_expected"]["ok"]) == ("valid", "flink", True)
    judged = {c["name"]: c.get("success") for c in summary["checks"] if c.get("state") != "not_applicable"}
    assert judged == dict.fromkeys(APPLICABLE, True)
    assert len(summary["checks"]) == 12 and summary["stats"]["taskmanager_kills"] == 2
    assert summary["stats"]["final_state"] == "FINISHED"
    page = (local / "report" / "index.html").read_text()
    assert page.count("not applicable to this distribution</td>") == 10
    assert (local / "datadocs" / "index.html").is_file()
    shown = {p.name for p in (local / "datadocs" / "validations").iterdir()}
    assert shown == APPLICABLE  # GX's pages: the suites that judged the run, nothing else
    assert "replay: regionchaos run --scenario real-flink-tm-kills --seed 1" in done.stdout
    assert _processes_naming(str(scratch)) == []  # every process of the cluster stopped
    assert [p.name for p in scratch.iterdir() if p.name.startswith("regionchaos-flink-")] == []  # scratch removed


@pytest.mark.flink
@needs_flink
@pytest.mark.spark
def test_real_flink_resume_older_is_invalid_through_exactly_once_output_only(s3_server, spark, tmp_path):
    summary = runner.run(load("real-flink-resume-older"), storage=s3_server.config, spark=spark,
                         local_dir=tmp_path)
    failed = {c["name"]: c.get("failed_rules") for c in summary["checks"] if c.get("success") is False}
    assert summary["verdict"] == "invalid" and list(failed) == ["exactly_once_output"], summary["checks"]
    assert "no_duplicate_commit" in failed["exactly_once_output"]
    assert [c["name"] for c in summary["checks"] if c.get("success") is True] == ["storage_safety"]
    assert summary["as_expected"] == {"ok": True, "why": ""} and summary["stats"]["restored_from"]


@pytest.mark.flink
@needs_flink
def test_ctrl_c_during_a_real_run_stops_every_process_and_removes_the_scratch_folder(tmp_path):
    import signal

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = subprocess.Popen([sys.executable, "-m", "regionchaos.cli", "run", "--scenario", "real-flink-tm-kills",
                            "--local-dir", str(tmp_path / "runs")], cwd=ROOT, env={**os.environ, "TMPDIR": str(scratch)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while not list(scratch.glob("regionchaos-flink-*/checkpoints/*/chk-*")) and time.monotonic() < deadline:
            time.sleep(0.5)  # the job runs and checkpoints: mid-run, as a person pressing Ctrl-C
        started = _processes_naming(str(scratch))
        assert len(started) >= 3, "the cluster (a JobManager, 2 TaskManagers) is not running"
        run.send_signal(signal.SIGINT)  # what Ctrl-C sends the command (the JVMs run in their own sessions)
        run.wait(timeout=120)
    finally:
        run.kill()
    assert run.returncode != 0
    assert [pid for pid in started if _alive(pid)] == [] and _processes_naming(str(scratch)) == []
    assert [p.name for p in scratch.iterdir() if p.name.startswith("regionchaos-flink-")] == []


# -- a distribution with FLIP-600's regional checkpoints ---------------------------------------------

def _fake_dist(home, entries: dict[str, bytes]):
    import zipfile

    (home / "lib").mkdir(parents=True)
    with zipfile.ZipFile(home / "lib" / "flink-dist-9.9-SNAPSHOT.jar", "w") as jar:
        for name, body in entries.items():
            jar.writestr(name, body)
    return home


def test_regional_checkpoints_are_read_from_the_distribution_s_own_jar(tmp_path):
    from regionchaos.flink.dist import OPTIONS_CLASS, REGIONAL_HANDLER, regional_checkpoints

    handler = _fake_dist(tmp_path / "a", {REGIONAL_HANDLER: b"\xca\xfe", "org/x/Y.class": b""})
    knows_key = _fake_dist(tmp_path / "b", {OPTIONS_CLASS: b"..execution.checkpointing.region.enabled.."})
    released = _fake_dist(tmp_path / "c", {OPTIONS_CLASS: b"..execution.checkpointing.interval.."})
    assert [regional_checkpoints(h) for h in (handler, knows_key, released)] == [True, True, False]
    if DIST is not None:  # the pinned, released distribution has none
        assert regional_checkpoints(DIST.home) is False


def test_on_a_regional_distribution_the_flip_s_own_suites_are_unknown_never_not_applicable():
    from regionchaos.flink.judging import FLIP600_SUITES, with_regional

    suites = S.load_suites()
    checks = [{"name": s.name, "suite": s.name, "invariant": s.invariant, "success": True}
              if s.name in APPLICABLE else C.not_applicable_check(s, "flink") for s in suites]
    assert C.merged(with_regional(checks, False))["verdict"] == "valid"
    regional = with_regional(checks, True)
    unknown = [c["name"] for c in regional if c.get("success") is None and C.applies(c)]
    assert sorted(unknown) == sorted(FLIP600_SUITES) and all("regional" in c["error"] for c in regional
                                                              if c["name"] in FLIP600_SUITES)
    assert C.merged(regional)["verdict"] == "unknown"
    assert [c["name"] for c in regional if not C.applies(c)] == [
        s.name for s in suites if s.name not in APPLICABLE and s.name not in FLIP600_SUITES]
