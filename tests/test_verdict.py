"""The verdict never fails open: a crash is `unknown` (exit 3), a missing rule result is `unknown`.

In:  the real CLI and runner against the embedded S3 server; a data plane made to raise
     (the only stand-in: the failure itself); GX validation results with one rule's result
     taken out.
Out: exit code 3 and a summary.json on storage whose verdict is `unknown` with the error,
     never exit 1 ("invariant violated") or a traceback; a rule with no result for a run
     makes its suite `unknown` for that run; a suite file deleted or emptied in the
     expectations makes a judged run `unknown`, never `valid` with fewer checks; an S3
     endpoint killed mid-run is one line of reason on the console (the traceback in
     LOCAL_DIR/RUN_ID/error.log) and no report address that was never written.
"""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager

import pytest

from regionchaos import cli, runner
from regionchaos import tables as T
from regionchaos.dataplane import S3Persistence
from regionchaos.judge import checks as C
from regionchaos.judge import engine as E
from regionchaos.judge import stats as ST
from regionchaos.judge import suites as S
from regionchaos.run import ExitCode
from regionchaos.scenario import load
from regionchaos.storage import EmbeddedS3, ObjectStore


def _boom(self, batch):
    raise RuntimeError("state upload exploded")


@pytest.mark.spark
def test_emulator_crash_exits_3_with_unknown_verdict_and_error(s3_server, spark, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(S3Persistence, "flush", _boom)
    code = cli.main(["run", "--scenario", "smoke", "--seed", "3", "--run-id", "crash-s3", "--json",
                     "--s3-endpoint", s3_server.config.endpoint_url, "--bucket", s3_server.config.bucket,
                     "--local-dir", str(tmp_path)])
    assert code == ExitCode.UNKNOWN
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads(ObjectStore.for_run(s3_server.config, "crash-s3").get("summary.json"))
    for summary in (printed, stored):
        assert summary["verdict"] == "unknown"
        assert "state upload exploded" in summary["error"] and summary["error"].startswith("emulate failed")
        assert summary["checks"] == []


def test_unexpected_exception_in_the_cli_is_exit_3_not_a_traceback(monkeypatch, capsys, tmp_path):
    def explode(*args, **kwargs):
        raise KeyError("spark went away")

    monkeypatch.setattr(runner, "run", explode)
    code = cli.main(["run", "--scenario", "smoke", "--s3-endpoint", "http://127.0.0.1:9", "--local-dir", str(tmp_path / "local")])
    assert code == ExitCode.UNKNOWN
    out = capsys.readouterr().out
    assert "verdict unknown" in out and "spark went away" in out


# -- GX decides --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gx_result(spark, s3_server):
    """A real GX validation of one valid smoke run: (checkpoint result, run id)."""
    run_id = "verdict-smoke-s1"
    store = ObjectStore.for_run(s3_server.config, run_id)
    scenario = load("smoke", seed=1)
    runner.start(store, scenario, run_id=run_id, mutant=None, replay="-")
    frames = T.build_frames(T.read_run(store, run_id))
    tables = {name: T.to_spark(spark, name, f) for name, f in frames.items()}
    tables = E.prepare_tables(tables, ST.table_rows(frames))
    E.register_views(tables)
    with E.tuned_session(spark, ST.table_rows(frames)):
        _, _, result = E.GXValidator.get().validate(tables["run"])
    return result, run_id


def _checks(result, run_id):
    rules, errors = E.rule_results_from_gx(result)
    return {s.name: C.check_of(s, run_id, rules.get(s.name), errors.get(s.name)) for s in S.load_suites()}


@contextmanager
def edited(result, suite: str, rule: str):
    """Yield (suite result, rule result) of the shared GX result; undo every edit afterwards."""
    vr, r = _expectation(result, suite, rule)
    details = r.result["details"]
    results, success, by_run, held_by = list(vr.results), r.success, dict(details["by_run"]), list(details["held_by"])
    try:
        yield vr, r
    finally:
        vr.results[:] = results
        r.success = success
        r.result["details"]["by_run"], r.result["details"]["held_by"] = by_run, held_by


def _expectation(result, suite: str, rule: str):
    vr = next(v for v in result.run_results.values() if v.suite_name == suite)
    return vr, next(r for r in vr.results if r.expectation_config.kwargs["rule"] == rule)


@pytest.mark.spark
def test_every_rule_answers_for_the_run_and_the_valid_run_is_valid(gx_result):
    result, run_id = gx_result
    for vr in result.run_results.values():
        for r in vr.results:
            # the run named as one with no violating row, and no entry of rows for it (custom.by_run_details)
            details = r.result["details"]
            assert details["held_by"] == [run_id] and details["by_run"] == {}, r.expectation_config.kwargs["rule"]
            assert r.success is True
    checks = _checks(result, run_id)
    assert all(c["success"] is True for c in checks.values())


@pytest.mark.spark
def test_a_removed_rule_result_makes_its_suite_unknown(gx_result):
    result, run_id = gx_result
    with edited(result, "notifications", "failed_region_did_not_commit") as (vr, gone):
        vr.results.remove(gone)
        checks = _checks(result, run_id)
    assert checks["notifications"]["success"] is None
    assert "failed_region_did_not_commit" in checks["notifications"]["error"]
    assert all(c["success"] is True for n, c in checks.items() if n != "notifications")


@pytest.mark.spark
def test_a_rule_that_returned_nothing_for_the_run_is_unknown(gx_result):
    result, run_id = gx_result
    with edited(result, "liveness", "global_after_faults") as (_, r):
        r.result["details"]["held_by"].remove(run_id)
        assert _checks(result, run_id)["liveness"]["success"] is None


@pytest.mark.spark
def test_a_rule_that_named_the_run_with_and_without_rows_is_unknown(gx_result):
    result, run_id = gx_result
    with edited(result, "liveness", "global_after_faults") as (_, r):
        r.result["details"]["by_run"][run_id] = {"count": 0, "examples": [], "explained": {}}
        checks = _checks(result, run_id)
    assert checks["liveness"]["success"] is None and "both with and without" in checks["liveness"]["error"]


@pytest.mark.spark
def test_gx_failure_with_no_unexpected_rows_is_unknown_not_valid(gx_result):
    result, run_id = gx_result
    with edited(result, "flip_bounds", "ref_chain_depth_within_bound") as (_, r):
        r.success = False  # GX says the rule failed: the verdict may not call it valid
        assert _checks(result, run_id)["flip_bounds"]["success"] is None


@pytest.mark.spark
def test_unexpected_rows_fail_the_suite_for_that_run_only(gx_result):
    result, run_id = gx_result
    with edited(result, "exactly_once_output", "no_duplicate_commit") as (_, r):
        r.success = False
        r.result["details"]["by_run"]["other-run"] = {"count": 2, "examples": [{"run_id": "other-run", "detail": "x"}]}
        assert _checks(result, run_id)["exactly_once_output"]["success"] is True
        other = _checks(result, "other-run")["exactly_once_output"]
    assert other["success"] is False and other["failed_rules"] == ["no_duplicate_commit"]


# -- the registry: a verdict needs every invariant and rule ------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("breakage", ["suite file deleted", "rules: []"])
def test_a_run_judged_with_a_suite_missing_or_empty_is_unknown(gx_result, spark, s3_server, tmp_path, monkeypatch,
                                                                breakage):
    _, run_id = gx_result  # a valid run, already emulated
    broken = tmp_path / "expectations"
    shutil.copytree(S.expectations_dir(), broken)
    suite = broken / "suites" / "04_storage_safety.yaml"
    if breakage == "suite file deleted":
        suite.unlink()
    else:
        text = suite.read_text()
        suite.write_text(text[:text.index("rules:")] + "rules: []\n")
    monkeypatch.setenv(S.EXPECTATIONS_ENV, str(broken))
    monkeypatch.setattr(E.GXValidator, "_instance", None)  # this process's GX is built from the broken copy
    summary = runner.finish(run_id, storage=s3_server.config, spark=spark, local_dir=tmp_path / "runs")
    assert summary["verdict"] == "unknown" and summary["outcome"]["exit_code"] == ExitCode.UNKNOWN
    assert "storage_safety" in summary["error"] and summary["checks"] == []
    stored = json.loads(ObjectStore.for_run(s3_server.config, run_id).get("summary.json"))
    assert stored["verdict"] == "unknown"


# -- a killed endpoint: one line of reason, no report address that was not written -------------------


@pytest.mark.spark
def test_a_killed_endpoint_is_one_line_of_reason_and_no_report_address(spark, monkeypatch, tmp_path, capsys):
    server = EmbeddedS3(bucket="killed")
    config = server.start()
    flush = S3Persistence.flush

    def kill_then_flush(self, batch):  # the endpoint dies mid-run: the data plane's next upload meets it
        server.stop()
        return flush(self, batch)

    monkeypatch.setattr(S3Persistence, "flush", kill_then_flush)
    try:
        code = cli.main(["run", "--scenario", "smoke", "--seed", "3", "--run-id", "killed-endpoint",
                         "--s3-endpoint", config.endpoint_url, "--bucket", "killed", "--local-dir", str(tmp_path)])
    finally:
        server.stop()
    out = capsys.readouterr().out
    assert code == ExitCode.UNKNOWN
    after = out[out.index("verdict: unknown"):]  # what follows the emulation's progress lines
    lines = [line for line in after.splitlines() if line.strip()]
    reason = " ".join(after.split())
    assert "error (verdict unknown): emulate failed: StorageError: data plane upload" in reason
    assert "is unreachable" in reason and config.endpoint_url in reason
    assert "Traceback" not in out and "at org.apache" not in out and "py4j" not in out
    assert len(lines) < 20, after  # verdict, the reason (wrapped at 80 columns), findings, where, replay
    assert "report:" not in out and "report/index.html" not in out  # none was written
    log = tmp_path / "killed-endpoint" / "error.log"
    assert f"(details:{log})" in "".join(after.split())  # rich wraps long paths: compare without spaces
    detail = log.read_text()
    assert "Traceback" in detail and "StorageUnreachable" in detail
    local = json.loads((tmp_path / "killed-endpoint" / "summary.json").read_text())
    assert local["verdict"] == "unknown" and local["report"] is None and local["datadocs"] is None
