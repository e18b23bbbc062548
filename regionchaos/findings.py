"""The recorded findings (FINDINGS.md) and what a run is expected to show because of them.

In:  a Scenario (its settings decide which findings apply), and a judged run's verdict with
     the invariants it failed and those it could not judge.
Out: `allowed_failures(scenario)`: the invariants a finding lets the correct protocol fail
     under these settings; `meets_expectation(...)`: whether a run is as expected (valid, or
     failing only declared findings' invariants; a scenario marked ``expect: invalid`` must
     fail its stated invariant), with the reason when it is not.

A finding is the protocol as proposed (or as implemented) breaking its own claim; the check
stays as it is, and only the invariant the finding names may fail. Everything else must hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .scenario import Scenario


@dataclass(frozen=True)
class Finding:
    id: str
    invariants: tuple[str, ...]  # what the correct protocol may fail because of it
    title: str
    applies: Callable[[Scenario], bool]  # under which settings the protocol can show it
    # invariants it may also fail under some of those settings
    extra: Callable[[Scenario], tuple[str, ...]] = lambda sc: ()

    def invariants_for(self, scenario: Scenario) -> tuple[str, ...]:
        return self.invariants + tuple(i for i in self.extra(scenario) if i not in self.invariants)


def _tier2_resets(sc: Scenario) -> bool:
    f = sc.flink
    return sc.region_enabled_effective and (f.semantics == "pr" or f.forced_global_policy == "reset-counter")


def _rescaled(sc: Scenario) -> bool:
    return sc.region_enabled_effective and bool(sc.rescale)


def _pr(sc: Scenario) -> bool:
    return sc.region_enabled_effective and sc.flink.semantics == "pr"


FINDINGS: tuple[Finding, ...] = (
    Finding("F1", ("flip_bounds",), "tier 2 lets the ref chain outgrow max-consecutive-failures", _tier2_resets),
    # with unaligned checkpoints the records it duplicates are also behind a recovered channel
    # state's start, which the in-flight check sees (channel_starts_at_consumed)
    Finding("F2", ("reachable_global_state", "exactly_once_output"),
            "after a rescale, a failed subtask's union-state fallback duplicates other subtasks' entries", _rescaled,
            extra=lambda sc: ("inflight_data",) if sc.flink.unaligned else ()),
    # the implementation PR's semantics (execution.checkpointing.region.semantics: pr)
    Finding("F3", ("decisions_follow_rules",), "PR: REGIONAL with every region failed (no all-regions-failed rule)",
            lambda sc: _pr(sc) and sc.flink.max_failure_ratio >= 1.0),
    Finding("F4", ("decisions_follow_rules", "flip_bounds"), "PR: max-consecutive-failures 0 allows a regional",
            lambda sc: _pr(sc) and sc.flink.max_consecutive_failures == 0),
    Finding("F5", ("reachable_global_state", "exactly_once_output", "metadata_well_formed", "state_consistency"),
            "PR: after a rescale a failed subtask falls back to the old parallelism's entry at its index",
            lambda sc: _pr(sc) and bool(sc.rescale)),
    Finding("F6", ("decisions_follow_rules",), "PR: a forced checkpoint aborted by the failure ratio keeps forcing", _pr),
    Finding("F7", ("decisions_follow_rules", "flip_bounds"),
            "PR: the consecutive counter is not restored after a JobManager failover",
            lambda sc: _pr(sc) and (sc.faults.jobmanager_failover > 0 or sc.faults.crash_before_metadata > 0
                                    or sc.faults.swarm)),
)


def outcome(checks: list[dict]) -> dict[str, list[str]]:
    """What a judged run's checks show: ``failed`` and ``unknown`` invariants, and
    ``failed_rules``, each failed rule as ``invariant.rule`` (the rules a finding is held to)."""
    failed = [c["name"] for c in checks if c.get("success") is False]
    rules = [f"{c['name']}.{r}" for c in checks if c.get("success") is False for r in c.get("failed_rules") or ()]
    return {"failed": failed, "failed_rules": rules,
            "unknown": [c["name"] for c in checks if c.get("success") is None]}


def applicable(scenario: Scenario) -> list[Finding]:
    return [f for f in FINDINGS if f.applies(scenario)]


def allowed_failures(scenario: Scenario) -> set[str]:
    """Invariants the correct protocol may fail under these settings (declared findings)."""
    return {inv for f in applicable(scenario) for inv in f.invariants_for(scenario)}


def meets_expectation(scenario: Scenario, verdict: str, failed: list[str], unknown: list[str], *,
                      must_show: bool = True) -> tuple[bool, str]:
    """(as expected?, why not). Unknown is never as expected. ``must_show``: this run is the
    finding scenario's own schedule (its catalogue seed), which must show the finding; other
    seeds of it may or may not reach the bad state, and must fail nothing else."""
    if verdict == "unknown" or unknown:
        return False, f"unknown: {', '.join(unknown) or 'no verdict'}"
    undeclared = sorted(set(failed) - allowed_failures(scenario))
    if undeclared:
        return False, f"failed {', '.join(undeclared)}, which no finding declares"
    exp = scenario.expect
    # a finding's own scenario must show it, as long as its settings are the finding's (a policy
    # override such as keep-forcing may take the finding away: then the scenario must be valid)
    if must_show and exp.verdict == "invalid" and exp.invariant in allowed_failures(scenario) \
            and exp.invariant not in failed:
        return False, f"expected to fail {exp.invariant} (its finding), but did not"
    return True, ""
