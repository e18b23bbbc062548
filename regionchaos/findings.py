"""The recorded findings (FINDINGS.md) and what a run is expected to show because of them.

In:  a Scenario (its settings decide which findings apply), and a judged run's verdict with
     the invariants it failed, the rules it failed (``invariant.rule``), per failed rule how many
     of its violating rows each finding's mechanism explains (``explained``), and the invariants
     it could not judge.
Out: `allowed_rules(scenario)` / `allowed_failures(scenario)`: the rules (and their invariants)
     a finding lets the correct protocol fail under these settings; `meets_expectation(...)`:
     whether a run is as expected (valid, or failing only declared findings' rules, each
     violation explained by the mechanism of a finding that applies; a scenario marked
     ``expect: invalid`` must fail its stated invariant), with the reason when it is not;
     `outcome(checks)`: what a run's checks show, in those terms.

A finding is the protocol as proposed (or as implemented) breaking its own claim; the check
stays as it is, and only the rules the finding names may fail. Everything else must hold. The
allowance is per rule, not per invariant: `decisions_follow_rules` has nine rules, and a
finding that breaks one of them (F6: the counter after a forced checkpoint's abort) must not
excuse a wrong decision caught by another.

And it is per mechanism, not per rule: a finding excuses only the violations whose evidence in
the raw artifacts shows its mechanism (F1: a forced checkpoint that failed and reset the counter
since the last GLOBAL one; F2: a union fallback holding another subtask's split). Each finding's
mechanism is a SQL query per rule, ``expectations/mechanisms/<finding>/*.sql``, run with the
rule's suite; every violating row is tagged with the findings whose mechanism explains it
(``expectations/custom.py``), and the run's check counts the rows per tag (``explained``). A
failed rule is as expected only if every row is explained by a finding that applies and names
the rule. Where a finding's mechanism cannot be told apart from the rule's own violation
(`Finding.unchecked`, with the reason), the finding excuses the whole rule as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from . import jsonform
from .run.verdict import NOT_APPLICABLE
from .scenario import Scenario, ScenarioError, from_dict


def _unique_invariants(rules) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r.split(".", 1)[0] for r in rules))


@dataclass(frozen=True)
class Finding:
    id: str
    rules: tuple[str, ...]  # "invariant.rule": what the correct protocol may fail because of it
    title: str
    applies: Callable[[Scenario], bool]  # under which settings the protocol can show it
    # rules it may also fail under some of those settings
    extra: Callable[[Scenario], tuple[str, ...]] = lambda sc: ()
    # rules whose violations the finding excuses wholesale, each with why its mechanism cannot be
    # checked row by row; every other rule of the finding has a mechanism query (expectations/mechanisms/)
    unchecked: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def invariants(self) -> tuple[str, ...]:
        return _unique_invariants(self.rules)

    def rules_for(self, scenario: Scenario) -> tuple[str, ...]:
        return self.rules + tuple(r for r in self.extra(scenario) if r not in self.rules)

    def invariants_for(self, scenario: Scenario) -> tuple[str, ...]:
        return _unique_invariants(self.rules_for(scenario))


def _tier2_resets(sc: Scenario) -> bool:
    f = sc.flink
    return sc.region_enabled_effective and (f.semantics == "pr" or f.forced_global_policy == "reset-counter")


def _rescaled(sc: Scenario) -> bool:
    return sc.region_enabled_effective and bool(sc.rescale)


def _pr(sc: Scenario) -> bool:
    return sc.region_enabled_effective and sc.flink.semantics == "pr"


def _splits_assigned_late(sc: Scenario) -> bool:
    """Splits assigned after a checkpoint: discovered ones, or (after a rescale) those a restarted
    region with no entry of its own handed back; a swarm draws discovered splits in its workload's shape
    (`regionchaos.shape`)."""
    return sc.workload.discovered_splits > 0 or bool(sc.rescale) or sc.faults.swarm


def _upscaled(sc: Scenario) -> bool:
    """A rescale to more subtasks than the job had before it."""
    ps = [sc.topology.parallelism, *(e.parallelism for e in sorted(sc.rescale, key=lambda e: e.after_checkpoint))]
    return any(b > a for a, b in zip(ps, ps[1:]))


def _scheduled(sc: Scenario, *kinds: str) -> bool:
    return any(e.kind in kinds for e in sc.faults.schedule or ())


def _may_draw(sc: Scenario, *kinds: str) -> bool:
    """A fault of one of ``kinds`` can happen: the swarm draws its mix, the scenario's probability is above 0, or
    its explicit schedule names one. (The same answer before and after the swarm draws a seed's shape: a
    swarm's findings are looked up on the scenario as written.)"""
    return sc.faults.swarm or _scheduled(sc, *kinds) or any(getattr(sc.faults, k) > 0 for k in kinds)


def _late_acks(sc: Scenario) -> bool:
    """An ack can arrive after the checkpoint timeout: a silent task, or a state PUT slower than the timeout."""
    return _may_draw(sc, "timeout", "slow_put")


def _bounded_output(sc: Scenario) -> tuple[str, ...]:
    """A bounded run that finished also shows the finding in its whole output of a split: records committed twice
    (F10, F12), never committed (F15, F16: a split lost for good), or either (F5, F13)."""
    return ("exactly_once_output.bounded_output_complete",) if sc.workload.bounded else ()


def _delayed(sc: Scenario, *steps: str) -> bool:
    """One of the control plane's ``steps`` (`regionchaos.scenario.Timing`) can take emulated time: other events
    can come between its start and its end (a swarm draws the timing per seed)."""
    return sc.faults.swarm or any(getattr(sc.timing, step)[1] > 0 for step in steps)


BOUNDS = ("flip_bounds.consecutive_regional_within_bound", "flip_bounds.ref_chain_depth_within_bound")

FINDINGS: tuple[Finding, ...] = (
    Finding("F1", BOUNDS, "tier 2 lets the ref chain outgrow max-consecutive-failures", _tier2_resets),
    # with unaligned checkpoints the records it duplicates are also behind a recovered channel
    # state's start, which the in-flight check sees (channel_starts_at_consumed)
    Finding("F2", ("reachable_global_state.union_offsets_reachable", "exactly_once_output.no_duplicate_commit"),
            "after a rescale, a failed subtask's union-state fallback duplicates other subtasks' entries", _rescaled,
            extra=lambda sc: ("inflight_data.channel_starts_at_consumed",) if sc.flink.unaligned else ()),
    # the implementation PR's semantics (execution.checkpointing.region.semantics: pr)
    Finding("F3", ("decisions_follow_rules.regional_mixes_fresh_and_referenced",),
            "PR: REGIONAL with every region failed (no all-regions-failed rule)",
            lambda sc: _pr(sc) and sc.flink.max_failure_ratio >= 1.0),
    Finding("F4", ("decisions_follow_rules.forced_exactly_at_bound", *BOUNDS),
            "PR: max-consecutive-failures 0 allows a regional",
            lambda sc: _pr(sc) and sc.flink.max_consecutive_failures == 0),
    Finding("F5", ("reachable_global_state.split_assignment_consistent", "reachable_global_state.union_offsets_reachable",
                   "exactly_once_output.commit_within_checkpoint", "exactly_once_output.no_duplicate_commit",
                   "metadata_well_formed.one_entry_per_operator_subtask", "state_consistency.counter_equals_truth",
                   "state_consistency.source_ahead_of_counter"),
            "PR: after a rescale a failed subtask falls back to the old parallelism's entry at its index",
            lambda sc: _pr(sc) and bool(sc.rescale),
            # a restore from such a checkpoint restores the channel state of the wrong subtask's splits, and a
            # bounded job reads a split twice or never to its end
            extra=lambda sc: (("redistribution.channel_state_by_identity",) if sc.flink.unaligned else ())
            + _bounded_output(sc)),
    Finding("F6", ("decisions_follow_rules.counter_follows_decisions",),
            "PR: a forced checkpoint aborted by the failure ratio keeps forcing", _pr),
    # the ref chain grows with the streak (F1's allowance used to cover it under the PR)
    Finding("F7", ("decisions_follow_rules.counter_follows_decisions", *BOUNDS),
            "PR: the consecutive counter is not restored after a JobManager failover",
            lambda sc: _pr(sc) and (sc.faults.jobmanager_failover > 0 or sc.faults.crash_before_metadata > 0
                                    or sc.faults.swarm)),
    # F8 (a silent task expires the checkpoint under the PR) is withdrawn: the PR's canceller marks
    # the silent tasks declined and fails their regions (FINDINGS.md); no allowance is left for it
    Finding("F9", ("decisions_follow_rules.forced_failure_is_not_a_job_failure",),
            "PR: a failed forced checkpoint counts toward tolerable-failed-checkpoints and fails the job",
            lambda sc: _pr(sc) and sc.flink.tolerable_failed_checkpoints is not None,
            unchecked={"decisions_follow_rules.forced_failure_is_not_a_job_failure":
                       "the rule's every row is the mechanism itself (a job failure right after a forced "
                       "checkpoint's tier-2 abort, from the history's decisions and failovers): a separate "
                       "mechanism query would repeat the rule and tell nothing apart"}),
    # a later checkpoint holds the handed-back split in the reader's entry while the enumerator counts it unassigned
    # while a split has two readers: both sinks commit it, both union lists hold it (carried through global restores)
    Finding("F10", ("exactly_once_output.no_duplicate_commit", "reachable_global_state.split_assignment_consistent",
                    "exactly_once_output.commit_within_checkpoint", "reachable_global_state.union_offsets_reachable"),
            "PR: a failed region's splits go back to the enumerator while its reader still reads them",
            lambda sc: _pr(sc) and _splits_assigned_late(sc),
            extra=_bounded_output),  # a bounded run commits the duplicated records more than once by its end
    Finding("F11", ("decisions_follow_rules.regional_mixes_fresh_and_referenced",
                    "decisions_follow_rules.failed_regions_follow_responses",
                    "metadata_well_formed.one_entry_per_operator_subtask",
                    # the acknowledging task keeps a fresh entry but is told "fallback": its sink does not
                    # commit the transaction N covers upon N's notification (it waits for a later one)
                    "notifications.commit_upon_notification"),
            "PR: after an upscale a failed region's acknowledging task keeps its fresh entry, a declining one has none",
            lambda sc: _pr(sc) and _upscaled(sc)),
    Finding("F12", ("notifications.failed_region_did_not_commit", "exactly_once_output.commit_within_checkpoint",
                    # a later restore of the region from the fallback reads the committed records again
                    "exactly_once_output.no_duplicate_commit"),
            "PR: an abort notification completes the latest (REGIONAL) checkpoint on a failed region's sink", _pr,
            extra=_bounded_output),
    Finding("F13", ("decisions_follow_rules.global_has_no_refs", "decisions_follow_rules.failed_regions_follow_responses",
                    # the grafted sink is told the GLOBAL checkpoint completed: it commits what its entry does not hold
                    "exactly_once_output.commit_within_checkpoint",
                    # the GLOBAL checkpoint resets the counter, but its grafted entries keep the ref chain going
                    "flip_bounds.ref_chain_depth_within_bound",
                    # a restore from it starts the region's tasks from two checkpoints: records read twice, never
                    # counted, or never committed
                    "exactly_once_output.no_duplicate_commit", "inflight_data.no_records_lost",
                    "state_consistency.counter_equals_truth", "state_consistency.source_ahead_of_counter",
                    # its coordinator state (the trigger-time snapshot) counts a split assigned to the grafted
                    # reader after L as assigned, and L's entry does not hold it: lost in N and after a restore from N
                    "reachable_global_state.split_assignment_consistent"),
            "PR: a late ack during the region fallback completes the checkpoint GLOBAL with grafted entries left",
            lambda sc: _pr(sc) and _late_acks(sc) and _delayed(sc, "fallback_ms"),
            extra=_bounded_output),
    # both semantics: the FLIP is silent on when the failed regions' entries are taken; modelled as Flink takes them
    Finding("F14", ("exactly_once_output.no_duplicate_commit", "flip_bounds.ref_chain_depth_within_bound"),
            "a REGIONAL decision grafts from the latest checkpoint at the decision: an older one completing before "
            "it is skipped, and a region that committed it restores from before it; a skipped GLOBAL one resets the "
            "consecutive counter under a chain that goes on past it",
            lambda sc: sc.region_enabled_effective and (sc.faults.swarm or sc.flink.max_concurrent > 1)
            and _delayed(sc, "fallback_ms", "metadata_ms"),
            extra=_bounded_output),
    Finding("F15", ("reachable_global_state.split_assignment_consistent",),
            "PR: a split assigned to a healthy reader between a REGIONAL checkpoint's trigger and its region fallback "
            "is in no part of the checkpoint",
            # an assignment while a checkpoint is pending needs another interval to pass meanwhile
            lambda sc: _pr(sc) and (sc.faults.swarm or (_splits_assigned_late(sc) and sc.flink.max_concurrent > 1)),
            extra=_bounded_output),  # the split still lost when a bounded job finishes: its records never committed
    Finding("F16", ("liveness.held_split_delivered", "reachable_global_state.split_assignment_consistent"),
            "PR: a source subtask that declined a REGIONAL checkpoint before its snapshot keeps its coordinator "
            "gateway closed: splits assigned to it are held until it restarts",
            lambda sc: _pr(sc) and _may_draw(sc, "decline") and _splits_assigned_late(sc),
            extra=_bounded_output),  # a split lost when a bounded job finishes: its unread records never committed
    Finding("F17", ("liveness.global_after_faults",),
            "PR: a REGIONAL checkpoint the completed checkpoint store refuses stays pending for good: it holds its "
            "concurrent-checkpoint slot and no checkpoint is triggered again until a new JobManager",
            lambda sc: _pr(sc) and _may_draw(sc, "store_failure"),
            # no checkpoint is triggered again, the final one neither: a bounded job never finishes
            extra=lambda sc: ("liveness.bounded_job_finishes",) if sc.workload.bounded else ()),
    # both semantics: the FLIP is silent on when the counter is read and counted with several checkpoints pending
    Finding("F18", ("flip_bounds.consecutive_regional_within_bound",),
            "a REGIONAL decision reads the consecutive counter before an older REGIONAL checkpoint's fallback "
            "completes and counts it: more REGIONAL checkpoints in a row than max-consecutive-failures",
            lambda sc: sc.region_enabled_effective and (sc.faults.swarm or sc.flink.max_concurrent > 1)
            and _delayed(sc, "fallback_ms")),
    Finding("F19", ("decisions_follow_rules.forced_exactly_at_bound",),
            "PR: the final checkpoint's trigger sets the one forced flag, which forces an older pending checkpoint "
            "decided after it: its failed regions abort it (tier 2) where the FLIP completes it REGIONAL",
            lambda sc: _pr(sc) and sc.workload.bounded and (sc.faults.swarm or sc.flink.max_concurrent > 1)),
)


def outcome(checks: list[dict]) -> dict:
    """What a judged run's checks show: ``failed`` and ``unknown`` invariants, ``failed_rules``,
    each failed rule as ``invariant.rule`` (the rules a finding is held to), and ``explained``:
    per failed rule, its violating rows per tag (the findings whose mechanism explains them, ids
    joined by commas; "" for none), where the check recorded it."""
    failed = [c["name"] for c in checks if c.get("success") is False]
    rules = [f"{c['name']}.{r}" for c in checks if c.get("success") is False for r in c.get("failed_rules") or ()]
    explained = {f"{c['name']}.{r}": dict(c["explained"][r]) for c in checks if c.get("success") is False
                 for r in c.get("failed_rules") or () if r in (c.get("explained") or {})}
    return {"failed": failed, "failed_rules": rules, "explained": explained,
            "unknown": [c["name"] for c in checks if c.get("success") is None and c.get("state") != NOT_APPLICABLE]}


def applicable(scenario: Scenario) -> list[Finding]:
    """The findings about these settings of the emulated protocol (none for a real-Flink run)."""
    if scenario.backend != "emulation":
        return []
    return [f for f in FINDINGS if f.applies(scenario)]


def applicable_ids(scenario_doc: Any) -> str:
    """The ids of the findings that apply to a run (`applicable`), joined by commas in `FINDINGS`' order, from
    the ``scenario`` document its scenario.json records: the run table's ``findings`` column. A violating row is
    tagged only with the findings that apply to its run (expectations/custom.py), so a run's tags do not depend on
    the runs judged beside it, and a pass runs no mechanism of a finding that applies to none of its violating
    runs. "" when none applies, or when the document is not a scenario (a tampered scenario.json): then no row is
    tagged, and `meets_expectation`, which reads the run's own Scenario, excuses nothing. The seed decides no
    finding, so the swarm's seeds of one scenario share one parse (cached)."""
    if not isinstance(scenario_doc, dict):
        return ""
    try:
        key = jsonform.dumps({k: v for k, v in scenario_doc.items() if k != "seed"})
    except (TypeError, ValueError):
        return ""
    return _applicable_ids(key)


@lru_cache(maxsize=256)
def _applicable_ids(key: bytes) -> str:
    try:
        scenario = from_dict(jsonform.loads(key))
    except (ScenarioError, TypeError, ValueError):
        return ""
    return ",".join(f.id for f in applicable(scenario))


def allowed_rules(scenario: Scenario) -> set[str]:
    """Rules (``invariant.rule``) the correct protocol may fail under these settings."""
    return {r for f in applicable(scenario) for r in f.rules_for(scenario)}


def allowed_failures(scenario: Scenario) -> set[str]:
    """Invariants the correct protocol may fail under these settings (declared findings)."""
    return set(_unique_invariants(allowed_rules(scenario)))


def unexplained(scenario: Scenario, rule: str, explained: dict[str, dict[str, int]] | None) -> str | None:
    """Why the violations of ``rule`` (a rule a finding that applies declares) are not all excused,
    or None when they are: every row explained by the mechanism of such a finding, or a finding
    whose mechanism is `Finding.unchecked` for the rule."""
    declaring = [f for f in applicable(scenario) if rule in f.rules_for(scenario)]
    if any(rule in f.unchecked for f in declaring):
        return None
    ids = {f.id for f in declaring}
    tags = (explained or {}).get(rule)
    if tags is None:
        return (f"failed {rule}, but the run does not record which violations the mechanism of "
                f"{', '.join(sorted(ids))} explains: no finding can be named")
    rows = sum(n for tag, n in tags.items() if n and not ids & set(filter(None, tag.split(","))))
    if rows:
        return (f"failed {rule} in {rows} violation(s) the mechanism of {', '.join(sorted(ids))} does not explain "
                f"(expectations/mechanisms/: not the finding's doing)")
    return None


def _control_expectation(expect, verdict: str, failed: list[str]) -> tuple[bool, str]:
    """A real-Flink run: as expected when valid as expected, or, for a negative control (``expect:
    invalid``), when it failed its invariant and nothing else."""
    if expect.verdict == "valid":
        return (True, "") if verdict == "valid" else (False, f"failed {', '.join(failed)}, expected valid")
    if sorted(set(failed)) != [expect.invariant]:
        return False, (f"expected to fail {expect.invariant} only (a negative control), but failed "
                       f"{', '.join(failed) or 'nothing'}")
    return True, ""


def meets_expectation(scenario: Scenario, verdict: str, failed: list[str], unknown: list[str], *,
                      failed_rules: list[str] | None, explained: dict[str, dict[str, int]] | None = None,
                      must_show: bool = True) -> tuple[bool, str]:
    """(as expected?, why not). Unknown is never as expected. ``failed_rules`` (``invariant.rule``,
    `outcome`) name what failed within each failed invariant: a failed invariant a finding allows
    is as expected only if every rule it failed is one a finding declares (None, rules not
    recorded: nothing can be attributed, so it is not as expected), and ``explained`` (`outcome`)
    shows every violation of it explained by the mechanism of such a finding (`unexplained`; None,
    not recorded: nothing is explained). ``must_show``: this run is the finding scenario's own
    schedule (its catalogue seed), which must show the finding; other seeds of it may or may not
    reach the bad state, and must fail nothing else."""
    if verdict == "unknown" or unknown:
        return False, f"unknown: {', '.join(unknown) or 'no verdict'}"
    if scenario.backend != "emulation":  # no finding applies: valid, or the negative control's one invariant
        return _control_expectation(scenario.expect, verdict, failed)
    rules = allowed_rules(scenario)
    allowed = set(_unique_invariants(rules))
    undeclared = sorted(set(failed) - allowed)
    if undeclared:
        return False, f"failed {', '.join(undeclared)}, which no finding declares"
    for inv in sorted(set(failed)):
        if failed_rules is None:
            return False, f"failed {inv}, but the run does not record which of its rules failed: no finding can be named"
        broke = [r for r in failed_rules if r.split(".", 1)[0] == inv]
        if not broke:
            return False, f"failed {inv} with no failed rule recorded: no finding can be named"
        stray = [r for r in broke if r not in rules]
        if stray:
            return False, (f"failed {', '.join(stray)}, a rule no finding declares (declared for {inv}: "
                           f"{', '.join(sorted(r.split('.', 1)[1] for r in rules if r.startswith(inv + '.')))})")
        for r in broke:
            why = unexplained(scenario, r, explained)
            if why:
                return False, why
    exp = scenario.expect
    # a finding's own scenario must show it, as long as its settings are the finding's (a policy
    # override such as keep-forcing may take the finding away: then the scenario must be valid)
    if must_show and exp.verdict == "invalid" and exp.invariant in allowed \
            and exp.invariant not in failed:
        return False, f"expected to fail {exp.invariant} (its finding), but did not"
    return True, ""
