"""A run's expectation asked of the judge room, for tests that state it by hand (pure logic).

In:  a Scenario and what a run's checks showed (verdict, failed and unknown invariants, failed rules,
     the rows each finding's mechanism explains), or the checks themselves.
Out: `meets(...)` -> (as its scenario expects?, why not), through `regionchaos.judge.judgement_of_record`
     (the standing a stored record of a run gets); `shows(checks)`: what the checks show, through
     `regionchaos.judge.judgement_of` (failed, failed rules, explained, unknown).
"""

from __future__ import annotations

from regionchaos.judge import judgement_of
from regionchaos.judge.judgement import FINDING, VALID, judgement_of_record


def meets(scenario, verdict: str, failed: list[str], unknown: list[str], *, failed_rules, explained=None,
          must_show: bool = True) -> tuple[bool, str]:
    judged = judgement_of_record({"verdict": verdict, "failed": failed, "unknown": unknown,
                                  "failed_rules": failed_rules, "explained": explained},
                                 scenario=scenario, must_show=must_show)
    return judged.standing in (VALID, FINDING), judged.why


def shows(checks: list[dict]) -> dict:
    judged = judgement_of("r", checks, scenario=None, mutant=None)
    return {"failed": judged.failed, "failed_rules": judged.failed_rules, "explained": judged.explained,
            "unknown": judged.unknown}
