"""The judgement of one run: what its checks show and how it stands against its scenario.

In:  a run's checks (`regionchaos.judge.checks.check_of`, one per suite; none for a run that crashed), the
     Scenario it ran (its settings decide which recorded findings apply), its mutant, and why it could not
     be judged (``error``), if so.
Out: `judgement_of(...)` -> `Judgement`: the checks, the verdict (false > unknown > true; an invariant without
     a check, or an error, is unknown), the failed and unknown invariants, the failed rules
     (``invariant.rule``) and, per failed rule, the violating rows each finding's mechanism explains, the
     findings that apply and those that showed, and the run's ``standing`` against its scenario
     (`STANDINGS`) with the reason; `Judgement.from_summary` reads one back from a stored ``summary.json``
     or a swarm seed's record; `Judgement.fields` is what a summary stores of it.

This module is the one caller of `regionchaos.findings.outcome` and `regionchaos.findings.meets_expectation`:
every path (a deep run, the cluster's job, real Flink, the swarm, the seeds matrix, shrink, replay, the DAG
tasks, the runs view) takes a run's result from a `Judgement`, and the outcome policy
(`regionchaos.judge.policy`) reads nothing else.

Standing, for the correct protocol (a mutant's run is held to the same settings: `policy` says whether
the checks caught it):
  - ``violation``: a failed rule that no recorded finding explains (checked first: false > unknown);
  - ``unknown``: the run could not be judged, or a check has no result;
  - ``finding-gone``: its scenario expects a finding that did not show (its own schedule must show it:
    `own_schedule`), or a negative control that failed nothing;
  - ``finding``: failed only where a recorded finding that applies explains every violation;
  - ``valid``: every invariant held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import findings
from ..run import Verdict
from ..scenario import Scenario, ScenarioError, catalogue, load
from .checks import merge_verdict, missing_invariants

VALID, FINDING, FINDING_GONE, VIOLATION, UNKNOWN = "valid", "finding", "finding-gone", "violation", "unknown"
STANDINGS = (VALID, FINDING, FINDING_GONE, VIOLATION, UNKNOWN)
# what a summary (or a swarm seed's record) stores of a judgement, beside its checks
FIELDS = ("verdict", "failed", "unknown", "failed_rules", "explained", "standing", "why", "findings_shown")


@dataclass(frozen=True)
class Judgement:
    """One judged run. ``frames``: the run's tables as pandas frames, when the path built them (a deep run):
    handed on to the report with the judgement, never stored."""

    run_id: str
    checks: list[dict]
    verdict: str
    failed: list[str]
    unknown: list[str]
    failed_rules: list[str]
    explained: dict[str, dict[str, int]]
    mutant: str | None
    findings: list[dict]  # the recorded findings that apply to these settings: id, title, invariants, rules
    findings_shown: list[dict]  # those whose rules failed in this run: id, title, rules (the failed ones)
    standing: str  # one of STANDINGS
    why: str  # why the standing is not valid / finding ("" when it is)
    error: str | None = None
    stats: dict = field(default_factory=dict)
    wall_seconds: dict = field(default_factory=dict)
    frames: dict | None = field(default=None, repr=False, compare=False)

    @property
    def as_expected(self) -> dict | None:
        """``{"ok", "why"}``: whether the run is as its scenario expects (None for a mutant's run, which is
        meant to fail: `regionchaos.judge.policy` says whether it was caught)."""
        if self.mutant:
            return None
        return {"ok": self.standing in (VALID, FINDING), "why": self.why}

    def fields(self) -> dict[str, Any]:
        """What ``summary.json`` (or a swarm seed's record) stores of the judgement: its `FIELDS`, the
        findings that apply, ``as_expected`` (not for a mutant) and ``error`` when there is one."""
        out = {name: getattr(self, name) for name in FIELDS}
        out["findings"] = self.findings
        if self.as_expected is not None:
            out["as_expected"] = self.as_expected
        if self.error:
            out["error"] = self.error
        return out

    @classmethod
    def from_summary(cls, doc: dict) -> Judgement:
        """A judgement read back from a stored ``summary.json`` or a swarm seed's record (`fields`). A
        document without a ``standing`` (written before it was stored) is read from its verdict and
        ``as_expected``, never more favourably: invalid without an ``as_expected`` that says ok is a
        violation, a verdict that is not valid or invalid is unknown."""
        checks = doc.get("checks") if isinstance(doc.get("checks"), list) else []
        shows = findings.outcome(checks)
        verdict = doc.get("verdict") if doc.get("verdict") in (VALID, "invalid") else UNKNOWN
        failed = _strings(doc.get("failed"), shows["failed"])
        standing, why = doc.get("standing"), doc.get("why") or ""
        if standing not in STANDINGS:
            expected = doc.get("as_expected") if isinstance(doc.get("as_expected"), dict) else {}
            why = str(expected.get("why") or doc.get("error") or "")
            if verdict == UNKNOWN:
                standing = UNKNOWN
            elif verdict == VALID:
                standing = FINDING_GONE if expected.get("ok") is False else VALID
            else:
                standing = FINDING if expected.get("ok") is True else VIOLATION
        return cls(
            run_id=str(doc.get("run_id") or ""), checks=checks, verdict=verdict, failed=failed,
            unknown=_strings(doc.get("unknown"), shows["unknown"]),
            failed_rules=_strings(doc.get("failed_rules"), shows["failed_rules"]),
            explained=doc.get("explained") if isinstance(doc.get("explained"), dict) else shows["explained"],
            mutant=doc.get("mutant") or None,
            findings=[f for f in doc.get("findings") or [] if isinstance(f, dict)],
            findings_shown=[f for f in doc.get("findings_shown") or [] if isinstance(f, dict)],
            standing=standing, why=why, error=doc.get("error") or None)


def _strings(value: Any, fallback: list[str]) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else list(fallback)


def own_schedule(scenario: Scenario) -> bool:
    """Is ``scenario`` its catalogue entry exactly (its seed, no override)? A finding's scenario must then
    show its finding (`findings.meets_expectation`'s ``must_show``); other seeds and settings of it may or
    may not reach the bad state. A scenario from a file outside the catalogue is taken as it is: its own."""
    if scenario.expect.verdict != "invalid":
        return False  # nothing to show
    if scenario.name not in catalogue():
        return True
    try:
        return load(scenario.name).to_dict() == scenario.to_dict()
    except ScenarioError:
        return True


def standing_of(scenario: Scenario | None, verdict: str, shows: dict, *, error: str | None,
                must_show: bool) -> tuple[str, str]:
    """(standing, why) of a run's checks as they show (`findings.outcome`) against ``scenario``; see the
    module docstring. ``error``: why the run could not be judged at all (unknown, whatever its checks say).
    Without a scenario nothing is excused."""
    failed, unknown = shows["failed"], shows["unknown"]
    if error:
        return UNKNOWN, f"unknown: {error}"
    attributed = {"failed_rules": shows["failed_rules"], "explained": shows["explained"]}
    if failed:
        if scenario is None:
            return VIOLATION, f"failed {', '.join(failed)} (no scenario names a finding that could explain it)"
        ok, why = findings.meets_expectation(scenario, Verdict.INVALID.value, failed, [], must_show=False,
                                             **attributed)
        if not ok:
            return VIOLATION, why
    if verdict == UNKNOWN or unknown:
        return UNKNOWN, f"unknown: no result for {', '.join(unknown)}" if unknown else "unknown: no verdict"
    if scenario is not None:
        ok, why = findings.meets_expectation(scenario, verdict, failed, [], must_show=must_show, **attributed)
        if not ok:
            return FINDING_GONE, why
    return (FINDING if failed else VALID), ""


def _shows(finding, rule: str, shows: dict) -> bool:
    """Does the run show ``finding`` through the failed ``rule``: its mechanism tagged a violating row of it, or
    the finding checks the rule wholesale (`Finding.unchecked`)? A run that does not record its rows' tags for
    the rule shows every finding that declares it."""
    tags = (shows.get("explained") or {}).get(rule)
    if rule in finding.unchecked or tags is None:
        return True
    return any(n and finding.id in tag.split(",") for tag, n in tags.items())


def judgement_of(run_id: str, checks: list[dict], *, scenario: Scenario | None, mutant: str | None,
                 error: str | None = None, must_show: bool | None = None, stats: dict | None = None,
                 wall_seconds: dict | None = None, frames: dict | None = None) -> Judgement:
    """The judgement of one run from its checks (see the module docstring). ``must_show``: whether a finding
    the scenario expects must show (default: `own_schedule`); ``error``: why the run could not be judged
    (its verdict is then unknown); an invariant without a check is named in ``error`` too."""
    verdict = Verdict.UNKNOWN.value if error else merge_verdict(checks)
    shows = findings.outcome(checks)
    if must_show is None:
        must_show = scenario is not None and own_schedule(scenario)
    standing, why = standing_of(scenario, verdict, shows, error=error, must_show=must_show)
    if error is None and missing_invariants(checks):  # the verdict is unknown (or invalid) already: say why
        error = f"no check for invariants {', '.join(missing_invariants(checks))}"
    applying = findings.applicable(scenario) if scenario is not None else []
    listed = [{"id": f.id, "title": f.title, "invariants": list(f.invariants_for(scenario)),
               "rules": list(f.rules_for(scenario))} for f in applying]
    shown = []
    for f in applying:
        rules = sorted(r for r in set(shows["failed_rules"]) & set(f.rules_for(scenario)) if _shows(f, r, shows))
        if rules:
            shown.append({"id": f.id, "title": f.title, "rules": rules})
    return Judgement(run_id=run_id, checks=checks, verdict=verdict, failed=shows["failed"], unknown=shows["unknown"],
                     failed_rules=shows["failed_rules"], explained=shows["explained"], mutant=mutant or None,
                     findings=listed, findings_shown=shown, standing=standing, why=why, error=error,
                     stats=dict(stats or {}), wall_seconds=dict(wall_seconds or {}), frames=frames)


def judgement_of_record(record: dict, *, scenario: Scenario | None, mutant: str | None = None,
                        must_show: bool | None = None) -> Judgement:
    """A run judged again, without its checks, from a stored record of what they showed (a swarm seed's line,
    a benchmark's JSON line: ``verdict``, ``failed``, ``unknown``, ``failed_rules``, ``explained``, ``error``),
    held to ``scenario`` (the settings it ran with, e.g. under another policy's overrides). A record that does
    not say which rules failed excuses nothing (`findings.meets_expectation`)."""
    shows = {"failed": list(record.get("failed") or []), "unknown": list(record.get("unknown") or []),
             "failed_rules": record.get("failed_rules"), "explained": record.get("explained")}
    verdict = record.get("verdict") if record.get("verdict") in (VALID, "invalid") else UNKNOWN
    if must_show is None:
        must_show = scenario is not None and own_schedule(scenario)
    error = record.get("error") or (None if verdict != UNKNOWN or shows["unknown"] else "no verdict")
    standing, why = standing_of(scenario, verdict, shows, error=error, must_show=must_show)
    return Judgement(run_id=str(record.get("run_id") or ""), checks=[], verdict=verdict, failed=shows["failed"],
                     unknown=shows["unknown"], failed_rules=list(shows["failed_rules"] or []),
                     explained=dict(shows["explained"] or {}), mutant=mutant, findings=[], findings_shown=[],
                     standing=standing, why=why, error=error)


def crashed(run_id: str, error: str, *, scenario: Scenario | None, mutant: str | None) -> Judgement:
    """The judgement of a run that could not be judged (its emulation raised, or its judging did)."""
    return judgement_of(run_id, [], scenario=scenario, mutant=mutant, error=error)
