"""Every mutant is caught, by the invariant it breaks; the correct protocol on the same schedule is valid.

In:  `CASES`: per mutant of `regionchaos.scenario.MUTANTS`, a catalogue scenario and seed where
     the mutant matters (found by an offline seed search, then pinned here), the invariant
     suites it must fail and, per suite, the rules; the findings' scenarios.
Out: for each case (a) the checks caught it (a violation no finding explains: exit code 1 through
     the outcome policy, `regionchaos.judge.policy`) and (b) each named invariant failed through each
     named rule (not just any); the unmutated protocol on the same scenario and seed is valid (exit
     code 0) with every rule at 0 rows; each finding fails exactly its declared invariants, as its
     scenario allows (exit code 0, the finding named).

Cost: every run is emulated through the runner (`runner.start` into the
embedded S3 server; the data plane's partition function runs in this process, `spark=None`,
which halves the emulation time here), then all runs are judged by ONE pass of the GX suites
on Spark (`regionchaos.judge.runs.judge_stores`: every table carries run_id). Per-run validation through
`runner.run` is covered by tests/test_validate.py.
"""

from __future__ import annotations

import hashlib
import json

from pathlib import Path

import pytest
import yaml

from regionchaos import runner
from regionchaos.judge import run_outcome
from regionchaos.judge.suites import load_suites
from regionchaos.run import ExitCode
from regionchaos.scenario import MUTANTS, load
from regionchaos.storage import ObjectStore
from tests.judge_pool import pooled

pytestmark = pytest.mark.spark

# mutant -> (scenario, seed, overrides, {invariant it must fail: the rules of that suite it must fail}), pinned in
# expectations/mutant_cases.yaml (bench/mutant_swarm.py and bench/shrink_mutants.py read them too)
CASES: dict[str, tuple[str, int, dict, dict[str, tuple[str, ...]]]] = {
    name: (case["scenario"], case["seed"], case.get("set", {}), {s: tuple(r) for s, r in case["fails"].items()})
    for name, case in yaml.safe_load((Path(__file__).resolve().parents[1] / "expectations" / "mutant_cases.yaml")
                                     .read_text()).items()}
# findings: scenario (its own seed) -> the invariants the correct protocol breaks there (FINDINGS.md). Under the PR
# a failed region's sink commits a REGIONAL checkpoint upon the next abort notification (F12), so the pr-*
# scenarios whose schedule aborts a checkpoint after a REGIONAL one break notifications and exactly_once_output
# too, every row of them F12's mechanism.
F12_TOO = {"notifications", "exactly_once_output"}
FINDINGS = {"forced-global-tier2": {"flip_bounds"},
            "union-offsets-rescale": {"reachable_global_state", "exactly_once_output"},
            "pr-all-regions-failed": {"decisions_follow_rules", "flip_bounds"},
            "pr-max-consecutive-zero": {"decisions_follow_rules", "flip_bounds"} | F12_TOO,
            "pr-rescale-fallback": {"reachable_global_state", "exactly_once_output"},
            "pr-forced-ratio-abort": {"decisions_follow_rules", "flip_bounds"} | F12_TOO,
            "pr-jobmanager-counter": {"decisions_follow_rules", "flip_bounds"},
            "pr-forced-failure-fails-job": {"decisions_follow_rules"} | F12_TOO,
            "pr-split-handed-back": {"exactly_once_output"},
            "pr-upscale-fresh-fallback": {"decisions_follow_rules", "metadata_well_formed", "notifications",
                                          "reachable_global_state"},
            "pr-abort-completes-regional": F12_TOO,
            "pr-late-ack-completes-global": {"decisions_follow_rules", "exactly_once_output"},
            "concurrent-fallback-skips-newer": {"exactly_once_output"},
            "pr-split-assigned-before-fallback": {"reachable_global_state"},
            "pr-gateway-stays-closed": {"liveness", "reachable_global_state"},
            "pr-store-failure-leaks-slot": {"liveness"},
            "concurrent-regional-past-bound": {"flip_bounds"},
            "pr-final-flag-forces-older": {"decisions_follow_rules"}}


def _frozen(overrides: dict) -> str:
    """The overrides as one hashable, stable value (a schedule is a list of entries)."""
    return json.dumps(overrides, sort_keys=True)


def _run_id(scenario: str, seed: int, mutant: str | None, overrides: dict) -> str:
    tag = hashlib.sha256(_frozen(overrides).encode()).hexdigest()[:8] if overrides else ""
    return f"mut-{scenario}-s{seed}-{mutant or 'correct'}" + (f"-{tag}" if tag else "")


def _emulate(config, scenario_name: str, seed: int | None, mutant: str | None, overrides: dict) -> ObjectStore:
    scenario = load(scenario_name, overrides=overrides or None, seed=seed)
    run_id = _run_id(scenario_name, scenario.seed, mutant, overrides)
    store = ObjectStore.for_run(config, run_id)
    replay = runner.replay_line(scenario_name, scenario.seed, overrides, mutant)
    runner.start(store, scenario, run_id=run_id, mutant=mutant, replay=replay)
    return store


def _build(config, spark) -> list[ObjectStore]:
    """Every mutant run and every baseline (judged in the session's pooled pass, tests/judge_pool.py)."""
    stores = []
    baselines = set()
    for mutant, (scenario, seed, overrides, _) in CASES.items():
        stores.append(_emulate(config, scenario, seed, mutant, overrides))
        key = (scenario, seed, _frozen(overrides))
        if key not in baselines:
            baselines.add(key)
            stores.append(_emulate(config, scenario, seed, None, overrides))
    for scenario in FINDINGS:
        stores.append(_emulate(config, scenario, None, None, {}))
    return stores


pooled(__name__, _build)


@pytest.fixture(scope="module")
def judged(judge_pool) -> dict[str, dict]:
    return judge_pool.results(__name__)


def _failed(result: dict) -> set[str]:
    return {c["name"] for c in result.checks if c["success"] is False}


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


def test_every_invariant_is_broken_by_a_mutant_or_finding():
    broken = {inv for *_, invariants in CASES.values() for inv in invariants} | set().union(*FINDINGS.values())
    assert {s.name for s in load_suites()} == broken


def test_suite_files_claim_what_this_module_proves():
    """Each suite's ``broken_by`` (shown in Data Docs and expectations/README.md) lists exactly
    the mutants and findings proven here to break it: no claim without a test."""
    for s in load_suites():
        proven = {m for m, (*_, invariants) in CASES.items() if s.name in invariants}
        assert set(s.mutants) == proven, f"{s.name}: broken_by lists {sorted(s.mutants)}, proven {sorted(proven)}"
        assert set(s.findings) == {f for f, invs in FINDINGS.items() if s.name in invs}, s.name


def test_the_expectations_readme_lists_what_breaks_each_suite():
    """expectations/README.md's suite table names, per suite, the mutants and findings of its ``broken_by``."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "expectations" / "README.md").read_text()
    cells = {m[1]: m[2] for m in re.finditer(r"^\| \d+ \| `(\w+)` \| [^|]+ \| ([^|]*) \|$", text, re.MULTILINE)}
    for s in load_suites():
        mutants, _, found = cells[s.name].partition(";")
        assert {m.strip() for m in mutants.split(",") if m.strip()} == set(s.mutants), s.name
        assert set(re.findall(r"`([\w-]+)`", found)) == set(s.findings), s.name


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_mutant_fails_its_invariant_through_the_rule_it_breaks(judged, mutant):
    scenario, seed, overrides, invariants = CASES[mutant]
    result = judged[_run_id(scenario, seed, mutant, overrides)]
    outcome = run_outcome(result)  # a violation no finding explains: the checks caught it
    assert (outcome.kind, outcome.caught, outcome.exit_code) == ("violation", True, ExitCode.INVALID), result.why
    checks = {c["name"]: c for c in result.checks}
    for invariant, rules in invariants.items():
        check = checks[invariant]
        assert check["success"] is False, f"{mutant} on {scenario} seed {seed}: {invariant} held"
        missing = set(rules) - set(check.get("failed_rules") or ())
        assert not missing, f"{mutant}: {invariant} failed, but not through {sorted(missing)}: {check['failed_rules']}"
        assert all(check["rules"][r] > 0 for r in rules) and check["examples"]


@pytest.mark.parametrize("case", sorted({(s, seed, _frozen(o)) for s, seed, o, _ in CASES.values()}),
                         ids=lambda c: f"{c[0]}-s{c[1]}" + (f"-{_run_id(c[0], c[1], None, json.loads(c[2]))[-8:]}"
                                                            if c[2] != "{}" else ""))
def test_correct_protocol_on_the_same_schedule_is_valid(judged, case):
    scenario, seed, overrides = case
    result = judged[_run_id(scenario, seed, None, json.loads(overrides))]
    bad = {c["name"]: (c["success"], c.get("error"), c["examples"][:2]) for c in result.checks if c["success"] is not True}
    assert run_outcome(result).exit_code == ExitCode.VALID and result.verdict == "valid", bad
    assert all(n == 0 for c in result.checks for n in c["rules"].values())  # every rule passed, not just suites


@pytest.mark.parametrize("scenario", sorted(FINDINGS))
def test_finding_fails_for_its_stated_reason(judged, scenario):
    from regionchaos.findings import allowed_failures

    sc = load(scenario)
    assert sc.expect.verdict == "invalid" and sc.expect.invariant in FINDINGS[scenario]
    assert FINDINGS[scenario] <= allowed_failures(sc)  # declared in regionchaos/findings.py
    result = judged[_run_id(scenario, sc.seed, None, {})]
    assert result.verdict == "invalid"
    assert _failed(result) == FINDINGS[scenario]
    # and through rules the findings declare, not merely their invariants: a declared finding where its
    # scenario allows it (exit 0, like pytest's xfail), the finding named
    assert (result.standing, result.why) == ("finding", ""), result.why
    outcome = run_outcome(result)
    assert (outcome.kind, outcome.exit_code) == ("finding", ExitCode.VALID) and outcome.findings, outcome
