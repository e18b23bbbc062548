"""Which failing rules a suite's second (tagging) query runs again: expectations/custom.py `suite_violations`.

In:  a registered suite whose mechanisms name some of its rules; `collect_violations` replaced by a
     recorder that answers like Spark would (the rule's rows, every one tagged "" without mechanisms).
Out: only the failing rules some mechanism names are queried again, and their entries replace the plain
     ones; a failing rule no mechanism names keeps its plain entry; a suite whose failing rules no
     mechanism names is one query. Pure logic (the real queries run in every GX pass of the suite).
"""

from __future__ import annotations

import pytest

from expectations import custom

SUITE = "a_suite"
RULES = ("named_rule", "unnamed_rule", "holding_rule")


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
    return calls, failing


def test_only_failing_rules_a_mechanism_names_are_tagged(recorder):
    calls, failing = recorder
    failing.update({"named_rule", "unnamed_rule"})
    out = custom.suite_violations(None, SUITE, ["run-1"])
    assert [rules for _, rules in calls] == [RULES, ("named_rule",)]
    assert "mechanism" in calls[1][0] and "unnamed_rule" not in calls[1][0]
    assert out["named_rule"]["run-1"]["explained"] == {"F9": 1}  # the tagged entry replaced the plain one
    assert out["unnamed_rule"]["run-1"]["explained"] == {"": 1}  # kept from the plain query
    assert out["holding_rule"]["run-1"]["count"] == 0


def test_a_suite_whose_failing_rules_no_mechanism_names_is_one_query(recorder):
    calls, failing = recorder
    failing.add("unnamed_rule")
    out = custom.suite_violations(None, SUITE, ["run-1"])
    assert [rules for _, rules in calls] == [RULES]
    assert out["unnamed_rule"]["run-1"] == {"count": 1, "examples": [], "explained": {"": 1}}


def test_a_suite_that_holds_is_one_query(recorder):
    calls, _ = recorder
    custom.suite_violations(None, SUITE, ["run-1"])
    assert len(calls) == 1

