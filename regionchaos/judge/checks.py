"""Checks: one run's check per suite, shaped from the rules' results, and the checks merged into a verdict.

In:  a `Suite` (`regionchaos.judge.suites`), a run id (or a swarm's key), and per rule its `rule_result`
     (``{"success", "by_run", "held"}``, from GX's expectation: `regionchaos.judge.engine`) or the
     error that stopped the suite.
Out: `check_of` -> the check (``name, suite, invariant, title, success, unexpected_count, rules,
     examples, failed_rules, explained`` or ``error``), `not_applicable_check` (a suite that does not
     apply to the run's backend, `applies`), `merge_verdict` (false > unknown > true over the checks
     that apply; a registry invariant without a check is unknown) with `missing_invariants`, and
     `merged` (a run's ``{"checks", "verdict"}``, ``error`` when an invariant has no check).

A rule passes for a run only if GX's expectation has a result, did not raise, and names the run
explicitly as one with no unexpected rows (``held_by``, or a ``by_run`` entry counting 0),
consistent with the expectation's own ``success``. Anything else is unknown, never valid.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..run import NOT_APPLICABLE, Verdict
from .suites import DEFAULT_BACKEND, EXPECTED_INVARIANTS, Suite

EXAMPLES_IN_CHECK = 5


def not_applicable_check(suite: Suite, backend: str) -> dict:
    """The check of a suite that does not apply to the run's backend: neither passed nor failed
    (``state`` `NOT_APPLICABLE`); `merge_verdict` leaves it out."""
    return {"name": suite.name, "suite": suite.name, "invariant": suite.invariant, "title": suite.title,
            "success": None, "state": NOT_APPLICABLE, "unexpected_count": None, "examples": [], "rules": {},
            "reason": f"not applicable to this distribution: a {backend} run is not judged by this suite "
                      "(its applies_to)"}


def applies(check: dict) -> bool:
    """False for a `not_applicable_check`."""
    return check.get("state") != NOT_APPLICABLE


def check_of(suite: Suite, run_id: str, rule_results: dict[str, dict] | None, error: str | None,
             backend: str = DEFAULT_BACKEND) -> dict:
    """One run's check for one suite from GX's results: rule -> `rule_result`; only the rules
    of the suite that apply to ``backend`` count (none: `not_applicable_check`).

    A rule passes for the run only if GX's expectation has a result, did not raise, and names the
    run explicitly as one with no unexpected rows (``held_by``, or a ``by_run`` entry counting 0),
    consistent with the expectation's own ``success``. A rule with no result, no answer for the run,
    two answers for it, or a result at odds with GX's success is unknown; the suite is false if a
    rule fails, else unknown if one is unknown."""
    rules = suite.rules_for(backend)
    if rules is None:
        return not_applicable_check(suite, backend)
    check: dict[str, Any] = {"name": suite.name, "suite": suite.name, "invariant": suite.invariant,
                             "title": suite.title}
    if len(rules) < len(suite.rules):
        check["not_applicable_rules"] = [r.name for r in suite.rules if r not in rules]
    if error is not None:
        return {**check, "success": None, "unexpected_count": None, "examples": [], "rules": {},
                "error": error}
    rule_results = rule_results or {}
    counts, examples, unknown, explained = {}, [], [], {}
    for rule in (suite.evaluable, *rules):
        verdict, got = rule_for_run(rule_results.get(rule.name), run_id)
        if verdict is None:
            unknown.append(f"{rule.name}: {got}")
            continue
        if rule is suite.evaluable:
            if verdict is False:
                reasons = "; ".join(sorted({row["detail"] for row in got["examples"]}))
                return {**check, "success": None, "unexpected_count": None, "examples": [], "rules": {},
                        "error": f"cannot be evaluated: {reasons}"}
            continue
        counts[rule.name] = got["count"]
        if got["count"]:  # per findings' mechanism: rows each explains (expectations/custom.py)
            explained[rule.name] = dict(got.get("explained") or {})
        examples += [{"rule": rule.name, **{k: v for k, v in row.items() if k != "run_id"}}
                     for row in got["examples"]]
    if not rules:  # only the evaluability probe: nothing was judged
        unknown.append("the suite has no rules")
    failed = [name for name, n in counts.items() if n]
    check.update(unexpected_count=sum(counts.values()), rules=counts, examples=examples[:EXAMPLES_IN_CHECK],
                 failed_rules=failed, explained=explained)
    if failed:
        check["success"] = False
        if unknown:
            check["unknown_rules"] = unknown
    elif unknown:
        check.update(success=None, error="no result: " + "; ".join(unknown))
    else:
        check["success"] = True
    return check


# the entry of a run the rule's result names in ``held_by``: one for every such run, so read-only
HELD = MappingProxyType({"count": 0, "examples": (), "explained": MappingProxyType({})})


def rule_for_run(result: dict | None, run_id: str) -> tuple[bool | None, Any]:
    """(True passes / False fails / None unknown, the run's entry or why unknown). The run's entry is its
    ``by_run`` one (violating rows), else `HELD` if ``held`` (a set: `rule_result`) names it."""
    if result is None:
        return None, "no result from GX"
    by_run = result.get("by_run") or {}
    entry, held = by_run.get(run_id), run_id in result.get("held", ())
    if held and entry is not None:
        return None, "the result names the run both with and without violating rows"
    entry = HELD if held else entry
    if entry is None or not isinstance(entry.get("count"), int):
        return None, "no result for this run"
    success = result.get("success")
    if success not in (True, False):
        return None, "GX gave no success value"
    if success and entry["count"] > 0:
        return None, "GX reports success but the run has unexpected rows"
    if not success and all(v.get("count") == 0 for v in by_run.values()):
        return None, "GX reports failure but no run has unexpected rows"
    return entry["count"] == 0, entry


def rule_result(success, details: dict | None) -> dict:
    """A rule's result as `check_of` reads it: {"success", "by_run", "held"}, from its expectation's ``success``
    and ``details`` (`custom.by_run_details`; ``held`` a set of ``held_by``, looked up once per run)."""
    details = details or {}
    return {"success": success, "by_run": details.get("by_run"), "held": frozenset(details.get("held_by") or ())}


def merge_verdict(checks: list[dict], expected: tuple[str, ...] = EXPECTED_INVARIANTS) -> str:
    """The checks' `Verdict.merge` (false > unknown > true); no checks at all, or no check for an
    `expected` invariant (by the check's ``name``), is unknown: a missing suite never leaves a
    smaller "valid". A `not_applicable_check` counts neither way (only the suites that apply judge the
    run; none applying is unknown)."""
    verdicts = [Verdict.of_success(c.get("success")) for c in checks if applies(c)]
    if missing_invariants(checks, expected):
        verdicts.append(Verdict.UNKNOWN.value)
    return Verdict.merge(verdicts)


def missing_invariants(checks: list[dict], expected: tuple[str, ...] = EXPECTED_INVARIANTS) -> list[str]:
    """The expected invariants without a check (the reason `merge_verdict` says unknown)."""
    have = {c.get("name") for c in checks}
    return [name for name in expected if name not in have]


def merged(checks: list[dict]) -> dict:
    """One run's judged result from its checks: their merged verdict, and why it is unknown when an
    expected invariant has no check."""
    out = {"checks": checks, "verdict": merge_verdict(checks)}
    if missing_invariants(checks):
        out["error"] = f"no check for invariants {', '.join(missing_invariants(checks))}"
    return out

