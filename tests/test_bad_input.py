"""Bad input through the real CLI: a clear error naming the field, exit 2, nothing written.

In:  `regionchaos run` with malformed or absurd values, against the embedded S3 server.
Out: exit code 2, the field the user typed in the message, and no object under the run's prefix.
"""

from __future__ import annotations

import pytest

from regionchaos import cli, runner
from regionchaos.scenario import INVARIANTS
from regionchaos.storage import ObjectStore

CASES = [  # (arguments, the field the message must name, a phrase of the reason)
    (["--set", "faults.decline.x=1"], "faults.decline.x", "not a section"),
    (["--set", "topology.parallelism=yes"], "topology.parallelism", "valid integer"),
    (["--set", "topology.parallelism=8.0"], "topology.parallelism", "valid integer"),
    (["--set", "execution.checkpointing.region.enabled=yes"], "execution.checkpointing.region.enabled", "boolean"),
    (["--set", f"first_checkpoint_id={2**70}"], "first_checkpoint_id", "less than or equal"),
    (["--set", f"execution.checkpointing.timeout={10**30}"], "execution.checkpointing.timeout", "less than or equal"),
    (["--set", "faults.correlated_regions=5"], "faults.correlated_regions", "pipeline region"),
    (["--set", "topology.taskmanagers=5"], "topology.taskmanagers", "at most one TaskManager"),
    (["--set", "expect.invariant=no_such_invariant"], "expect.invariant", "not an invariant"),
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
    assert cli.main(argv) == runner.EXIT_BAD_INPUT
    out = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert field in out and reason in out, out
    assert ObjectStore.for_run(s3_server.config, run_id).list_keys("") == []
    assert not any(tmp_path.iterdir())


def test_invariant_names_are_the_suites():
    from regionchaos.validate import load_suites

    assert tuple(s.name for s in load_suites()) == INVARIANTS
