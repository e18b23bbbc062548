"""Shrinking (`regionchaos shrink`, `regionchaos.shrink`): a failing seed's schedule reduced to
a strictly smaller one that still fails the same invariant, saved as a scenario file that
replays as a deep run.

In:  smoke seed 1 under the mutant failed-region-commits (a failed region commits what the
     regional checkpoint does not cover: `notifications` fails), with its 9 drawn faults.
Out: every candidate of a round is a valid scenario and a strict reduction; the shrunk file has
     fewer faults and still fails notifications through `regionchaos run` (exit 1), while the
     correct protocol passes it; a run that fails nothing is refused (exit 2, no file).
"""

from __future__ import annotations

import json

import pytest

from regionchaos.cli import main
from regionchaos.scenario import load
from regionchaos.schedule import pin
from regionchaos import shrink as shrink_mod
from regionchaos.judge.judgement import judgement_of_record
from regionchaos.shrink import candidates, judge, shrink, size

MUTANT = "failed-region-commits"


def test_every_candidate_is_a_valid_strict_reduction():
    pinned, _ = pin(load("smoke", seed=1), MUTANT)
    start = size(pinned)
    cands = candidates(pinned)
    assert len(cands) > len(pinned.faults.schedule)  # chunks at every granularity, plus checkpoints and parallelism
    for c in cands:
        s = size(c)
        assert all(a <= b for a, b in zip(s, start)) and s != start, (s, start)
        assert {e.checkpoint for e in c.faults.schedule} <= set(range(c.checkpoints))
    assert {size(c)[2] for c in cands} >= {2, 3}  # lower parallelisms are tried
    assert min(size(c)[1] for c in cands) < start[1]  # fewer checkpoints are tried


def test_rounds_go_on_until_nothing_smaller_fails_and_max_rounds_stops_them(monkeypatch):
    """The round loop alone (pure logic): a stand-in judge says a schedule fails `notifications`
    while it keeps one particular fault (the decline of process subtask 3 at checkpoint 7). The
    loop must end at exactly that fault and the fewest checkpoints that still hold it, each round
    strictly smaller; with max_rounds=1 it stops after one round and says it is incomplete."""
    culprit = {"checkpoint": 7, "kind": "decline", "vertex": "process", "subtask": 3}

    def fails(scenario) -> bool:
        return culprit in scenario.to_dict()["faults"]["schedule"]

    def stand_in(spark, scenarios, mutant):
        return [judgement_of_record({"run_id": str(i), "verdict": "invalid" if fails(s) else "valid",
                                     "failed": ["notifications"] if fails(s) else [], "unknown": [],
                                     "failed_rules": ["notifications.commits_only_on_completion"] if fails(s) else []},
                                    scenario=s, mutant=mutant) for i, s in enumerate(scenarios)]

    monkeypatch.setattr(shrink_mod, "judge", stand_in)
    scenario = load("smoke", seed=1)
    full = shrink(scenario, MUTANT, "notifications", spark=object())
    assert full.complete and full.shrunk.to_dict()["faults"]["schedule"] == [culprit]
    assert full.shrunk.checkpoints == culprit["checkpoint"] + 1
    sizes = [r["size"] for r in full.rounds]
    assert len(sizes) >= 3 and all(a > b for a, b in zip(sizes, sizes[1:])), sizes
    one = shrink(scenario, MUTANT, "notifications", spark=object(), max_rounds=1)
    assert not one.complete and len(one.rounds) == 2 and one.rounds[1]["size"] == sizes[1]
    assert size(one.shrunk) > size(full.shrunk)


@pytest.mark.spark
def test_the_cli_shrinks_a_mutant_run_and_the_shrunk_file_replays(spark, s3_server, tmp_path, capsys):
    """One round of the real thing (each round is one pass of the suites; the loop's later rounds are
    the test above): strictly fewer faults, the file replays as a deep run and still fails."""
    out = tmp_path / "shrunk.yaml"
    code = main(["shrink", "--scenario", "smoke", "--seed", "1", "--mutant", MUTANT, "--invariant", "notifications",
                 "--max-rounds", "1", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "in 1 rounds" in printed and "stopped at --max-rounds" in printed, printed
    assert f"replay: regionchaos run --scenario {out} --seed 1 --mutant {MUTANT}" in printed
    shrunk = load(str(out))
    original, _ = pin(load("smoke", seed=1), MUTANT)
    assert size(shrunk)[0] < size(original)[0]  # strictly fewer faults
    assert all(a <= b for a, b in zip(size(shrunk), size(original)))
    # the shrunk file replays as a deep run and still fails the invariant; without the mutant it is valid
    code = main(["run", "--scenario", str(out), "--mutant", MUTANT, "--s3-endpoint", s3_server.config.endpoint_url,
                 "--bucket", s3_server.config.bucket, "--local-dir", str(tmp_path / "runs"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 1, summary["verdict"]
    assert "notifications" in [c["name"] for c in summary["checks"] if c["success"] is False]
    [correct] = judge(spark, [shrunk], None)
    assert correct.verdict == "valid" and correct.standing == "valid", correct.why


def test_bad_shrink_options_exit_2_and_write_nothing(tmp_path, capsys):
    """Refused before anything is judged. (A run that fails nothing, judged, exits 2 too:
    tests/test_outcomes.py's shrink test, on its uncaught mutant.)"""
    out = tmp_path / "never.yaml"
    assert main(["shrink", "--scenario", "smoke", "--invariant", "nope", "--out", str(out)]) == 2
    assert "--invariant" in capsys.readouterr().out and not out.exists()
    assert main(["shrink", "--scenario", "smoke", "--max-rounds", "0", "--out", str(out)]) == 2
    assert "--max-rounds" in capsys.readouterr().out and not out.exists()
