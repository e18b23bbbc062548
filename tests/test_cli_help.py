"""What the CLI prints besides verdicts: `--help`, and progress while the suites judge a run.

In:  `regionchaos.cli.main` with ``--help`` (argparse prints and exits 0), and `run` with the run
     replaced by one that only calls a stand-in for GX's per-suite run; no storage, no Spark, no GX.
Out: pass/fail: the top help has no reST markup and states the exit codes once; `run` and
`swarm` help have a description and examples that are themselves accepted by the CLI's checks;
one console line per suite as it ends (`regionchaos.progress`).
"""

from __future__ import annotations

import re
import shlex

import pytest

from regionchaos import cli
from regionchaos.run import ExitCode


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_the_top_help_has_no_rest_markup_and_the_exit_codes_once(capsys):
    text = _help(["--help"], capsys)
    assert "``" not in text, text
    assert text.count("exit codes") == 1, text
    assert text.count("1 an invariant violated that no finding explains") == 1, text
    assert "examples:" in text and "regionchaos run --scenario smoke" in text


@pytest.mark.parametrize("command", ["run", "swarm"])
def test_command_help_has_a_description_and_examples(capsys, command):
    text = _help([command, "--help"], capsys)
    usage, _, rest = text.partition("\n\n")
    assert usage.startswith(f"usage: regionchaos {command}")
    description = rest.split("\n\n")[0]
    assert len(description.split()) >= 10 and not description.startswith(("options:", "-h")), text
    examples = re.findall(rf"^  (regionchaos {command} [^#\n]*?)\s*(?:#.*)?$", text, re.M)
    assert len(examples) >= 2, text
    assert text.count("exit codes") == 1, text


def test_the_run_examples_in_the_help_pass_the_cli_s_checks(capsys):
    """Each `run` example is a command line the CLI accepts (checked, nothing run)."""
    text = _help(["run", "--help"], capsys)
    examples = re.findall(r"^  regionchaos (run [^#\n]*?)\s*(?:#.*)?$", text, re.M)
    assert examples
    for line in examples:
        checked = cli.check(shlex.split(line))
        assert checked["scenario"].name, line


# -- progress while the suites judge a run ---------------------------------------------------------

class _FakeDefinition:
    """Stands in for GX's ValidationDefinition (its run is what the checkpoint calls per suite)."""

    def __init__(self, name: str, success: bool | None):
        self.suite = type("Suite", (), {"name": name})()
        self.success = success

    def run(self, *args, **kwargs):
        if self.success is None:
            raise RuntimeError("suite blew up")
        return type("Result", (), {"success": self.success})()


def test_suite_progress_prints_one_line_per_suite_and_restores_run():
    from regionchaos.progress import suite_progress

    original = _FakeDefinition.__dict__["run"]
    lines: list[str] = []
    with pytest.raises(RuntimeError):
        with suite_progress(lines.append, target=_FakeDefinition, total=3):
            assert _FakeDefinition.run is not original
            assert _FakeDefinition("a_suite", True).run().success is True  # the result passes through
            _FakeDefinition("b_suite", False).run()
            _FakeDefinition("c_suite", None).run()
    assert _FakeDefinition.__dict__["run"] is original
    assert [line.rsplit(" (", 1)[0] for line in lines] == ["suite 1/3 a_suite: passed", "suite 2/3 b_suite: FAILED"]


def test_cli_run_prints_suite_lines_while_validating(capsys, monkeypatch, tmp_path):
    """`regionchaos run` wires the progress in: each suite the run judges is a console line as it
    ends (the run itself is replaced by one that runs two suites; nothing is emulated)."""
    from regionchaos import progress, runner
    from regionchaos.judge.engine import GXValidator

    monkeypatch.setattr(progress, "validation_definition_class", lambda: _FakeDefinition)

    def fake_validate(self, run_df):  # what GX's checkpoint does: one ValidationDefinition.run per suite
        _FakeDefinition("cleaner_safety", True).run()
        print("between suites")
        _FakeDefinition("commit_coverage", False).run()

    monkeypatch.setattr(GXValidator, "validate", fake_validate)

    def fake_run(scenario, **kwargs):
        _FakeDefinition("outside", True).run()  # not while the suites judge: no line
        GXValidator.validate(None, None)
        return {"verdict": "invalid", "run_id": "r", "checks": [], "replay": "regionchaos run --scenario smoke",
                "report": None, "local": None, "outcome": {"kind": "violation", "exit_code": 1, "sentence": "invalid"}}

    monkeypatch.setattr(runner, "run", fake_run)
    assert cli.main(["run", "--scenario", "smoke", "--local-dir", str(tmp_path)]) == ExitCode.INVALID
    out = capsys.readouterr().out
    total = progress.suite_count()
    first, between, second = (out.index(f"suite 1/{total} cleaner_safety: passed"), out.index("between suites"),
                              out.index(f"suite 2/{total} commit_coverage: FAILED"))
    assert first < between < second < out.index("verdict: invalid"), out
    assert "outside" not in out, out
