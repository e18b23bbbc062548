"""The verdict never fails open: a crash is `unknown` (exit 3), a missing rule result is `unknown`.

In:  the real CLI and runner against the embedded S3 server; a data plane made to raise
     (the only stand-in: the failure itself); GX validation results with one rule's result
     taken out.
Out: exit code 3 and a summary.json on storage whose verdict is `unknown` with the error,
     never exit 1 ("invariant violated") or a traceback; a rule with no result for a run
     makes its suite `unknown` for that run.
"""

from __future__ import annotations

import json

import pytest

from regionchaos import cli, runner
from regionchaos.dataplane import S3Persistence
from regionchaos.storage import ObjectStore


def _boom(self, batch):
    raise RuntimeError("state upload exploded")


@pytest.mark.spark
def test_emulator_crash_exits_3_with_unknown_verdict_and_error(s3_server, spark, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(S3Persistence, "flush", _boom)
    code = cli.main(["run", "--scenario", "smoke", "--seed", "3", "--run-id", "crash-s3", "--json",
                     "--s3-endpoint", s3_server.config.endpoint_url, "--bucket", s3_server.config.bucket,
                     "--local-dir", str(tmp_path)])
    assert code == runner.EXIT_UNKNOWN
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads(ObjectStore.for_run(s3_server.config, "crash-s3").get("summary.json"))
    for summary in (printed, stored):
        assert summary["verdict"] == "unknown"
        assert "state upload exploded" in summary["error"] and summary["error"].startswith("emulate failed")
        assert summary["checks"] == []


def test_unexpected_exception_in_the_cli_is_exit_3_not_a_traceback(monkeypatch, capsys):
    def explode(*args, **kwargs):
        raise KeyError("spark went away")

    monkeypatch.setattr(runner, "run", explode)
    code = cli.main(["run", "--scenario", "smoke", "--s3-endpoint", "http://127.0.0.1:9", "--local-dir", "/nonexistent"])
    assert code == runner.EXIT_UNKNOWN
    out = capsys.readouterr().out
    assert "verdict unknown" in out and "spark went away" in out
