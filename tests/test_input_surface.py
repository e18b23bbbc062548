"""The whole input surface, generated: every input is accepted as it says, or refused with exit 2
naming the field, and a refused input writes nothing. And run-id isolation.

In:  hypothesis-generated `regionchaos run` / `swarm` / `replay` command lines: scenario files
     (names, seeds, record rates, duplicate keys, deep nesting, binary bytes), ``--set`` pairs,
     run ids, mutants, endpoints, buckets, seeds and counts, valid and hostile alike; a fresh
     bucket on the shared embedded S3 server and a fresh working directory.
Out: for each input, `cli.check` (the checks `main` runs before its first write) either accepts
     it, and the Scenario holds exactly the values the input gave, or refuses it, and then
     `cli.main` exits 2, names the refused field, leaves the bucket empty and writes no local
     file. No emulation runs: the accepted inputs are not executed, so the test stays pure
     Python and bounded (``max_examples``; about 20 s in all).
"""

from __future__ import annotations

import json
import os
import uuid

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from regionchaos import cli, runner
from regionchaos.run import ExitCode
from regionchaos.runid import run_id_problem
from regionchaos.scenario import MUTANTS, ScenarioError
from regionchaos.storage import ObjectStore, StorageConfig
from regionchaos.storage.embedded import create_bucket

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def bucket(s3_server) -> StorageConfig:
    config = s3_server.config.model_copy(update={"bucket": f"surface-{uuid.uuid4().hex[:8]}"})
    create_bucket(config)
    return config


def objects(config: StorageConfig) -> list[str]:
    client = config.client()
    try:
        return [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=config.bucket)
                for o in page.get("Contents", [])]
    finally:
        client.close()


def tree(root: str) -> set[str]:
    return {os.path.join(d, f) for d, dirs, files in os.walk(root) for f in files + dirs}


# -- strategies -----------------------------------------------------------------------------------

HOSTILE = ["", " ", ".", "..", "../x", "/etc", "victim-run/report", "a..b", "[/]", "[/x]", "a[/b]", "-x", "a b",
           "x" * 201, "é", "run\nid", "~", "$(id)", "a/../b", "\udcff"]
text = st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=24) | st.sampled_from(HOSTILE)
id_like = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,30}", fullmatch=True)
ids = id_like | text
big_ints = st.integers(min_value=-(2**64), max_value=2**64) | st.sampled_from([0, 1, 2**63 - 1, 2**63, -1])


@st.composite
def set_pairs(draw, hostile: bool) -> tuple[str, str, object, str | None]:
    """(key, value text, the value the text says, the Scenario attribute path or None)."""
    kind = draw(st.sampled_from(["parallelism", "decline", "checkpoints", "region", "rate", "name"]
                                + (["junk"] if hostile else [])))
    if kind == "parallelism":
        v = draw(st.integers(-3, 100_000) if hostile else st.integers(2, 64))
        return "topology.parallelism", str(v), v, "topology.parallelism"
    if kind == "decline":
        v = round(draw(st.floats(-1.0, 2.0) if hostile else st.floats(0.0, 1.0)), 3)
        return "faults.decline", repr(v), v, "faults.decline"
    if kind == "checkpoints":
        v = draw(st.integers(-3, 200_000) if hostile else st.integers(10, 1000))
        return "checkpoints", str(v), v, "checkpoints"
    if kind == "region":
        v = draw(st.booleans())
        return "execution.checkpointing.region.enabled", str(v).lower(), v, "flink.region_enabled"
    if kind == "rate":
        lo, hi = sorted(draw(st.lists(big_ints if hostile else st.integers(0, 10**6), min_size=2, max_size=2)))
        return "workload.records_per_interval", f"[{lo}, {hi}]", (lo, hi), "workload.records_per_interval"
    if kind == "name":
        v = draw(ids if hostile else id_like)
        return "name", json.dumps(v), v, "name"
    return draw(text), draw(text), None, None  # anything at all: refused or taken as text


@st.composite
def scenario_files(draw, hostile: bool) -> tuple[bytes, dict | None]:
    """(file bytes, the fields the file says, or None if it is not meant to load)."""
    shape = draw(st.sampled_from(["fields", "duplicate", "deep", "binary", "not-a-mapping"]) if hostile
                 else st.just("fields"))
    if shape == "binary":
        return draw(st.binary(min_size=1, max_size=200)), None
    if shape == "deep":
        depth = draw(st.integers(60, 3000))
        return f"name: deep\ndescription: {'[' * depth}{']' * depth}\n".encode(), None
    if shape == "not-a-mapping":
        return draw(st.sampled_from([b"[]", b"42", b"- a\n- b\n", b"'x'"])), None
    fields = {"name": draw(ids if hostile else id_like)}
    if draw(st.booleans()):
        fields["seed"] = draw(big_ints if hostile else st.integers(0, 2**63 - 1))
    if draw(st.booleans()):
        fields["checkpoints"] = draw(st.integers(-2, 200_000) if hostile else st.integers(1, 1000))
    if draw(st.booleans()):
        rate = draw(st.lists(big_ints if hostile else st.integers(0, 10**6), min_size=2, max_size=2))
        fields["workload"] = {"records_per_interval": rate if hostile else sorted(rate)}
    body = json.dumps(fields)  # JSON is YAML: the file says exactly these values
    if shape == "duplicate":
        key = draw(st.sampled_from(sorted(fields)))
        body = body[:-1] + f", {json.dumps(key)}: {json.dumps(fields[key])}}}"
        return body.encode(), None
    return body.encode(), fields


OPTIONS = ["scenario", "seed", "set", "mutant", "run_id", "endpoint", "bucket"]


@st.composite
def run_argv(draw, endpoint: str, bucket_name: str, workdir: str):
    """A `run` command line: valid values, except (for most examples) one option drawn hostile."""
    bad = draw(st.sampled_from([None, None] + OPTIONS))
    argv = ["run"]
    said: dict = {"sets": []}
    if draw(st.booleans()):
        data, fields = draw(scenario_files(bad == "scenario"))
        path = os.path.join(workdir, f"s-{uuid.uuid4().hex[:8]}.yaml")
        with open(path, "wb") as fh:
            fh.write(data)
        argv += ["--scenario", path]
        said["file"] = fields if fields is not None else "refuse"
    else:
        argv += ["--scenario", draw(text if bad == "scenario" else st.sampled_from(["smoke", "regional-basic"]))]
    if draw(st.booleans()) or bad == "seed":
        said["seed"] = draw(big_ints if bad == "seed" else st.integers(0, 2**63 - 1))
        argv.append(f"--seed={said['seed']}")
    for _ in range(draw(st.integers(1 if bad == "set" else 0, 3))):
        key, value, says, attr = draw(set_pairs(bad == "set"))
        argv.append(f"--set={key}={value}")
        said["sets"].append((key, says, attr))
    if draw(st.booleans()) or bad == "mutant":
        argv.append(f"--mutant={draw(text if bad == 'mutant' else st.sampled_from(sorted(MUTANTS)))}")
    if draw(st.booleans()) or bad == "run_id":
        said["run_id"] = draw(ids if bad == "run_id" else id_like)
        argv.append(f"--run-id={said['run_id']}")
    hostile_endpoint = st.sampled_from(["notaurl", "http://x[/:]y", "ftp://h", "http://h:0", "http://h/p"]) | text
    argv.append(f"--s3-endpoint={draw(hostile_endpoint if bad == 'endpoint' else st.just(endpoint))}")
    argv.append(f"--bucket={draw(text if bad == 'bucket' else st.just(bucket_name))}")
    argv.append(f"--local-dir={os.path.join(workdir, 'local')}")
    return argv, said


def _attr(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def assert_refused_cleanly(argv: list[str], fields: list[str], bucket: StorageConfig, workdir: str, capsys) -> None:
    """main(argv) exits 2, names ``fields`` (any one of them), and writes nothing."""
    before = tree(workdir)
    capsys.readouterr()
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    printed = " ".join((out.out + out.err).split())
    assert code == ExitCode.BAD_INPUT, (argv, printed)
    shown = [f.encode("utf-8", "backslashreplace").decode() for f in fields]
    assert any(f in printed for f in shown), (argv, fields, printed)
    assert "Traceback" not in printed
    assert objects(bucket) == [], argv
    assert tree(workdir) == before, argv


def checked_or_fields(argv: list[str]) -> tuple[dict | None, list[str]]:
    """`cli.check(argv)`: (what it accepted, []) or (None, the fields it refused)."""
    try:
        return cli.check(argv), []
    except ScenarioError as exc:
        return None, [field for field, _ in exc.errors]
    except SystemExit as exc:
        assert exc.code == 2
        return None, ["argument"]  # argparse: "argument --seed: invalid int value ...", "arguments are required"


# -- the properties -------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_every_run_input_is_accepted_as_it_says_or_refused_naming_the_field(bucket, tmp_path, capsys, data):
    workdir = str(tmp_path)
    argv, said = data.draw(run_argv(bucket.endpoint_url, bucket.bucket, workdir))
    accepted, fields = checked_or_fields(argv)
    event("refused" if accepted is None else "accepted")
    if accepted is None:
        assert_refused_cleanly(argv, fields, bucket, workdir, capsys)
        return
    # accepted: the Scenario holds what the input said, last word first (--seed, then --set, then the file)
    scenario = accepted["scenario"]
    assert said.get("file") != "refuse", argv
    overridden: set[str] = set()
    for _, says, attr in reversed(said["sets"]):  # the last --set of a field wins
        if attr and attr not in overridden:
            assert _attr(scenario, attr) == says, (argv, attr)
            overridden.add(attr)
    if "seed" in said:
        assert scenario.seed == said["seed"]
    file = said.get("file")
    if isinstance(file, dict):
        if "name" not in overridden:
            assert scenario.name == file["name"]
        if "seed" not in said and "seed" in file:
            assert scenario.seed == file["seed"]
        if "checkpoints" not in overridden and "checkpoints" in file:
            assert scenario.checkpoints == file["checkpoints"]
        if "workload.records_per_interval" not in overridden and "workload" in file:
            assert scenario.workload.records_per_interval == tuple(file["workload"]["records_per_interval"])
    assert run_id_problem(accepted["run_id"]) is None
    if "run_id" in said:
        assert accepted["run_id"] == said["run_id"]
    else:
        assert accepted["run_id"] == runner.default_run_id(scenario, accepted["mutant"])


@SETTINGS
@given(seeds=st.integers(1, 10**6) | big_ints, first=st.none() | st.integers(0, 2**63 - 1) | big_ints,
       partitions=st.none() | st.integers(1, 1000) | big_ints, sid=id_like | ids)
def test_every_swarm_and_replay_count_is_accepted_or_refused_naming_the_field(bucket, tmp_path, capsys, seeds, first,
                                                                                partitions, sid):
    workdir = str(tmp_path)
    common = [f"--s3-endpoint={bucket.endpoint_url}", f"--bucket={bucket.bucket}",
              f"--local-dir={os.path.join(workdir, 'local')}"]
    argv = ["swarm", f"--seeds={seeds}", *common]
    argv += [f"--first-seed={first}"] if first is not None else []
    argv += [f"--partitions={partitions}"] if partitions is not None else []
    accepted, fields = checked_or_fields(argv)
    start = 1 if first is None else first
    event("swarm refused" if accepted is None else "swarm accepted")
    if accepted is None:
        assert not (1 <= seeds <= cli.MAX_SWARM_SEEDS and 0 <= start and start + seeds - 1 <= 2**63 - 1
                    and (partitions is None or 1 <= partitions <= cli.MAX_PARTITIONS)), argv
        assert_refused_cleanly(argv, fields, bucket, workdir, capsys)
    else:  # every seed the swarm would run is a valid seed
        assert 1 <= seeds <= cli.MAX_SWARM_SEEDS and 0 <= start <= start + seeds - 1 <= 2**63 - 1
        assert run_id_problem(accepted["swarm_id"]) is None
    argv = ["replay", sid, f"--seed={seeds}", *common]
    accepted, fields = checked_or_fields(argv)
    if accepted is None:
        assert run_id_problem(sid) is not None or not 0 <= seeds <= 2**63 - 1, argv
        assert_refused_cleanly(argv, fields, bucket, workdir, capsys)
    else:
        assert run_id_problem(sid) is None


# -- run-id isolation -----------------------------------------------------------------------------

VICTIM = {"summary.json": b'{"verdict": "valid"}', "report/index.html": b"<html>victim</html>",
          "datadocs/index.html": b"<html>docs</html>"}
HOSTILE_RUN_IDS = ["victim-run/report", "victim-run/", "victim-run/..", "../runs/victim-run", "/victim-run",
                   "victim-run/../victim-run", ".", "..", "victim-run/report/index.html", "victim-run\\report",
                   "victim-run%2Freport", " victim-run", "victim-run\n"]


@pytest.mark.parametrize("run_id", HOSTILE_RUN_IDS, ids=repr)
def test_a_hostile_run_id_is_refused_and_another_runs_objects_are_untouched(bucket, tmp_path, capsys, monkeypatch,
                                                                           run_id):
    victim = ObjectStore.for_run(bucket, "victim-run")
    for key, body in VICTIM.items():
        victim.put(key, body)
    monkeypatch.chdir(tmp_path)
    try:
        capsys.readouterr()
        code = cli.main(["run", "--scenario", "smoke", "--run-id", run_id, "--s3-endpoint", bucket.endpoint_url,
                         "--bucket", bucket.bucket, "--local-dir", str(tmp_path / "local")])
        out = " ".join(capsys.readouterr().out.split())
        assert code == ExitCode.BAD_INPUT and "--run-id" in out, out
        # the runner refuses it too, for callers other than the CLI (DAG tasks, replay)
        from regionchaos.scenario import load

        with pytest.raises(ScenarioError, match="run_id"):
            runner.run(load("smoke"), storage=bucket, run_id=run_id, local_dir=str(tmp_path / "local"))
        assert sorted(objects(bucket)) == sorted(f"runs/victim-run/{k}" for k in VICTIM)
        assert {k: victim.get(k) for k in VICTIM} == VICTIM
        assert not any(tmp_path.iterdir())
    finally:
        victim.delete_many(victim.list_keys(""))


def _job(name: str):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "spark_jobs" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"job_{name}", path)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    return job


@pytest.mark.parametrize("job", ["emulate", "validate"])
def test_the_cluster_jobs_refuse_a_hostile_run_id_before_touching_storage(bucket, capsys, job):
    """spark_jobs/emulate.py and validate.py take --run-id from the DAG's spark-submit: same grammar."""
    victim = ObjectStore.for_run(bucket, "victim-run")
    for key, body in VICTIM.items():
        victim.put(key, body)
    try:
        argv = ["--run-id", "victim-run/report", "--s3-endpoint", bucket.endpoint_url, "--bucket", bucket.bucket]
        code = _job(job).main((["--scenario", "smoke"] if job == "emulate" else []) + argv)
        assert code == 2
        assert "--run-id" in capsys.readouterr().err
        assert sorted(objects(bucket)) == sorted(f"runs/victim-run/{k}" for k in VICTIM)
        assert {k: victim.get(k) for k in VICTIM} == VICTIM
    finally:
        victim.delete_many(victim.list_keys(""))
