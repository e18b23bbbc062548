"""The real-Flink backend: a loopback cluster, one chaos run, the control.

In:  the Flink distribution `regionchaos.flink.dist.find_dist` finds (``scripts/setup.sh``
     or ``FLINK_HOME``): the tests marked ``flink`` are skipped, with the reason, when there is none.
     The embedded S3 server of tests/conftest_storage.py (`object_store`).
Out: the cluster binds loopback only, on free ports (not Flink's fixed 8081/6123), and stops every
     process it started, also when the block raises; one TaskManager kill gives exactly-once output
     (every key counts 1..n, every record once) and the dumped metadata names only files the watcher
     saw; a JobManager kill resumed from the latest retained checkpoint passes the exactly-once
     cross-check, and resumed from an OLDER one duplicates output and fails it (the verdicts are the GX
     suites': tests/test_flink_judging.py).
     The pure logic (the exactly-once check, the fault draw, bad input, finding the distribution, the
     build's cache key, the loopback configuration, the watcher's copies, the shell entry's verdict being
     GX's) is tested without Flink.
Each cluster test starts 3 JVMs (~1 GB each): run them one at a time (``-n 0``), about a minute each here.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import sys

import psutil
import pydantic
import pytest
import yaml

from regionchaos.flink import build, checks
from regionchaos.flink.cluster import ClusterSpec, FlinkCluster, cluster_config, free_port, write_conf_dir
from regionchaos.flink.dist import FlinkDist, FlinkNotInstalled, find_dist
from regionchaos.flink.rest import FlinkRest
from regionchaos.flink.run import FlinkRunSpec, draw_faults, run_flink
from regionchaos.flink.watch import CheckpointWatcher
from tests.flink_dist import DIST, needs_flink



def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _ipv4(ip: str) -> str:
    """127.0.0.1 also for a JVM's IPv4-mapped IPv6 socket (::ffff:127.0.0.1)."""
    address = ipaddress.ip_address(ip)
    return str(getattr(address, "ipv4_mapped", None) or address)


def _processes_naming(text: str) -> list[int]:
    """Processes whose command line mentions text (the cluster's scratch folder)."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if any(text in part for part in proc.info["cmdline"] or []) and _alive(proc.info["pid"]):
            found.append(proc.info["pid"])
    return found


@pytest.mark.flink
@needs_flink
def test_the_cluster_listens_on_loopback_free_ports_and_stops_every_process_on_error(tmp_path):
    cluster = FlinkCluster(DIST, tmp_path / "cluster")
    with pytest.raises(RuntimeError, match="boom"), cluster:
        assert cluster.rest.overview()["taskmanagers"] == 2
        assert {cluster.ports["rest"], cluster.ports["rpc"]}.isdisjoint({8081, 6123})
        listening = [conn.laddr for pid in cluster.started_pids
                     for conn in psutil.Process(pid).net_connections(kind="inet")
                     if conn.status == psutil.CONN_LISTEN]
        assert {addr.port for addr in listening} >= {cluster.ports["rest"], cluster.ports["rpc"]}
        assert {_ipv4(addr.ip) for addr in listening} == {"127.0.0.1"}
        cluster.kill("tm-0")
        cluster.start_taskmanager()
        cluster.wait_registered(2)
        assert len(cluster.started_pids) == 4 and _processes_naming(str(tmp_path / "cluster"))
        raise RuntimeError("boom")
    assert [pid for pid in cluster.started_pids if _alive(pid)] == []
    assert _processes_naming(str(tmp_path / "cluster")) == []


HOLDER = """
import json, sys, time
from pathlib import Path
from regionchaos.flink.cluster import FlinkCluster
from regionchaos.flink.dist import find_dist
with FlinkCluster(find_dist(), Path(sys.argv[1])) as cluster:
    print(json.dumps(cluster.started_pids), flush=True)
    time.sleep(600)
"""


@pytest.mark.flink
@needs_flink
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_to_the_python_process_stops_every_process_of_its_cluster(tmp_path, sig):
    scratch = tmp_path / "cluster"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(scratch)], stdout=subprocess.PIPE, text=True)
    try:
        pids = json.loads(holder.stdout.readline())
        assert len(pids) == 3 and all(_alive(pid) for pid in pids)
        holder.send_signal(sig)
        holder.wait(timeout=60)
    finally:
        holder.kill()
    assert [pid for pid in pids if _alive(pid)] == [] and _processes_naming(str(scratch)) == []


@pytest.mark.flink
@needs_flink
def test_one_taskmanager_kill_gives_exactly_once_output(object_store, tmp_path):
    spec = FlinkRunSpec(seed=1, records=4000, keys=8, duration_s=20, tm_kills=1,
                        state_backend="rocksdb", inline_threshold_bytes=0)
    summary = run_flink(spec, object_store, tmp_path, DIST)
    assert [e["event"] for e in summary["events"]].count("tm_kill") == 1
    assert summary["exactly_once"]["status"] == "passed", summary["exactly_once"]
    assert summary["final_state"] == "FINISHED" and summary["unknown_because"] is None
    assert "verdict" not in summary  # one cross-check is not a verdict: the GX suites give it (test_flink_judging)
    stored = json.loads(object_store.get("flink/checks/exactly_once.json"))
    assert stored["lines"] == 4000 and stored["duplicated"] == stored["missing"] == 0
    # RocksDB incremental with nothing inline: the dumps name files (SSTs under shared/), all seen on disk
    assert summary["named_files"]["named"] > 0 and summary["named_files"]["never_seen"] == 0, summary["named_files"]
    dumps = [key for key in object_store.list_keys("flink/metadata/") if key.endswith(".json")]
    assert dumps and len(dumps) == summary["metadata_dumped"] and summary["metadata_unreadable"] == []
    assert _processes_naming(str(tmp_path)) == []


@pytest.mark.flink
@needs_flink
def test_a_jobmanager_kill_resumed_from_the_latest_checkpoint_gives_exactly_once_output(object_store, tmp_path):
    """The control's twin: the same JobManager kill and resume, from the LATEST retained checkpoint, is
    valid; so the control below is invalid through its older checkpoint, not through the kill."""
    spec = FlinkRunSpec(seed=2, records=6000, keys=8, duration_s=30, tm_kills=0, jm_kill=True)
    summary = run_flink(spec, object_store, tmp_path, DIST)
    assert len(summary["jobs"]) == 2 and summary["restored_from"], summary["events"]
    assert summary["final_state"] == "FINISHED" and summary["unknown_because"] is None, summary["unknown_because"]
    assert summary["exactly_once"]["status"] == "passed", summary["exactly_once"]
    assert _processes_naming(str(tmp_path)) == []


@pytest.mark.flink
@needs_flink
def test_resuming_from_an_older_retained_checkpoint_duplicates_output_and_is_caught(object_store, tmp_path):
    spec = FlinkRunSpec(seed=2, records=6000, keys=8, duration_s=30, tm_kills=0, jm_kill=True, resume="older")
    summary = run_flink(spec, object_store, tmp_path, DIST)
    assert summary["final_state"] == "FINISHED" and summary["restored_from"], summary["events"]
    first_job = summary["jobs"][0]
    copied = [int(key.split("chk-")[1].split(".")[0]) for key in object_store.list_keys(f"flink/metadata/{first_job}/")
              if key.endswith(".json")]
    restored = int(summary["restored_from"].split("chk-")[1])
    assert restored < max(copied)  # an older checkpoint than the latest one the first job completed
    check = summary["exactly_once"]
    assert check["status"] == "failed" and check["duplicated"] > 0 and check["missing"] == 0, check
    assert _processes_naming(str(tmp_path)) == []


def _output(records: int, keys: int) -> list[str]:
    counts: dict[int, int] = {}
    lines = []
    for seq in range(records):
        key = seq % keys
        counts[key] = counts.get(key, 0) + 1
        lines.append(f"{key},{counts[key]},{seq}")
    return lines


def test_the_exactly_once_check_passes_once_and_names_each_violation():
    perfect = _output(100, 7)
    assert checks.exactly_once(perfect, 100, 7)["status"] == "passed"
    replayed = perfect + perfect[40:45]  # a replay: the same records again
    assert checks.exactly_once(replayed, 100, 7)["duplicated"] == 5
    lost = perfect[:50] + perfect[51:]
    result = checks.exactly_once(lost, 100, 7)
    assert (result["status"], result["missing"], result["missing_examples"]) == ("failed", 1, [50])
    recounted = perfect[:-1] + ["1,99,99"]  # seq 99 is key 1 (99 mod 7), but its count is wrong
    assert checks.exactly_once(recounted, 100, 7)["keys_not_1_to_n"] == [1]
    assert checks.exactly_once(perfect + ["garbage"], 100, 7)["malformed"] == 1
    assert checks.exactly_once(perfect[:-1] + ["0,15,99"], 100, 7)["wrong_key"] == 1


def test_the_seed_fixes_the_fault_schedule():
    spec = FlinkRunSpec(seed=7, tm_kills=3, jm_kill=True, duration_s=100)
    faults = draw_faults(spec)
    assert faults == draw_faults(spec) != draw_faults(spec.model_copy(update={"seed": 8}))
    assert sorted(f["kind"] for f in faults) == ["jm_kill", "tm_kill", "tm_kill", "tm_kill"]
    times = [f["at_s"] for f in faults]
    assert times == sorted(times) and 15 <= times[0] and times[-1] <= 80


def test_bad_input_names_the_field():
    with pytest.raises(pydantic.ValidationError, match="jm_kill"):
        FlinkRunSpec(seed=1, resume="older")
    with pytest.raises(pydantic.ValidationError, match="records"):
        FlinkRunSpec(seed=1, records=0)
    with pytest.raises(pydantic.ValidationError, match="state_backend"):
        FlinkRunSpec(seed=1, state_backend="forst")


def test_the_shell_entry_refuses_bad_input_by_field_with_exit_2(capsys, tmp_path):
    from regionchaos.flink.__main__ import main

    assert main(["--seed", "1", "--set", "records=0", "--scratch", str(tmp_path / "s")]) == 2
    assert main(["--seed", "1", "--set", "resume=older", "--scratch", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert "records:" in err and "jm_kill" in err and not (tmp_path / "s").exists()


def test_the_shell_entry_s_verdict_is_the_gx_suites_never_the_exactly_once_cross_check(monkeypatch, capsys,
                                                                                     s3_server, tmp_path):
    """The entry's logic with the cluster run and the GX judge replaced (both are tested for real above and in
    tests/test_flink_judging.py): a passed cross-check with the suites failing is invalid; not judged is unknown."""
    from regionchaos.flink import __main__ as entry
    from regionchaos.flink import judging
    from regionchaos.judge import judgement_of
    from regionchaos.judge.checks import not_applicable_check
    from regionchaos.judge.suites import load_suites

    ran = {"exactly_once": {"check": "exactly_once", "status": "passed"}, "final_state": "FINISHED",
           "unknown_because": None}
    monkeypatch.setattr(entry, "find_dist", lambda: None)
    monkeypatch.setattr(entry, "run_flink", lambda spec, store, scratch, dist: dict(ran))
    where = ["--endpoint-url", s3_server.config.endpoint_url, "--bucket", s3_server.config.bucket]
    assert entry.main(["--seed", "1", "--run-id", "entry-no-judge", "--no-judge", *where]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "unknown" and "--no-judge" in out["not_judged"]

    def judge_stored(spark, store, run_id, docs=False):  # every suite judged, exactly-once output failed
        checks = [not_applicable_check(s, "flink") if s.name not in ("exactly_once_output", "storage_safety") else
                  {"name": s.name, "success": s.name != "exactly_once_output",
                   "failed_rules": ["committed_once"] if s.name == "exactly_once_output" else []}
                  for s in load_suites()]
        return judgement_of(run_id, checks, scenario=None, mutant=None, stats={"storage_files": {}})
    monkeypatch.setattr(judging, "judge_stored", judge_stored)
    monkeypatch.setattr(entry, "get_spark", lambda *args, **kwargs: None)
    assert entry.main(["--seed", "1", "--run-id", "entry-judged", *where]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "invalid" and out["exactly_once"]["status"] == "passed"
    assert out["gx"]["failed"] == {"exactly_once_output": ["committed_once"]} and "python_verdict" not in out
    assert out["outcome"]["kind"] == "violation" and out["outcome"]["exit_code"] == 1


def test_find_dist_names_what_is_missing_and_reads_the_version(tmp_path):
    with pytest.raises(FlinkNotInstalled, match=r"FLINK_HOME .* has no bin/flink"):
        find_dist({"FLINK_HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "flink").write_text("#!/bin/sh\n")
    (tmp_path / "lib").mkdir()
    with pytest.raises(FlinkNotInstalled, match="flink-dist"):
        find_dist({"FLINK_HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    (tmp_path / "lib" / "flink-dist-9.9-SNAPSHOT.jar").write_bytes(b"")
    found = find_dist({"FLINK_HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    assert (found.version, found.home) == ("9.9-SNAPSHOT", tmp_path.resolve())


def test_the_build_cache_key_follows_the_sources_and_the_version(tmp_path):
    (tmp_path / "a").mkdir()
    source = tmp_path / "a" / "Job.java"
    source.write_text("class Job {}")
    first = build.sources_hash("2.3.0", tmp_path)
    assert build.sources_hash("2.3.0", tmp_path) == first != build.sources_hash("2.4.0", tmp_path)
    source.write_text("class Job { }")
    assert build.sources_hash("2.3.0", tmp_path) != first


def test_every_listener_is_bound_to_loopback_over_the_distributions_defaults(tmp_path):
    home = tmp_path / "dist"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "config.yaml").write_text(
        "env:\n  java:\n    opts:\n      all: --add-opens=java.base/java.util=ALL-UNNAMED\n"
        "jobmanager:\n  bind-host: localhost\n  rpc:\n    port: 6123\nrest:\n  address: localhost\n")
    (home / "conf" / "log4j-console.properties").write_text("# logging\n")
    fake = FlinkDist(home=home, version="x", java="java", javac="javac", jar="jar")
    ports = {"rpc": 40001, "rest": 40002, "blob": 40003}
    write_conf_dir(fake, tmp_path / "conf", cluster_config(ClusterSpec(), ports, tmp_path))
    conf = yaml.safe_load((tmp_path / "conf" / "config.yaml").read_text())
    for key in ("jobmanager.rpc.address", "jobmanager.bind-host", "taskmanager.host", "taskmanager.bind-host",
                "rest.address", "rest.bind-address"):
        assert conf[key] == "127.0.0.1", key
    assert (conf["jobmanager.rpc.port"], conf["rest.port"], conf["blob.server.port"]) == ("40001", "40002", "40003")
    assert conf["env.java.opts.all"] == "--add-opens=java.base/java.util=ALL-UNNAMED"  # kept
    assert (tmp_path / "conf" / "log4j-console.properties").is_file()


def test_the_watcher_copies_metadata_once_whole_and_tells_an_incomplete_checkpoint(tmp_path):
    job = tmp_path / "job1"
    (job / "chk-1").mkdir(parents=True)
    (job / "chk-2").mkdir()
    (job / "shared").mkdir()
    (job / "chk-1" / "_metadata").write_bytes(b"half")
    (job / "shared" / "sst-1").write_bytes(b"x" * 10)
    watcher = CheckpointWatcher(tmp_path, FlinkRest(free_port()))  # nothing listens: REST is skipped
    watcher.scan()
    (job / "chk-1" / "_metadata").write_bytes(b"half and the rest")  # Flink was still writing it
    watcher.scan()
    watcher.poll_rest()
    assert watcher.metadata == {("job1", 1): b"half and the rest"}
    assert watcher.incomplete_checkpoints() == [("job1", 2)]
    (job / "shared" / "sst-1").unlink()
    watcher.scan()
    rows = {row["path"]: row for row in watcher.inventory_rows()}
    assert rows["job1/shared/sst-1"]["size"] == 10 and rows["job1/shared/sst-1"]["present_at_end"] is False
    assert rows["job1/chk-1/_metadata"]["present_at_end"] is True and watcher.rest_history == {}
