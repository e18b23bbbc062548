"""Bad input through the real CLI: a clear error naming the field, exit 2, nothing written.

In:  `regionchaos run`, `swarm`, `pin` and `replay` with malformed, hostile or absurd values
     (the design's "Bad input" list and more), against a fresh bucket on the shared embedded S3
     server, from a fresh working directory.
Out: exit code 2, the field the user typed and the reason in the message, no object in the
     bucket and no file written locally; never exit 1, never a traceback, never a hang.
Also: Rich markup in anything printed cannot crash the CLI, and an unexpected exception ends as
exit 3 with a one-line reason.
"""

from __future__ import annotations

import io
import os
import threading
import time
import uuid

import pytest
from rich.console import Console

from regionchaos import cli, runner
from regionchaos.run import ExitCode
from regionchaos.scenario import INVARIANTS, MAX_SCENARIO_BYTES
from regionchaos.storage import ObjectStore, StorageConfig
from regionchaos.storage.embedded import create_bucket


@pytest.fixture(scope="module")
def bucket(s3_server) -> StorageConfig:
    """A bucket of this module's own on the shared server: anything a refused input wrote shows."""
    config = s3_server.config.model_copy(update={"bucket": f"bad-input-{uuid.uuid4().hex[:8]}"})
    create_bucket(config)
    return config


def objects(config: StorageConfig) -> list[str]:
    client = config.client()
    try:
        return [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=config.bucket)
                for o in page.get("Contents", [])]
    finally:
        client.close()


def local_files(root) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, dirs, files in os.walk(root) for f in files + dirs}


def run_main(argv: list[str], capsys, timeout_s: float = 30.0) -> tuple[int, str]:
    """``cli.main(argv)`` in a thread (a hang fails the test instead of blocking it): the exit code
    (argparse's SystemExit included) and everything printed, whitespace collapsed (Rich wraps)."""
    result: dict = {}

    def target():
        try:
            result["code"] = cli.main(argv)
        except SystemExit as exc:
            result["code"] = exc.code
        except BaseException as exc:  # noqa: BLE001 - reported below as the failure it is
            result["raised"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), f"regionchaos {' '.join(argv)} did not answer within {timeout_s} s"
    captured = capsys.readouterr()
    assert "raised" not in result, f"main raised {result.get('raised')!r}"
    return result["code"], " ".join((captured.out + captured.err).split())


CASES = [  # (arguments, the field the message must name, a phrase of the reason)
    (["--set", "faults.decline.x=1"], "faults.decline.x", "not a section"),
    (["--set", "topology.parallelism=yes"], "topology.parallelism", "must be a whole number, got 'yes'"),
    (["--set", "topology.parallelism=8.0"], "topology.parallelism", "must be a whole number, got 8.0"),
    (["--set", "execution.checkpointing.region.enabled=yes"], "execution.checkpointing.region.enabled",
     "must be true or false, got 'yes'"),
    (["--set", f"first_checkpoint_id={2**70}"], "first_checkpoint_id", f"must be at most {2**62}, got {2**70}"),
    (["--set", f"execution.checkpointing.timeout={10**30}"], "execution.checkpointing.timeout",
     f"must be at most 604800000, got {10**30}"),
    (["--set", "topology.parallelism=0"], "topology.parallelism", "must be at least 1, got 0"),
    (["--set", "rescale=3:0"], "rescale", "'3:0': parallelism 0 is out of range, it must be 1 to 8192"),
    (["--set", "rescale=3:2,3:1"], "rescale", "'3:1' does not come after '3:2'"),
    (["--set", "rescale=99:1"], "rescale.0.after_checkpoint", "99 is beyond the 12 checkpoints"),
    (["--set", "faults.correlated_regions=5"], "faults.correlated_regions", "pipeline region"),
    (["--set", "topology.taskmanagers=5"], "topology.taskmanagers", "at most one TaskManager"),
    (["--set", "expect.invariant=no_such_invariant"], "expect.invariant", "not an invariant"),
    (["--set", "execution.checkpointing.region.semantics=pr", "--set",
      "execution.checkpointing.region.forced-global-failure=keep-forcing"],
     "execution.checkpointing.region.forced-global-failure", "has no effect under"),
    (["--scenario", "../../x"], "scenario", "unknown scenario"),
    (["--scenario", "../../x.yaml"], "scenario", "unknown scenario"),
]


@pytest.mark.parametrize("args, field, reason", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_input_is_exit_2_naming_the_field_and_writes_nothing(s3_server, capsys, tmp_path, args, field, reason):
    run_id = "bad-input-" + str(abs(hash(tuple(args))))
    argv = ["run", "--scenario", "smoke", "--run-id", run_id, "--s3-endpoint", s3_server.config.endpoint_url,
            "--bucket", s3_server.config.bucket, "--local-dir", str(tmp_path)]
    if args[0] == "--scenario":
        argv[2] = args[1]
    else:
        argv += args
    assert cli.main(argv) == ExitCode.BAD_INPUT
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert field in out and reason in out, out
    assert "Input should" not in out, out  # the validator's wording never reaches the user
    assert ObjectStore.for_run(s3_server.config, run_id).list_keys("") == []
    assert not any(tmp_path.iterdir())


# -- the bad inputs, each as a command line, with the files it needs made in the working directory ---

def _nested(depth: int) -> str:
    return "name: deep\ndescription: " + "[" * depth + "]" * depth + "\n"


FILES = {  # file name -> how to make it in the working directory
    "binary.yaml": lambda p: p.write_bytes(bytes(range(256)) * 4),
    "deep.yaml": lambda p: p.write_text(_nested(5000)),
    "dir.yaml": lambda p: p.mkdir(),
    "zero.yaml": lambda p: p.symlink_to("/dev/zero"),
    "fifo.yaml": lambda p: os.mkfifo(p),
    "big.yaml": lambda p: (p.write_text("name: big\n"), os.truncate(p, MAX_SCENARIO_BYTES + 1)),  # sparse
    "huge.yaml": lambda p: (p.write_text("name: huge\n"), os.truncate(p, 50 << 20)),  # 50 MB, sparse
    "markup.yaml": lambda p: p.write_text("name: 'a[/b]'\n"),
    "evil.yaml": lambda p: p.write_text("name: ../../evil\n"),
    "absolute.yaml": lambda p: p.write_text("name: /tmp/evil\n"),
    "dup.yaml": lambda p: p.write_text("name: dup\nseed: 1\nfaults:\n  decline: 0.1\n  decline: 0.9\n"),
    "dup-top.yaml": lambda p: p.write_text("name: dup\nseed: 1\nseed: 2\n"),
    "alias.yaml": lambda p: p.write_text("name: a\nfaults: &f {decline: 0.1}\nexpect: *f\n"),
    "overflow.yaml": lambda p: p.write_text(f"name: overflow\nworkload:\n  records_per_interval: [1, {2**62}]\n"),
    "a-file": lambda p: p.write_text("not a folder\n"),
    "a b.yaml": lambda p: p.write_text("name: ab\n"),
    "not-json/swarms/s1/summary.json": lambda p: p.write_text("{not json"),
    "list/swarms/s1/summary.json": lambda p: p.write_text("[]"),
    "hostile/swarms/s1/summary.json": lambda p: p.write_text(
        '{"scenario": "smoke", "swarm_id": "s1", "runs": [{"seed": 1, "run_id": "../victim-run"}]}'),
}

RUN = ["run", "--scenario", "smoke"]
ISSUE_CASES = [  # (id, argv after the storage options, field, reason phrase)
    # Rich markup in user text
    ("set-markup", RUN + ["--set", "[/x]=1"], "--set", "'[/x]' is not a field or Flink key"),
    ("set-unknown-key", RUN + ["--set", "faults.earthquake=1"], "faults.earthquake", "unknown key"),
    ("mutant-markup", RUN + ["--mutant", "[/]"], "mutant", "unknown mutant '[/]'"),
    ("scenario-markup", ["run", "--scenario", "[/]"], "scenario", "unknown scenario '[/]'"),
    ("endpoint-markup", RUN + ["--s3-endpoint", "http://x[/:]y"], "--s3-endpoint", "must be http://HOST[:PORT]"),
    ("bucket-markup", RUN + ["--bucket", "b[/x]"], "--bucket", "letters, digits"),
    ("name-markup", ["run", "--scenario", "markup.yaml"], "name", "may hold only letters"),
    # exit 3 before the fix
    ("binary-yaml", ["run", "--scenario", "binary.yaml"], "scenario", "not UTF-8 text"),
    ("nested-5000", ["run", "--scenario", "deep.yaml"], "scenario", "nested deeper than 64 levels"),
    ("directory-yaml", ["run", "--scenario", "dir.yaml"], "scenario", "is a directory"),
    ("symlink-dev-zero", ["run", "--scenario", "zero.yaml"], "scenario", "is a device"),
    ("run-id-dotdot", RUN + ["--run-id", "../x"], "--run-id", "may hold only letters"),
    ("run-id-absolute", RUN + ["--run-id", "/etc"], "--run-id", "may hold only letters"),
    ("run-id-slash", RUN + ["--run-id", "victim-run/report"], "--run-id", "may hold only letters"),
    ("run-id-dots", RUN + ["--run-id", "a..b"], "--run-id", "must not contain '..'"),
    ("run-id-long", RUN + ["--run-id", "a" * 201], "--run-id", "at most 200 characters"),
    ("name-dotdot", ["run", "--scenario", "evil.yaml"], "name", "may hold only letters"),
    ("name-absolute", ["run", "--scenario", "absolute.yaml"], "name", "may hold only letters"),
    ("pin-out-missing-folder", ["pin", "--scenario", "smoke", "--out", "no/such/folder/x.yaml"], "--out",
     "does not exist"),
    ("pin-out-directory", ["pin", "--scenario", "smoke", "--out", "dir.yaml"], "--out", "is a directory"),
    ("pin-out-fifo", ["pin", "--scenario", "smoke", "--out", "fifo.yaml"], "--out", "not a regular file"),
    ("shrink-out-missing-folder", ["shrink", "--scenario", "smoke", "--out", "no/x.yaml"], "--out", "does not exist"),
    ("endpoint-not-a-url", RUN + ["--s3-endpoint", "notaurl"], "--s3-endpoint", "must be http://HOST[:PORT]"),
    ("endpoint-port", RUN + ["--s3-endpoint", "http://127.0.0.1:99999"], "--s3-endpoint", "port must be 1 to 65535"),
    ("replay-not-json", ["replay", "s1", "--seed", "1", "--local-dir", "not-json"], "SWARM_ID", "is not JSON"),
    ("replay-list", ["replay", "s1", "--seed", "1", "--local-dir", "list"], "SWARM_ID", "holds a list"),
    ("replay-hostile-run-id", ["replay", "s1", "--seed", "1", "--local-dir", "hostile"], "runs[0].run_id",
     "may hold only letters"),
    ("replay-swarm-id", ["replay", "../s1", "--seed", "1"], "SWARM_ID", "may hold only letters"),
    # refused only after writing before the fix
    ("records-per-interval", ["run", "--scenario", "overflow.yaml"], "workload.records_per_interval.1",
     "must be at most 1000000, got"),
    ("records-per-interval-set", RUN + ["--set", f"workload.records_per_interval=[0, {2**63}]"],
     "workload.records_per_interval.1", f"must be at most 1000000, got {2**63}"),
    ("swarm-first-seed-negative", ["swarm", "--seeds", "2", "--first-seed", "-1"], "--first-seed",
     "must be 0 to 2**63-1"),
    ("swarm-first-seed-max", ["swarm", "--seeds", "2", "--first-seed", str(2**63 - 1)], "--first-seed",
     "beyond 2**63-1"),
    ("swarm-seeds-zero", ["swarm", "--seeds", "0"], "--seeds", "must be 1 to 1,000,000"),
    ("run-local-dir-file", RUN + ["--local-dir", "a-file"], "--local-dir", "is a file"),
    ("run-local-dir-under-file", RUN + ["--local-dir", "a-file/x"], "--local-dir", "not a directory"),
    ("swarm-file-name", ["swarm", "--seeds", "2", "--scenario", "a b.yaml"], "--scenario",
     "the swarm id made from the file name"),
    ("swarm-local-dir-file", ["swarm", "--seeds", "2", "--local-dir", "a-file"], "--local-dir", "is a file"),
    # accepted silently before the fix
    ("duplicate-key", ["run", "--scenario", "dup.yaml"], "faults.decline", "duplicate key (lines 4 and 5)"),
    ("duplicate-top-key", ["run", "--scenario", "dup-top.yaml"], "seed", "duplicate key (lines 2 and 3)"),
    ("set-duplicate-key", RUN + ["--set", "faults={decline: 0.1, decline: 0.2}"], "faults.decline", "duplicate key"),
    ("yaml-alias", ["run", "--scenario", "alias.yaml"], "scenario", "YAML aliases (*f"),
    ("set-nested-5000", RUN + ["--set", "description=" + "[" * 5000 + "]" * 5000], "description",
     "nested deeper than 64 levels"),
    # hangs before the fix
    ("fifo", ["run", "--scenario", "fifo.yaml"], "scenario", "is a FIFO"),
    ("file-over-1-mib", ["run", "--scenario", "big.yaml"], "scenario", "larger than 1,048,576 bytes (1 MiB)"),
    ("file-50-mb", ["run", "--scenario", "huge.yaml"], "scenario", "larger than 1,048,576 bytes (1 MiB)"),
    ("swarm-seeds-1e9", ["swarm", "--seeds", "1000000000"], "--seeds", "must be 1 to 1,000,000"),
    # argparse's own refusals: exit 2, the option named
    ("seed-not-int", RUN + ["--seed", "[/x]"], "--seed", "invalid int value"),
]


def _with_storage(argv: list[str], config: StorageConfig) -> list[str]:
    if argv[0] == "pin" or argv[0] == "shrink":
        return argv
    extra = []
    if "--s3-endpoint" not in argv and argv[0] != "replay":  # replay reads LOCAL_DIR/swarms/ without one
        extra += ["--s3-endpoint", config.endpoint_url]
    if "--bucket" not in argv:
        extra += ["--bucket", config.bucket]
    if "--local-dir" not in argv:
        extra += ["--local-dir", "local"]
    return argv + extra


@pytest.mark.parametrize("argv, field, reason", [c[1:] for c in ISSUE_CASES], ids=[c[0] for c in ISSUE_CASES])
def test_issue_28_bad_input_is_exit_2_before_any_write(bucket, capsys, tmp_path, monkeypatch, argv, field, reason):
    monkeypatch.chdir(tmp_path)
    for name, make in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        make(tmp_path / name)
    before = local_files(tmp_path)
    started = time.perf_counter()
    code, out = run_main(_with_storage(argv, bucket), capsys)
    assert code == ExitCode.BAD_INPUT, out
    assert field in out and reason in out, out
    assert "Traceback" not in out
    assert objects(bucket) == []
    assert local_files(tmp_path) == before
    assert time.perf_counter() - started < 20, "a refusal must answer at once"


# -- Rich markup and unexpected exceptions --------------------------------------------------------

HOSTILE = "[/] [/:] [bold]x[/x] [link=y]"


def test_print_summary_prints_hostile_text_as_typed():
    summary = {"verdict": "unknown", "run_id": HOSTILE, "report": f"s3://{HOSTILE}/r", "local": HOSTILE,
               "replay": HOSTILE, "error": f"validate failed: ValueError: {HOSTILE}",
               "checks": [{"name": HOSTILE, "success": False, "failed_rules": ["r"]}],
               "findings": [{"id": HOSTILE, "title": HOSTILE, "rules": [f"{HOSTILE}.r"]}],
               "outcome": {"sentence": f"unknown: {HOSTILE}", "green": False, "exit_code": 3}}
    for embedded in (False, True):
        console = Console(file=io.StringIO(), width=400)
        cli.print_summary(summary, console, embedded=embedded)
        # run id, check, error, finding id, title and rule, the outcome's sentence, report, local, replay
        assert console.file.getvalue().count(HOSTILE) == 10, console.file.getvalue()


def test_print_swarm_prints_hostile_text_as_typed():
    result = {"swarm_id": HOSTILE, "judged": 1, "wall_seconds": 1.0, "failing": [], "unknown": 1, "prefix": HOSTILE,
              "rows": 0, "local": HOSTILE, "report": HOSTILE, "local_report": HOSTILE, "report_error": HOSTILE,
              "runs": [{"seed": 1, "verdict": "unknown", "error": HOSTILE, "replay": HOSTILE}]}
    console = Console(file=io.StringIO(), width=400)
    cli.print_swarm(result, console)
    assert console.file.getvalue().count(HOSTILE) == 8  # id, prefix, local, report and its copy, report error, error, replay


def test_an_unexpected_exception_is_exit_3_with_one_line_and_no_traceback(bucket, capsys, tmp_path, monkeypatch):
    """What botocore says about a bad endpoint or bucket holds '[/:]': it must reach the user as
    one line, exit 3 (unknown), whatever the exception."""
    def boom(*args, **kwargs):
        raise ValueError('Invalid bucket name "x": must match "^arn:(aws).*:s3:[a-z\\-0-9]*:accesspoint[/:]"\nline 2')

    monkeypatch.setattr(runner, "run", boom)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", "--scenario", "smoke", "--s3-endpoint", bucket.endpoint_url, "--bucket", bucket.bucket])
    out = capsys.readouterr()
    assert code == ExitCode.UNKNOWN, out
    lines = [line for line in (out.out + out.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error (ValueError), verdict unknown:") and "accesspoint[/:]" in lines[0], lines
    assert "line 2" in lines[0] and "Traceback" not in lines[0]


def _report_lines(summary: dict, embedded: bool) -> list[str]:
    console = Console(file=io.StringIO(), width=400)
    cli.print_summary(summary, console, embedded=embedded)
    return [line for line in console.file.getvalue().splitlines() if "report" in line]


def test_the_report_line_is_the_local_copy_when_the_embedded_server_is_gone():
    summary = {"verdict": "valid", "run_id": "r1", "report": "s3://regionchaos/runs/r1/report/index.html",
               "local": ".runs/r1", "replay": "regionchaos run --scenario smoke", "checks": []}
    embedded = _report_lines(summary, embedded=True)
    assert embedded[0] == "report: .runs/r1/report/index.html", embedded
    assert "s3://regionchaos/runs/r1/report/index.html was on the embedded S3 server, which stopped" in embedded[1]
    real = _report_lines(summary, embedded=False)
    assert real == ["report: s3://regionchaos/runs/r1/report/index.html",
                    "report (local copy): .runs/r1/report/index.html"], real
    no_copy = _report_lines({**summary, "local": None}, embedded=True)
    assert no_copy == ["report: s3://regionchaos/runs/r1/report/index.html (on the embedded S3 server, "
                       "which stopped with the run)"], no_copy


def test_help_still_works(capsys):
    for argv in (["--help"], ["run", "--help"], ["swarm", "--help"], ["replay", "--help"]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        assert exit_.value.code == 0
        assert "usage: regionchaos" in capsys.readouterr().out


def test_invariant_names_are_the_suites():
    from regionchaos.judge.suites import load_suites

    assert tuple(s.name for s in load_suites()) == INVARIANTS
