"""What a run's judgement says about its scenario's expectation (`regionchaos.judge.judgement_of`, whose fields a
summary stores): which recorded findings apply to its settings, which showed, and whether the run is as expected,
rule by rule. Pure logic."""

from __future__ import annotations

import pytest

from regionchaos import findings
from regionchaos.judge import judgement_of
from regionchaos.scenario import INVARIANTS, load
from tests.expectation_helpers import meets, shows

KEEP_FORCING = {"flink.execution.checkpointing.region.forced-global-failure": "keep-forcing"}
PR = {"flink.execution.checkpointing.region.semantics": "pr"}
CHAIN = "flip_bounds.ref_chain_depth_within_bound"


def expectation_of(scenario, mutant, checks) -> dict:
    """What a summary stores of the run's judgement (the findings that apply, ``as_expected``, ...)."""
    return judgement_of("r", checks, scenario=scenario, mutant=mutant).fields()


def _checks(failed=(), unknown=()):
    """Checks as validation writes them, one per invariant (passed unless named); ``failed``: "invariant.rule"
    names, each with one violating row that the mechanism of every finding declaring the rule explains
    (``explained``; tests/test_allowances.py covers rows a mechanism does not explain)."""
    by_invariant: dict[str, list[str]] = {}
    for name in failed:
        invariant, rule = name.split(".")
        by_invariant.setdefault(invariant, []).append(rule)

    def tags(invariant, rules):
        return {r: {",".join(sorted(f.id for f in findings.FINDINGS if f"{invariant}.{r}" in f.rules)): 1} for r in rules}
    return ([{"name": n, "success": False, "failed_rules": rules, "explained": tags(n, rules)}
             for n, rules in by_invariant.items()]
            + [{"name": n, "success": None} for n in unknown]
            + [{"name": n, "success": True} for n in INVARIANTS if n not in by_invariant and n not in unknown])


def test_a_declared_finding_explains_its_invariant_under_the_flip_default():
    sc = load("regional-basic")
    out = expectation_of(sc, None, _checks(failed=[CHAIN]))
    assert [f["id"] for f in out["findings"]] == ["F1"]
    assert out["as_expected"] == {"ok": True, "why": ""}


def test_an_undeclared_failure_is_not_as_expected_and_is_named():
    sc = load("regional-basic")
    out = expectation_of(sc, None, _checks(failed=[CHAIN, "exactly_once_output.no_duplicate_commit"]))
    assert out["as_expected"]["ok"] is False
    assert "exactly_once_output" in out["as_expected"]["why"]


def test_without_tier_2_the_same_failure_is_not_excused():
    sc = load("regional-basic", overrides=KEEP_FORCING)
    out = expectation_of(sc, None, _checks(failed=[CHAIN]))
    assert out["findings"] == []
    assert out["as_expected"]["ok"] is False


def test_unknown_is_never_as_expected():
    sc = load("smoke")
    out = expectation_of(sc, None, _checks(unknown=["flip_bounds"]))
    assert out["as_expected"]["ok"] is False


def test_a_finding_scenario_must_show_its_invariant():
    sc = load("forced-global-tier2")
    assert expectation_of(sc, None, _checks())["as_expected"]["ok"] is False
    assert expectation_of(sc, None, _checks(failed=[CHAIN]))["as_expected"]["ok"] is True


def test_a_mutant_run_is_not_judged_against_the_scenario():
    out = expectation_of(load("smoke"), "failed-region-commits", _checks(failed=["state_consistency.counter_equals_truth"]))
    assert "as_expected" not in out


def test_under_the_pr_a_wrong_decision_is_not_excused_by_the_counter_finding():
    """F6 lets the PR's counter rule fail; a REGIONAL the rules forbid is another rule of the
    same invariant, and must not pass as F6 (mutation testing: 21 PR mutants hid there)."""
    sc = load("smoke", overrides=PR)
    counter = expectation_of(sc, None, _checks(failed=["decisions_follow_rules.counter_follows_decisions"]))
    assert counter["as_expected"] == {"ok": True, "why": ""}
    wrong = expectation_of(sc, None, _checks(failed=["decisions_follow_rules.counter_follows_decisions",
                                                              "decisions_follow_rules.regional_only_when_allowed"]))
    assert wrong["as_expected"]["ok"] is False
    assert "decisions_follow_rules.regional_only_when_allowed" in wrong["as_expected"]["why"]
    assert "counter_follows_decisions" in wrong["as_expected"]["why"]  # what is declared there


def test_a_run_that_does_not_record_its_failed_rules_is_not_excused():
    sc = load("regional-basic")
    ok, why = meets(sc, "invalid", ["flip_bounds"], [], failed_rules=None)
    assert not ok and "which of its rules" in why
    ok, why = meets(sc, "invalid", ["flip_bounds"], [], failed_rules=[])
    assert not ok and "no failed rule" in why
    assert meets(sc, "invalid", ["flip_bounds"], [], failed_rules=[CHAIN], explained={CHAIN: {"F1": 1}}) == (True, "")


def test_outcome_names_each_failed_rule_under_its_invariant():
    checks = _checks(failed=[CHAIN, "exactly_once_output.no_duplicate_commit"], unknown=["liveness"])
    assert shows(checks) == {"failed": ["flip_bounds", "exactly_once_output"],
                             "failed_rules": [CHAIN, "exactly_once_output.no_duplicate_commit"],
                             "explained": {CHAIN: {"F1,F13,F14,F4,F7": 1},
                                           "exactly_once_output.no_duplicate_commit": {"F10,F12,F13,F14,F2,F5": 1}},
                             "unknown": ["liveness"]}


@pytest.mark.parametrize("finding", findings.FINDINGS, ids=lambda f: f.id)
def test_every_declared_rule_is_a_rule_of_its_suite(finding):
    from regionchaos.judge.suites import load_suites

    known = {f"{s.name}.{r.name}" for s in load_suites() for r in s.rules}
    everything = [load(name, overrides=o) for name in ("union-offsets-rescale", "unaligned-recovery-7-2", "smoke")
                  for o in (None, PR)]
    declared = {r for sc in everything for r in finding.rules_for(sc)}
    assert declared and declared <= known, sorted(declared - known)


def test_the_report_says_which_failed_rules_each_finding_explains():
    """Two findings allow the same invariant; the report credits each only with the rules it names."""
    import re

    from regionchaos.report import build_report

    sc = load("smoke", overrides={**PR, "faults.jobmanager_failover": 0.1})
    checks = _checks(failed=["flip_bounds.ref_chain_depth_within_bound"])
    summary = {"run_id": "r", "verdict": "invalid", "checks": checks, **expectation_of(sc, None, checks)}
    notes = dict(re.findall(r"<p class='note finding'>Finding <b>(F\d)</b>(.*?)</p>", build_report(summary, None)))
    assert "ref_chain_depth_within_bound" in notes["F1"] and "ref_chain_depth_within_bound" in notes["F7"]
    # F6 applies under pr too, but its rule (counter_follows_decisions) did not fail: not printed
    assert "F6" not in notes


def test_the_cli_names_only_the_findings_that_showed():
    """The console says what the report says: a finding is named only where its rules failed."""
    from rich.console import Console

    from regionchaos.cli import print_summary

    sc = load("smoke", overrides={**PR, "faults.jobmanager_failover": 0.1})
    checks = _checks(failed=["flip_bounds.ref_chain_depth_within_bound"])
    summary = {"run_id": "r", "scenario": "smoke", "seed": 1, "verdict": "invalid", "checks": checks,
               "report": "s3://b/runs/r/report/index.html", "replay": "regionchaos run --scenario smoke",
               **expectation_of(sc, None, checks)}
    console = Console(record=True, width=200)
    print_summary(summary, console)
    text = console.export_text()
    assert "finding F1 showed in this run" in text and "explains flip_bounds.ref_chain_depth_within_bound" in text
    assert "finding F7 showed in this run" in text  # F7 declares the chain too, with its own mechanism
    assert "F6" not in text  # it applies under these settings, but did not show
