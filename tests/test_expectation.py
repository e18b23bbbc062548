"""What a run's summary says about its scenario's expectation (runner._expectation): which
recorded findings apply to its settings, and whether the run is as expected. Pure logic."""

from __future__ import annotations

from regionchaos.runner import _expectation
from regionchaos.scenario import load

KEEP_FORCING = {"flink.execution.checkpointing.region.forced-global-failure": "keep-forcing"}


def _checks(failed=(), unknown=(), passed=("state_consistency",)):
    return ([{"name": n, "success": False} for n in failed] + [{"name": n, "success": None} for n in unknown]
            + [{"name": n, "success": True} for n in passed])


def test_a_declared_finding_explains_its_invariant_under_the_flip_default():
    sc = load("regional-basic")
    out = _expectation(sc, None, "invalid", _checks(failed=["flip_bounds"]))
    assert [f["id"] for f in out["findings"]] == ["F1"]
    assert out["as_expected"] == {"ok": True, "why": ""}


def test_an_undeclared_failure_is_not_as_expected_and_is_named():
    sc = load("regional-basic")
    out = _expectation(sc, None, "invalid", _checks(failed=["flip_bounds", "exactly_once_output"]))
    assert out["as_expected"]["ok"] is False
    assert "exactly_once_output" in out["as_expected"]["why"]


def test_without_tier_2_the_same_failure_is_not_excused():
    sc = load("regional-basic", overrides=KEEP_FORCING)
    out = _expectation(sc, None, "invalid", _checks(failed=["flip_bounds"]))
    assert out["findings"] == []
    assert out["as_expected"]["ok"] is False


def test_unknown_is_never_as_expected():
    sc = load("smoke")
    out = _expectation(sc, None, "unknown", _checks(unknown=["flip_bounds"]))
    assert out["as_expected"]["ok"] is False


def test_a_finding_scenario_must_show_its_invariant():
    sc = load("forced-global-tier2")
    assert _expectation(sc, None, "valid", _checks())["as_expected"]["ok"] is False
    assert _expectation(sc, None, "invalid", _checks(failed=["flip_bounds"]))["as_expected"]["ok"] is True


def test_a_mutant_run_is_not_judged_against_the_scenario():
    out = _expectation(load("smoke"), "failed-region-commits", "invalid", _checks(failed=["state_consistency"]))
    assert "as_expected" not in out
