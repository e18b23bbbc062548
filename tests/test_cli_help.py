"""`regionchaos --help` and `regionchaos run --help` as a person reads them.

In:  `regionchaos.cli.main` with ``--help`` (argparse prints and exits 0); no storage, no Spark.
Out: pass/fail: the top help has no reST markup and states the exit codes once; `run` and
`swarm` help have a description and examples that are themselves accepted by the CLI's checks.
"""

from __future__ import annotations

import re
import shlex

import pytest

from regionchaos import cli


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_the_top_help_has_no_rest_markup_and_the_exit_codes_once(capsys):
    text = _help(["--help"], capsys)
    assert "``" not in text, text
    assert text.count("exit codes") == 1, text
    assert text.count("1 invariant violated") == 1, text
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
