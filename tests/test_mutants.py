"""Every mutant is caught, by the invariant it breaks; the correct protocol on the same schedule is valid.

In:  `CASES`: per mutant of `regionchaos.scenario.MUTANTS`, a catalogue scenario and seed where
     the mutant matters (found by an offline seed search, then pinned here) and the invariant
     suites it must fail; the finding `forced-global-tier2`.
Out: for each case (a) the verdict is invalid (exit code 1 through `regionchaos.runner.exit_code`)
     and (b) each named invariant is among the failed checks (not just any); the unmutated
     protocol on the same scenario and seed is valid (exit code 0).

Cost: every run is emulated through the runner (`runner.prepare_run` + `runner.emulate` into the
embedded S3 server; the data plane's partition function runs in this process, `spark=None`,
which halves the emulation time here), then all runs are judged by ONE pass of the GX suites
on Spark (`validate_runs`: every table carries run_id). Per-run validation through
`runner.run` is covered by tests/test_validate.py.
"""

from __future__ import annotations

import pytest

from regionchaos import runner
from regionchaos.scenario import MUTANTS, load
from regionchaos.storage import ObjectStore

pytestmark = pytest.mark.spark

# mutant -> (scenario, seed, overrides, invariants it must fail)
CASES: dict[str, tuple[str, int, dict, tuple[str, ...]]] = {
    "cleaner-ignores-refs": ("regional-basic", 1, {}, ("storage_safety",)),
    "regional-final-checkpoint": ("bounded-final", 6, {}, ("final_checkpoint", "liveness", "exactly_once_output",
                                                           "decisions_follow_rules")),
    "failed-region-commits": ("smoke", 1, {}, ("notifications", "exactly_once_output")),
    "no-forced-global": ("forced-global", 1, {}, ("decisions_follow_rules", "flip_bounds")),
    "ignore-failure-ratio": ("smoke", 1, {}, ("decisions_follow_rules",)),
    "enumerator-no-fallback": ("coordinator-fallback", 1, {}, ("reachable_global_state",)),
    # 7 splits: the downscale 4 -> 2 has a remainder (8 would split evenly and hide the mutant)
    "split-drops-remainder": ("rescale-4-2-1", 1, {"workload.splits": 7}, ("redistribution",)),
    "union-as-split": ("rescale-4-2-1", 1, {}, ("redistribution", "reachable_global_state")),
    "drop-recovered-inflight": ("unaligned-recovery-7-2", 2, {},
                                ("inflight_data", "state_consistency", "exactly_once_output")),
    "metadata-before-state": ("storage-faults", 1, {}, ("storage_safety",)),
    "fallback-to-aborted": ("smoke", 14, {}, ("metadata_well_formed",)),
}
# findings: scenario (its own seed) -> the invariant the correct protocol breaks there
FINDINGS = {"forced-global-tier2": "flip_bounds"}


def _run_id(scenario: str, seed: int, mutant: str | None, overrides: dict) -> str:
    tag = "-".join(f"{k.split('.')[-1]}{v}" for k, v in sorted(overrides.items()))
    return f"mut-{scenario}-s{seed}-{mutant or 'correct'}" + (f"-{tag}" if tag else "")


def _emulate(config, scenario_name: str, seed: int | None, mutant: str | None, overrides: dict) -> ObjectStore:
    scenario = load(scenario_name, overrides=overrides or None, seed=seed)
    run_id = _run_id(scenario_name, scenario.seed, mutant, overrides)
    store = ObjectStore.for_run(config, run_id)
    replay = runner.replay_line(scenario_name, scenario.seed, overrides, mutant)
    runner.prepare_run(store, scenario, run_id=run_id, mutant=mutant, replay=replay)
    runner.emulate(scenario, store=store, mutant=mutant, spark=None)
    return store


@pytest.fixture(scope="module")
def judged(s3_server, spark) -> dict[str, dict]:
    """Emulate every mutant run and every baseline, then judge all of them in one GX pass."""
    from regionchaos.validate import validate_runs

    stores = []
    baselines = set()
    for mutant, (scenario, seed, overrides, _) in CASES.items():
        stores.append(_emulate(s3_server.config, scenario, seed, mutant, overrides))
        key = (scenario, seed, tuple(sorted(overrides.items())))
        if key not in baselines:
            baselines.add(key)
            stores.append(_emulate(s3_server.config, scenario, seed, None, overrides))
    for scenario in FINDINGS:
        stores.append(_emulate(s3_server.config, scenario, None, None, {}))
    return validate_runs(spark, stores)


def _failed(result: dict) -> set[str]:
    return {c["name"] for c in result["checks"] if c["success"] is False}


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


def test_every_invariant_is_broken_by_a_mutant_or_finding():
    from regionchaos.validate import load_suites

    broken = {inv for *_, invariants in CASES.values() for inv in invariants} | set(FINDINGS.values())
    assert {s.name for s in load_suites()} == broken


def test_suite_files_claim_what_this_module_proves():
    """Each suite's ``broken_by`` (shown in Data Docs and expectations/README.md) lists exactly
    the mutants and findings proven here to break it: no claim without a test."""
    from regionchaos.validate import load_suites

    for s in load_suites():
        proven = {m for m, (*_, invariants) in CASES.items() if s.name in invariants}
        assert set(s.mutants) == proven, f"{s.name}: broken_by lists {sorted(s.mutants)}, proven {sorted(proven)}"
        assert set(s.findings) == {f for f, inv in FINDINGS.items() if inv == s.name}, s.name


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_mutant_fails_its_invariant(judged, mutant):
    scenario, seed, overrides, invariants = CASES[mutant]
    result = judged[_run_id(scenario, seed, mutant, overrides)]
    assert runner.exit_code(result) == runner.EXIT_INVALID, result["verdict"]
    failed = _failed(result)
    missing = set(invariants) - failed
    assert not missing, f"{mutant} on {scenario} seed {seed}: {sorted(missing)} held; failed: {sorted(failed)}"
    named = [c for c in result["checks"] if c["name"] in invariants]
    assert all(c["unexpected_count"] > 0 and c["examples"] for c in named)


@pytest.mark.parametrize("case", sorted({(s, seed, tuple(sorted(o.items()))) for s, seed, o, _ in CASES.values()}),
                         ids=lambda c: f"{c[0]}-s{c[1]}" + "".join(f"-{k}={v}" for k, v in c[2]))
def test_correct_protocol_on_the_same_schedule_is_valid(judged, case):
    scenario, seed, overrides = case
    result = judged[_run_id(scenario, seed, None, dict(overrides))]
    bad = {c["name"]: (c["success"], c.get("error"), c["examples"][:2]) for c in result["checks"] if c["success"] is not True}
    assert runner.exit_code(result) == runner.EXIT_VALID, bad


@pytest.mark.parametrize("scenario", sorted(FINDINGS))
def test_finding_fails_for_its_stated_reason(judged, scenario):
    expected = load(scenario).expect
    assert expected.verdict == "invalid" and expected.invariant == FINDINGS[scenario]
    result = judged[_run_id(scenario, load(scenario).seed, None, {})]
    assert runner.exit_code(result) == runner.EXIT_INVALID
    assert _failed(result) == {FINDINGS[scenario]}
