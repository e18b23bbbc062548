"""Which failing rules a suite's second (tagging) query runs again: expectations/custom.py `suite_violations`.

In:  a registered suite whose mechanisms name some of its rules; `collect_violations` replaced by a
     recorder that answers like Spark would (the rule's rows, every one tagged "" without mechanisms).
Out: only the failing rules some mechanism names are queried again, and their entries replace the plain
     ones; a failing rule no mechanism names keeps its plain entry; a suite whose failing rules no
     mechanism names is one query; a mechanism runs only for the rules it names that fail in a run its
     finding applies to (the run table's ``findings``, given here as ``applicable``). Pure logic (the real
     queries run in every GX pass of the suite; tests/test_tag_applicable.py runs them on Spark).
"""

from __future__ import annotations

import contextlib

import pytest

from expectations import custom

SUITE = "a_suite"
RULES = ("named_rule", "unnamed_rule", "holding_rule")
F9_APPLIES = {"run-1": frozenset({"F1", "F9"})}  # run -> the findings that apply to it


def applies(findings: dict = F9_APPLIES):
    return lambda: findings


@pytest.fixture
def recorder(monkeypatch):
    monkeypatch.setitem(custom.SUITE_SQL, SUITE, "SELECT 'plain'")
    monkeypatch.setitem(custom.SUITE_RULES, SUITE, RULES)
    monkeypatch.setitem(custom.SUITE_PARTS, SUITE, {r: f"SELECT '{r}'" for r in RULES})
    monkeypatch.setitem(custom.SUITE_MECHANISMS, SUITE, [("F9", ("named_rule",), "SELECT 'mechanism'")])
    calls: list[tuple[str, tuple[str, ...]]] = []
    failing: set[str] = set()

    def collect(spark, sql, rules, batch_view=custom.BATCH_VIEW, runs=None):
        assert runs == ["run-1"]  # the batch's runs, given: not queried again per call
        calls.append((sql, tuple(rules)))
        tagged = sql != "SELECT 'plain'"
        return {rule: {"run-1": {"count": int(rule in failing), "examples": [],
                                 "explained": ({("F9" if tagged else ""): 1} if rule in failing else {})}}
                for rule in rules}

    monkeypatch.setattr(custom, "collect_violations", collect)
    monkeypatch.setattr(custom, "only_runs", lambda spark, sql, runs: contextlib.nullcontext(sql))
    return calls, failing


def test_only_failing_rules_a_mechanism_names_are_tagged(recorder):
    calls, failing = recorder
    failing.update({"named_rule", "unnamed_rule"})
    out = custom.suite_violations(None, SUITE, ["run-1"], applies())
    assert [rules for _, rules in calls] == [RULES, ("named_rule",)]
    assert "mechanism" in calls[1][0] and "unnamed_rule" not in calls[1][0]
    assert out["named_rule"]["run-1"]["explained"] == {"F9": 1}  # the tagged entry replaced the plain one
    assert out["unnamed_rule"]["run-1"]["explained"] == {"": 1}  # kept from the plain query
    assert out["holding_rule"]["run-1"]["count"] == 0


def test_a_suite_whose_failing_rules_no_mechanism_names_is_one_query(recorder):
    calls, failing = recorder
    failing.add("unnamed_rule")
    out = custom.suite_violations(None, SUITE, ["run-1"], applies())
    assert [rules for _, rules in calls] == [RULES]
    assert out["unnamed_rule"]["run-1"] == {"count": 1, "examples": [], "explained": {"": 1}}


def test_a_suite_that_holds_is_one_query(recorder):
    calls, _ = recorder
    custom.suite_violations(None, SUITE, ["run-1"], applies())
    assert len(calls) == 1


def test_a_mechanism_runs_only_where_its_finding_applies(recorder):
    """F9 names the failing rule, but applies to no run that violates it: no second query, the plain
    entry stays (nothing could excuse the rows: `findings.meets_expectation` reads only applicable findings)."""
    calls, failing = recorder
    failing.add("named_rule")
    out = custom.suite_violations(None, SUITE, ["run-1"], applies({"run-1": frozenset({"F1"})}))
    assert [rules for _, rules in calls] == [RULES]
    assert out["named_rule"]["run-1"]["explained"] == {"": 1}
    calls.clear()
    custom.suite_violations(None, SUITE, ["run-1"], applies())  # where it applies, the rule is tagged
    assert [rules for _, rules in calls] == [RULES, ("named_rule",)]


def test_the_mechanisms_a_tagging_query_runs():
    """Per finding, the rules it names that fail in some run it applies to; none: no mechanism."""
    mechanisms = [("F1", ("a", "b"), "SQL1"), ("F7", ("a",), "SQL7")]
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(custom.SUITE_MECHANISMS, SUITE, mechanisms)
        assert custom.mechanisms_for(SUITE, {"a": {"F1"}, "b": {"F1", "F7"}}) == [("F1", ("a", "b"), "SQL1")]
        assert custom.mechanisms_for(SUITE, {"a": {"F1", "F7"}}) == [("F1", ("a",), "SQL1"), ("F7", ("a",), "SQL7")]
        assert custom.mechanisms_for(SUITE, {"b": {"F7"}, "a": set()}) == []



def test_the_tagging_query_reads_only_the_runs_it_can_tag(monkeypatch):
    """Three runs: run-1 violates the named rule and F9 applies to it, run-2 violates it but F9 does not apply,
    run-3 holds. The tagging query reads run-1's rows only (`only_runs`); run-2 and run-3 keep their plain
    entries, and run-1's tagged entry replaces its plain one."""
    runs = ["run-1", "run-2", "run-3"]
    monkeypatch.setitem(custom.SUITE_SQL, SUITE, "SELECT 'plain'")
    monkeypatch.setitem(custom.SUITE_RULES, SUITE, RULES)
    monkeypatch.setitem(custom.SUITE_PARTS, SUITE, {r: f"SELECT '{r}'" for r in RULES})
    monkeypatch.setitem(custom.SUITE_MECHANISMS, SUITE, [("F9", ("named_rule",), "SELECT 'mechanism'")])
    read: list[list[str]] = []

    @contextlib.contextmanager
    def only_runs(spark, sql, subset):
        read.append(subset)
        yield sql

    def collect(spark, sql, rules, batch_view=custom.BATCH_VIEW, runs=None):
        tagged = sql != "SELECT 'plain'"
        violating = {"run-1", "run-2"} if not tagged else set(runs) & {"run-1", "run-2"}
        return {rule: {run: ({"count": 1, "examples": [], "explained": {("F9" if tagged else ""): 1}}
                             if rule == "named_rule" and run in violating else
                             {"count": 0, "examples": [], "explained": {}}) for run in runs} for rule in rules}

    monkeypatch.setattr(custom, "only_runs", only_runs)
    monkeypatch.setattr(custom, "collect_violations", collect)
    out = custom.suite_violations(None, SUITE, runs, applies({"run-1": frozenset({"F9"}), "run-2": frozenset({"F1"})}))
    assert read == [["run-1"]]
    assert out["named_rule"]["run-1"]["explained"] == {"F9": 1}
    assert out["named_rule"]["run-2"]["explained"] == {"": 1}  # plain: F9 cannot excuse it
    assert out["named_rule"]["run-3"]["count"] == 0 and set(out["named_rule"]) == set(runs)
