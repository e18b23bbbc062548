"""The explorations the project relies on: the acceptance configurations, one per public mutant, one per finding.

In:  nothing (names of catalogue scenarios, `--set` overrides, bounds).
Out: `ACCEPTANCE` (name -> `Case`: P = 3, N = 12, every interleaving kind, under tier 2, keep-forcing and the PR;
     keep-forcing at P = 4); `MUTANT_CASES` (mutant -> `Case` without the mutant: a small configuration where
     its broken line runs; the mutant and the correct protocol are explored on it); `FINDING_CASES` (finding id
     -> its scenario at a size the explorer accepts, a pinned schedule off and its fault kinds on, or a string:
     why the finding lies outside the explored actions); `SHORTEST` (finding id -> the shortest schedule on which
     exploring its case showed it). ``bench/explore.py`` explores them all and FINDINGS.md ("What exploration
     shows") gives what they showed.
"""

from __future__ import annotations

from . import Case

TIER2 = "forced-global-tier2"
EVERY_KIND = {"faults.timeout": 0.01, "faults.subtask_crash": 0.01, "faults.taskmanager_loss": 0.01,
              "faults.jobmanager_failover": 0.01, "faults.crash_before_metadata": 0.01, "faults.inside": 0.5}
P2, P3, P4 = ({"topology.parallelism": p} for p in (2, 3, 4))
KEEP = {"execution.checkpointing.region.forced-global-failure": "keep-forcing"}
PR = {"execution.checkpointing.region.semantics": "pr"}
CONCURRENT = {"execution.checkpointing.max-concurrent-checkpoints": 2}
UNSCHEDULED = {"faults.schedule": None}  # a finding's pinned schedule off: the explorer chooses every fault

ACCEPTANCE = {
    "tier2": Case(TIER2, {**P3, **EVERY_KIND}, None, 12),
    "keep-forcing": Case(TIER2, {**P3, **EVERY_KIND, **KEEP}, None, 12),
    "pr": Case(TIER2, {**P3, **EVERY_KIND, **PR}, None, 12),
    "keep-forcing-p4": Case(TIER2, {**P4, **EVERY_KIND, **KEEP}, None, 12),
}

INSIDE = {"faults.subtask_crash": 0.05, "faults.jobmanager_failover": 0.05, "faults.inside": 0.5}
# mutant -> a small configuration where the mutant's broken line runs
MUTANT_CASES = {
    "cleaner-ignores-refs": Case(TIER2, {**P2, **KEEP}, None, 3),
    # bounded: 2 splits of 10 records at 5 per interval, so attempt 1 is the final checkpoint, after a completed one
    "regional-final-checkpoint": Case("bounded-final", {**P2, "workload.splits": 2, "workload.records_per_split": 10,
                                                        "workload.records_per_interval": [5, 5], "faults.timeout": 0,
                                                        "faults.subtask_crash": 0}, None, 2),
    "failed-region-commits": Case(TIER2, {**P2, **KEEP}, None, 3),
    "no-forced-global": Case(TIER2, {**P2, **KEEP}, None, 4),
    "ignore-failure-ratio": Case(TIER2, {**P3, **KEEP}, None, 2),
    "enumerator-no-fallback": Case(TIER2, {**P2, **KEEP, "workload.splits": 2, "workload.discovered_splits": 2},
                                   None, 4),
    "split-drops-remainder": Case("rescale-4-2-1", {"workload.splits": 7,
                                                    "rescale": [{"after_checkpoint": 1, "parallelism": 2}]}, None, 3),
    "union-as-split": Case("rescale-4-2-1", {"rescale": [{"after_checkpoint": 1, "parallelism": 2}]}, None, 3),
    "drop-recovered-inflight": Case("rescale-4-2-1", {"execution.checkpointing.unaligned.enabled": True,
                                                      "rescale": [{"after_checkpoint": 1, "parallelism": 2}]}, None, 3),
    "metadata-before-state": Case(TIER2, {**P2, **KEEP, "faults.crash_before_metadata": 0.05}, None, 3),
    # with Flink's default (0) an abort fails the job, whose global restore rebuilds the fallback table
    "fallback-to-aborted": Case(TIER2, {**P3, **KEEP, "execution.checkpointing.tolerable-failed-checkpoints": 100},
                                None, 4),
    "failover-keeps-pending": Case(TIER2, {**P2, **KEEP, **INSIDE}, None, 3),
    # a failover inside the pending checkpoint aborts it while the healthy region's acks are on their way
    "late-ack-kept": Case(TIER2, {**P2, **KEEP, "faults.subtask_crash": 0.05, "faults.inside": 0.5}, None, 2),
    "forced-flag-at-trigger": Case(TIER2, {**P2, **KEEP, **CONCURRENT, "faults.timeout": 0.05,
                                           "execution.checkpointing.region.max-consecutive-failures": 1}, None, 4),
    "subsumed-notification-commits": Case(TIER2, {**P2, **KEEP, **CONCURRENT, "faults.timeout": 0.05}, None, 3),
    "notify-before-metadata": Case(TIER2, {**P2, **KEEP, "faults.crash_before_metadata": 0.05}, None, 3),
}

# finding -> its scenario at a size the explorer accepts (a pinned schedule off, its fault kinds on), or why the
# finding lies outside the explored actions
FINDING_CASES: dict[str, Case | str] = {
    "F1": Case(TIER2, P3, None, 6),
    "F2": Case("union-offsets-rescale", {}, None, 4),
    "F3": Case("pr-all-regions-failed", {**P2, "faults.correlated_regions": 2}, None, 3),
    "F4": Case("pr-max-consecutive-zero", P2, None, 3),
    "F5": Case("pr-rescale-fallback", {"rescale": [{"after_checkpoint": 1, "parallelism": 2}]}, None, 4),
    "F6": Case("pr-forced-ratio-abort", P3, None, 5),
    "F7": Case("pr-jobmanager-counter", P2, None, 5),
    "F9": Case("pr-forced-failure-fails-job", {**UNSCHEDULED, "faults.decline": 0.1}, None, 4),
    # F10's own scenario (silent tasks) shows it only past N = 3; a decline on F15's shows it as a later checkpoint's
    # split assignment (expectations/mechanisms/F10/handed_back_still_read.sql)
    "F10": Case("pr-split-assigned-before-fallback", {**UNSCHEDULED, "faults.decline": 0.1}, None, 3),
    "F11": Case("pr-upscale-fresh-fallback", {**P2, **UNSCHEDULED, "faults.decline": 0.1, "workload.splits": 4,
                                              "rescale": [{"after_checkpoint": 0, "parallelism": 3}]}, None, 3),
    "F12": Case("pr-abort-completes-regional", {**UNSCHEDULED, "faults.decline": 0.1}, None, 3),
    "F13": "a late acknowledgement arrives during the region fallback only with a fallback delay "
           "(timing.fallback_ms); the explorer covers zero control-plane delays",
    "F14": "an older checkpoint completes between a REGIONAL decision and its graft only with a fallback delay "
           "(timing.fallback_ms); the explorer covers zero control-plane delays",
    "F15": Case("pr-split-assigned-before-fallback", {**UNSCHEDULED, "faults.decline": 0.1}, None, 3),
    "F16": Case("pr-gateway-stays-closed", {**UNSCHEDULED, "faults.decline": 0.1}, None, 3),
    "F17": "it needs the completed checkpoint store to refuse a checkpoint (store_failure), which the explorer "
           "refuses: the refusal is not among the choices its signature covers",
    "F18": "a REGIONAL decision comes before an older REGIONAL checkpoint's completion only with a fallback delay "
           "(timing.fallback_ms); the explorer covers zero control-plane delays",
    "F19": "it needs a bounded job under the PR with two checkpoints pending, which the explorer refuses "
           "(regionchaos.explore.scope.BOUNDED_NEEDS: bounded jobs are explored under the FLIP, one checkpoint at "
           "a time)",
}

# finding -> (attempts, schedule) of the shortest representative whose judgement shows it, as `bench/explore.py`
# found it exploring `FINDING_CASES` (tests/test_explore.py checks the search still reaches it and GX shows the
# finding on it)
SHORTEST: dict[str, tuple[int, list[dict]]] = {
    "F1": (5, [{"checkpoint": c, "kind": "decline", "subtask": 2, "vertex": "source"} for c in (1, 2, 3, 4)]),
    "F2": (3, [{"checkpoint": 2, "kind": "decline", "subtask": 1, "vertex": "source"}]),
    "F3": (2, [{"checkpoint": 1, "kind": "decline", "subtask": 0, "vertex": "source"},
               {"checkpoint": 1, "kind": "decline", "subtask": 1, "vertex": "source"}]),
    "F4": (1, []),
    "F5": (3, [{"checkpoint": 2, "kind": "decline", "subtask": 1, "vertex": "source"}]),
    "F6": (4, [{"checkpoint": 1, "kind": "decline", "subtask": 2, "vertex": "source"},
               {"checkpoint": 2, "kind": "decline", "subtask": 2, "vertex": "source"},
               {"checkpoint": 3, "kind": "decline", "subtask": 1, "vertex": "source"},
               {"checkpoint": 3, "kind": "decline", "subtask": 2, "vertex": "source"}]),
    "F7": (3, [{"checkpoint": 1, "kind": "decline", "subtask": 1, "vertex": "source"},
               {"checkpoint": 2, "kind": "jobmanager_failover"}]),
    "F9": (3, [{"checkpoint": 1, "kind": "decline", "subtask": 3, "vertex": "source"},
               {"checkpoint": 2, "kind": "decline", "subtask": 3, "vertex": "source"}]),
    "F10": (2, [{"checkpoint": 1, "kind": "decline", "subtask": 0, "vertex": "source"}]),
    "F11": (2, [{"checkpoint": 1, "kind": "decline", "subtask": 2, "vertex": "source"}]),
    "F12": (3, [{"checkpoint": 1, "kind": "decline", "subtask": 3, "vertex": "source"},
                {"checkpoint": 2, "kind": "decline", "subtask": 2, "vertex": "source"},
                {"checkpoint": 2, "kind": "decline", "subtask": 3, "vertex": "source"}]),
    "F15": (3, [{"checkpoint": 1, "kind": "decline", "subtask": 3, "vertex": "source"}]),
    "F16": (2, [{"checkpoint": 1, "kind": "decline", "subtask": 3, "vertex": "source"}]),
}
