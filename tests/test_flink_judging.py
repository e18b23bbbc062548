"""The real-Flink run judged by the GX suites that apply to it.

In:  the suites on disk (``applies_to`` in their YAML), `regionchaos.judge.checks` (`check_of`, `merge_verdict`,
     `load_suites`), `regionchaos.flink.tables` / `regionchaos.flink.judging`; for the tests marked ``flink``,
     a real loopback cluster (skipped, with the reason, without a distribution), the session's Spark and S3.
Out: a suite that does not apply to a backend is "not applicable", counted neither way, and a suite that
     applies but did not run is unknown; a bad ``applies_to`` is refused naming the suite; on a real run:
     valid on storage_safety and exactly_once_output, every other suite listed apart; a resume from an OLDER
     checkpoint invalid through exactly_once_output only; the stored inventory tampered: a named file removed
     (a loss) fails storage_safety, an unnamed file added (a leak) is counted and does not fail it.
Each cluster test starts 3 JVMs (~1 GB each): run them one at a time (``-n 0``).
"""

from __future__ import annotations

import json
import shutil

import pytest

from regionchaos import run as R
from regionchaos import tables as T
from regionchaos.judge import checks as C
from regionchaos.judge import suites as S
from regionchaos.flink import tables as flink_tables
from regionchaos.flink.judging import judge_stored, verdict_by_suite
from regionchaos.flink.run import FlinkRunSpec, run_flink
from tests.flink_dist import DIST, needs_flink

RUN = "r1"


def _passing(suite: S.Suite, *, failing: str | None = None) -> dict:
    """GX-shaped rule results for one run: every rule holds, except ``failing`` (3 rows)."""
    out = {}
    for rule in (suite.evaluable, *suite.rules):
        count = 3 if rule.name == failing else 0
        rows = [{"run_id": RUN, "detail": "x"}] * count
        out[rule.name] = {"success": count == 0, "by_run": {RUN: {"count": count, "examples": rows}}}
    return out


def test_a_suite_not_applying_is_neither_passed_nor_failed_and_only_its_applicable_rules_count():
    suites = S.load_suites()
    flink = [s.name for s in suites if s.rules_for("flink") is not None]
    assert "exactly_once_output" in flink and "storage_safety" in flink and "flip_bounds" not in flink
    assert all(s.rules_for("emulation") == s.rules for s in suites)  # the emulation's verdicts: every rule
    # a failing rule that does not apply to flink changes nothing there, and fails the emulation's check
    eo = next(s for s in suites if s.name == "exactly_once_output")
    skipped = next(r.name for r in eo.rules if r not in eo.rules_for("flink"))
    assert C.check_of(eo, RUN, _passing(eo, failing=skipped), None, "flink")["success"] is True
    assert C.check_of(eo, RUN, _passing(eo, failing=skipped), None)["success"] is False
    checks = [C.check_of(s, RUN, _passing(s), None, "flink") for s in suites]
    na = [c["name"] for c in checks if not C.applies(c)]
    assert sorted(na) == sorted(set(S.EXPECTED_INVARIANTS) - set(flink))
    assert all(c["success"] is None and c["state"] == R.NOT_APPLICABLE for c in checks if c["name"] in na)
    assert C.merge_verdict(checks) == "valid"
    # an applicable suite that failed, or that did not run, decides; not-applicable ones alone are unknown
    failed = [C.check_of(s, RUN, _passing(s, failing=s.rules_for("flink")[0].name if s.name in flink else None),
                              None, "flink") for s in suites]
    assert C.merge_verdict(failed) == "invalid"
    missing = [C.check_of(s, RUN, None if s.name == "storage_safety" else _passing(s), None, "flink")
               for s in suites]
    assert C.merge_verdict(missing) == "unknown"
    assert C.merge_verdict([c for c in checks if not C.applies(c)]) == "unknown"


@pytest.mark.parametrize("applies_to, says", [
    ("{flnk: all}", "unknown backend 'flnk'"),
    ("{emulation: all, flink: [no_such_rule]}", "applies_to.flink"),
    ("{emulation: [no_duplicate_commit], flink: all}", "applies_to.emulation must be 'all'"),
    ("{flink: []}", "applies_to.flink"),
])
def test_a_bad_applies_to_is_refused_naming_the_suite(tmp_path, applies_to, says):
    shutil.copytree(S.expectations_dir(), tmp_path / "x")
    path = tmp_path / "x" / "suites" / "07_exactly_once_output.yaml"
    text = path.read_text().split("applies_to:")[0]
    path.write_text(text + f"applies_to: {applies_to}\n")
    with pytest.raises(S.SuiteError, match="07_exactly_once_output.yaml: suite exactly_once_output") as err:
        S.load_suites(tmp_path / "x")
    assert says in str(err.value)


def test_committed_lines_become_one_split_of_seq_ranges_and_a_bad_line_a_commit_without_range(object_store):
    object_store.put_many([
        ("flink/sink/part-a-0-0", b"1,1,1\n0,1,0\n"), ("flink/sink/part-b-1-0", b"1,1,1\nnot,a,line\n")])
    commits, transactions = flink_tables.sink_rows(object_store, RUN)
    cols = T.column_names("commits")
    got = sorted((r[cols.index("start")], r[cols.index("end")]) for r in commits if r[cols.index("start")] is not None)
    assert got == [(0, 1), (1, 2), (1, 2)] and len(commits) == 4 and len(transactions) == 3
    truth = flink_tables.truth_rows(RUN, {"records": 5, "keys": 2})
    tcols = T.column_names("truth")
    assert [r[tcols.index("sum")] for r in truth] == [0, 1, 0, 1, 0]  # the key seq mod K each record must carry
    assert flink_tables.relative_to_root("file:/tmp/x/checkpoints/j1/shared/s1", {"j1"}) == "j1/shared/s1"


def test_a_named_file_never_seen_is_lost_when_its_metadata_outlived_a_scan_else_undecided():
    dump = {"operators": [{"coordinator": None, "subtasks": [{"handles": [
        {"kind": "file", "path": "file:/x/checkpoints/j1/shared/sst-1"}, {"kind": "inline", "size": 9}]}]}]}
    files = [{"path": "j1/chk-3/_metadata", "first_seen_s": 1.0, "last_seen_s": 1.0},
             {"path": "j1/shared/orphan", "first_seen_s": 1.0, "last_seen_s": 1.0, "size": 4}]
    _named, _seen, lost, unresolved = flink_tables.classify({("j1", 3): dump}, {"files": files})
    assert (lost, unresolved) == (set(), {"j1/shared/sst-1"})
    files[0]["last_seen_s"] = 1.25
    counts = flink_tables.storage_counts({("j1", 3): dump}, {"files": files})
    assert (counts["lost"], counts["unresolved"], counts["leaked_examples"]) == (1, 0, ["j1/shared/orphan"])


# -- a real cluster ---------------------------------------------------------------------------------


def _judge(spark, store) -> dict:
    """The run's judgement, with each applicable suite's verdict and the storage counts."""
    judged = judge_stored(spark, store, RUN)
    suites, not_applicable = verdict_by_suite(judged.checks)
    return {"verdict": judged.verdict, "checks": judged.checks, "suites": suites, "not_applicable": not_applicable,
            "storage": judged.stats["storage_files"]}


def _tamper_inventory(store, change) -> None:
    inventory = json.loads(store.get("flink/inventory.json"))
    change(inventory)
    store.put("flink/inventory.json", json.dumps(inventory).encode())


@pytest.mark.flink
@needs_flink
@pytest.mark.spark
def test_a_real_run_is_valid_on_the_suites_that_apply_and_storage_tells_a_loss_from_a_leak(
        object_store, spark, tmp_path):
    spec = FlinkRunSpec(seed=1, records=4000, keys=8, duration_s=20, tm_kills=1,
                        state_backend="rocksdb", inline_threshold_bytes=0)
    summary = run_flink(spec, object_store, tmp_path, DIST)
    assert summary["final_state"] == "FINISHED", summary["events"]
    judged = _judge(spark, object_store)
    assert judged["suites"] == {"storage_safety": "valid", "exactly_once_output": "valid"}, judged["checks"]
    assert judged["verdict"] == "valid" and len(judged["not_applicable"]) == 10
    assert judged["storage"]["named"] > 0 and judged["storage"]["lost"] == 0, judged["storage"]
    stored = json.loads(object_store.get("flink/validation/results.json"))
    assert stored["suites"] == judged["suites"]
    leaked_before = judged["storage"]["leaked"]
    # a leak: a file nothing names (what a crashed JobManager leaves) is counted, never a loss
    job = summary["jobs"][-1]
    _tamper_inventory(object_store, lambda inv: inv["files"].append(
        {"path": f"{job}/shared/left-behind", "size": 10, "first_seen_s": 1.0, "last_seen_s": 1.0}))
    judged = _judge(spark, object_store)
    assert judged["suites"]["storage_safety"] == "valid" and judged["storage"]["leaked"] == leaked_before + 1
    # a loss: a file a copied _metadata names (one two scans saw: no race), never seen on storage
    inventory = json.loads(object_store.get("flink/inventory.json"))
    named, _seen, _lost, unresolved = flink_tables.classify(flink_tables.dumps_of(object_store), inventory)
    assert unresolved == set()
    twice = flink_tables.metadata_seen_twice(inventory)
    victim = sorted(path for path, namers in named.items() if namers & twice)[0]
    _tamper_inventory(object_store, lambda inv: inv.update(
        files=[f for f in inv["files"] if f["path"] != victim],
        raced=[r for r in inv["raced"] if r["path"] != victim]))
    judged = _judge(spark, object_store)
    assert judged["suites"] == {"storage_safety": "invalid", "exactly_once_output": "valid"}, judged["checks"]
    check = next(c for c in judged["checks"] if c["name"] == "storage_safety")
    assert check["failed_rules"] == ["retained_objects_exist"] and victim in json.dumps(check["examples"])
    assert judged["verdict"] == "invalid" and judged["storage"]["lost"] == 1
    # the same file unseen while every _metadata naming it was seen by one scan only: a race, unknown
    _tamper_inventory(object_store, lambda inv: [f.update(last_seen_s=f["first_seen_s"]) for f in inv["files"]
                                                 if f["path"].endswith("/_metadata")])
    judged = _judge(spark, object_store)
    assert judged["suites"] == {"storage_safety": "unknown", "exactly_once_output": "valid"}, judged["checks"]
    assert judged["verdict"] == "unknown" and judged["storage"]["unresolved"] == 1


@pytest.mark.flink
@needs_flink
@pytest.mark.spark
def test_resuming_from_an_older_checkpoint_is_invalid_through_exactly_once_output_only(object_store, spark, tmp_path):
    spec = FlinkRunSpec(seed=2, records=6000, keys=8, duration_s=30, tm_kills=0, jm_kill=True, resume="older",
                        inline_threshold_bytes=0)
    summary = run_flink(spec, object_store, tmp_path, DIST)
    assert summary["final_state"] == "FINISHED" and summary["restored_from"], summary["events"]
    judged = _judge(spark, object_store)
    assert judged["suites"] == {"storage_safety": "valid", "exactly_once_output": "invalid"}, judged["checks"]
    check = next(c for c in judged["checks"] if c["name"] == "exactly_once_output")
    assert "no_duplicate_commit" in check["failed_rules"], check
    assert set(check["failed_rules"]) <= {"no_duplicate_commit", "bounded_output_complete"}, check
    assert judged["verdict"] == "invalid"
