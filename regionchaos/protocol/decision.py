"""What checkpoint N's responses decide, before anything changes (PROTOCOL.md 3.2-3.4).

In:  the pending checkpoint (its responses, forced / final / savepoint flags), each task's region
     and the job's region count, the coordinator's settings, whether an earlier checkpoint
     completed, the counter and the failure count now, and the mutant.
Out: the undecided CheckpointOutcome (timed-out tasks, failed regions, the regions counted, the
     counters before), then the decision: GLOBAL, REGIONAL (the source coordinator's region
     fallback still to ask) or ABORTED with the reason.

Pure: the coordinator (`regionchaos.protocol.coordinator`) asks the source coordinator, moves
the counters and writes the outcome.
"""

from __future__ import annotations

from .checkpoint import GLOBAL, REGIONAL
from .pending import ABORTED, CheckpointOutcome, PendingCheckpoint
from .rules import PR, R_EXPIRED, CoordinatorSettings, flip_abort_reason, pr_abort_reason
from .topology import Task


def undecided(s: CoordinatorSettings, pending: PendingCheckpoint, regions: dict[Task, int], num_regions: int, *,
              settled: bool, counter: int, failures: int) -> CheckpointOutcome:
    """Checkpoint N's outcome before its decision, with its timed-out tasks and failed regions
    (``settled``: see `PendingCheckpoint.failures`). The regions counted: PR, those of the
    running tasks (``tryCompleteRegionalCheckpoint`` groups the plan's tasksToWaitFor, which
    holds no finished task); FLIP, every region of the job (``num_regions``)."""
    timed_out, failed_regions = pending.failures(regions, settled=settled)
    if s.semantics == PR:
        num_regions = len({regions[t] for t in pending.expected})
    return CheckpointOutcome.undecided(pending, failed_regions, timed_out, counter, num_regions, failures)


def decide(s: CoordinatorSettings, pending: PendingCheckpoint, outcome: CheckpointOutcome, num_regions: int, *,
           has_previous: bool, mutant: str | None) -> tuple[str, str | None]:
    """(GLOBAL, None) when no region failed; else (REGIONAL, None) if the rules let it complete
    regional, or (ABORTED, reason): the FLIP's rules (PROTOCOL.md 3.4, over the job's
    ``num_regions``) or the PR's (over the regions counted). A savepoint with a failed region
    was silent at the timeout: Flink's canceller aborts it as expired."""
    if not outcome.failed_regions:
        return GLOBAL, None
    if pending.savepoint:
        return ABORTED, R_EXPIRED
    if s.semantics == PR:
        reason = pr_abort_reason(s, outcome.num_regions, outcome.failed_regions, timed_out=bool(outcome.timed_out),
                                 has_previous=has_previous, forced=pending.forced_global, mutant=mutant)
    else:
        reason = flip_abort_reason(s, num_regions, outcome.failed_regions, has_previous=has_previous,
                                   forced=pending.forced_global, final=pending.final, mutant=mutant)
    return (REGIONAL, None) if reason is None else (ABORTED, reason)
