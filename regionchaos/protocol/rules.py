"""The decision rules of a checkpoint with failed regions (PROTOCOL.md 3.4), as the FLIP
proposes them and as its implementation PR applies them, and the settings they read.

In:  the coordinator's settings, how many regions the job has and which of them failed (the
     regions of declined or timed-out tasks), whether an earlier checkpoint completed, and
     the pending checkpoint's forced / final flags.
Out: the reason checkpoint N is ABORTED, or None when it may complete REGIONAL (the
     coordinator then still asks the source's coordinator for its region fallback).

Each function checks its rules in the order its source does; the first that fires names the
abort. Pure: `regionchaos.protocol.counters` holds the counter and the forced flag these rules lead to.

The counter rules (tiers 1 and 2 of 3.3 / 3.4) are here too, as functions of the counter and
the PR's forced flag: whether a trigger is forced, and both values after a completion or an
abort.
"""

from __future__ import annotations

from dataclasses import dataclass

from .checkpoint import GLOBAL

# abort reasons (one name per rule of PROTOCOL.md section 3.4)
R_REGIONAL_OFF = "regional-checkpoints-disabled"
R_SINGLE_REGION = "single-region"
R_ALL_FAILED = "all-regions-failed"  # nothing fresh: a REGIONAL checkpoint needs a healthy region (invariant 2)
R_NO_PREVIOUS = "no-completed-checkpoint"
R_FAILURE_RATIO = "failure-ratio-exceeded"
R_FORCED_GLOBAL = "forced-global-failed"
R_NO_COORDINATOR_FALLBACK = "coordinator-no-region-fallback"
R_FINAL = "final-checkpoint-must-be-global"
R_EXPIRED = "checkpoint-expired"  # Flink's plain checkpoint timeout: a silent task with regional checkpoints off
R_SAVEPOINT_DECLINED = "savepoint-declined"  # a savepoint takes the non-regional path: one decline aborts it
# aborts that are no checkpoint failure (``CheckpointFailureManager.checkFailureCounter`` ignores both,
# apache/flink 355184d69a8519d29937725c8d85e8465d7e3a90; ``CheckpointFailureReason.isCountedAgainstFailureThreshold``):
R_FAILOVER = "job-failover-region"  # a failover aborts every pending checkpoint (``SchedulerBase.restoreState``)
R_SUBSUMED = "checkpoint-subsumed"  # a newer checkpoint completed first (``dropSubsumedCheckpoints``)
# the job finished: ``CheckpointCoordinator.shutdown`` aborts what is still pending (a checkpoint triggered after the
# final one completed, before its notifications finished the tasks): ``abortPendingAndQueuedCheckpoints``
R_SHUTDOWN = "checkpoint-coordinator-shutdown"
UNCOUNTED = (R_FAILOVER, R_SUBSUMED, R_SHUTDOWN)
# the completed checkpoint store refused a finalized checkpoint: counted. The failure manager of the PR's 2.x base
# counts it (``isCountedAgainstFailureThreshold``: ``case FINALIZE_CHECKPOINT_FAILURE: return true``, the newest
# copy read; apache/flink 355184d69a8519d29937725c8d85e8465d7e3a90, an old one, ignored it; 00fed2be could not be read)
R_FINALIZE = "finalize-checkpoint-failure"

FLIP, PR = "flip", "pr"  # CoordinatorSettings.semantics


@dataclass(frozen=True)
class CoordinatorSettings:
    """The coordinator's Flink settings. No defaults here: they live once, in the scenario model.

    ``semantics``: ``flip`` decides as the FLIP-600 proposal (PROTOCOL.md section 3);
    ``pr`` as its implementation in apache/flink (``RegionalCheckpointHandler``): the forced
    flag is set after a regional checkpoint completes (so ``max-consecutive-failures = 0``
    still lets one through) and survives an abort by the failure ratio; the counter and the
    flag live in memory only (a new JobManager starts from 0); a task silent at the checkpoint
    timeout is marked declined (``CheckpointCoordinator.CheckpointCanceller`` calls
    ``PendingCheckpoint.markUnacknowledgedTasksAsDeclined``) and fails its region like a
    decline; the regions counted are those of the running tasks (the plan's tasksToWaitFor);
    no all-regions-failed rule; after a rescale a failed subtask's fallback is its index in
    the latest checkpoint, at the old parallelism; a completed savepoint resets the counter and
    the flag.

    ``tolerable_failed_checkpoints``: Flink's ``execution.checkpointing.tolerable-failed-checkpoints``
    (``CheckpointFailureManager``): more consecutive failed checkpoints than this fail the job.
    None: checkpoint failures never fail the job (Flink itself reads an unset key as 0).

    ``timeout_ms`` / ``region_timeout_ms``: the deadlines, in ms after the trigger, of a
    response that carries its arrival time (``receive_acknowledge(..., at_ms=)``). An ack after
    the deadline is discarded and its task counts as timed out. The deadline is the region
    timeout when regional checkpoints are on under ``flip`` and one is set (the dev list's
    "per-region timeout": the silent task's region is marked failed), else the checkpoint
    timeout; the PR has no per-region timeout. None: responses carry no time (unit tests of
    the decision rules)."""

    region_enabled: bool
    max_failure_ratio: float
    max_consecutive_failures: int
    forced_global_policy: str  # "reset-counter" (the FLIP's tier 2) or "keep-forcing"
    semantics: str = FLIP  # the one default: code and tests that predate the option mean the FLIP
    timeout_ms: int | None = None
    region_timeout_ms: int | None = None
    tolerable_failed_checkpoints: int | None = None

    @property
    def deadline_ms(self) -> int | None:
        """How long after the trigger an acknowledgement still counts."""
        if self.region_enabled and self.semantics == FLIP and self.region_timeout_ms is not None:
            return self.region_timeout_ms
        return self.timeout_ms


def flip_abort_reason(s: CoordinatorSettings, num_regions: int, failed_regions: tuple[int, ...], *,
                      has_previous: bool, forced: bool, final: bool, mutant: str | None) -> str | None:
    """PROTOCOL.md 3.4, in order."""
    if not s.region_enabled:
        return R_REGIONAL_OFF
    if num_regions == 1:
        return R_SINGLE_REGION
    if len(failed_regions) == num_regions:
        return R_ALL_FAILED
    if not has_previous:
        return R_NO_PREVIOUS
    if len(failed_regions) / num_regions > s.max_failure_ratio and mutant != "ignore-failure-ratio":
        return R_FAILURE_RATIO
    if forced:
        return R_FORCED_GLOBAL
    if final and mutant != "regional-final-checkpoint":
        return R_FINAL
    return None


def pr_abort_reason(s: CoordinatorSettings, num_regions: int, failed_regions: tuple[int, ...], *,
                    timed_out: bool, has_previous: bool, forced: bool, mutant: str | None) -> str | None:
    """``RegionalCheckpointHandler.tryCompleteRegionalCheckpoint`` (apache/flink 4e120137), in order.

    ``failed_regions``: the regions of declined tasks, and (the canceller marks them declined,
    ``PendingCheckpoint.markUnacknowledgedTasksAsDeclined``, raoraoxiong/flink fada049) of tasks
    still silent at the checkpoint timeout. ``num_regions``: the regions of the plan's
    tasksToWaitFor, i.e. of running tasks (a finished task belongs to no region).
    With regional checkpoints off a declined checkpoint was already aborted at the decline
    (``receiveDeclineMessage``); what reaches here is a timeout: Flink's plain expiry."""
    if not s.region_enabled:
        return R_EXPIRED if timed_out else R_REGIONAL_OFF
    if num_regions <= 1:
        return R_SINGLE_REGION
    if len(failed_regions) / num_regions > s.max_failure_ratio and mutant != "ignore-failure-ratio":
        return R_FAILURE_RATIO  # the forced flag stays set: the next checkpoint is forced again
    if forced:
        return R_FORCED_GLOBAL  # tier 2: the coordinator's abort resets counter and flag
    if not has_previous:
        return R_NO_PREVIOUS
    return None


# -- the counter and the forced flag (tiers 1 and 2) ----------------------------------------


def trigger_forced(s: CoordinatorSettings, *, counter: int, force_next: bool, sources_exhausted: bool,
                   mutant: str | None) -> tuple[bool, bool]:
    """(is the checkpoint being triggered forced global, the PR's forced flag after the trigger).
    FLIP: forced once the counter reached the bound. PR: forced while its flag is set, which
    the bound and the end of the sources (``checkAllSourcesFinishedAndForceGlobal``) set."""
    if s.semantics == PR:
        force_next = force_next or (s.region_enabled and sources_exhausted)
        return s.region_enabled and mutant != "no-forced-global" and force_next, force_next
    forced = s.region_enabled and mutant != "no-forced-global" and counter >= s.max_consecutive_failures
    return forced, force_next


def forced_at_decision(s: CoordinatorSettings, *, counter: int, force_next: bool, mutant: str | None) -> bool:
    """Is the checkpoint being decided forced global. Read when a checkpoint is decided, not when it
    was triggered: the PR's ``tryCompleteRegionalCheckpoint`` step 7 reads ``forceGlobalNextCheckpoint``
    under the lock at the decision (apache/flink 4e12013748c0af9c17eeafb5b6c28d1806f51973), so with
    several checkpoints pending tier 2 hits whichever is decided next. The FLIP says "the next
    checkpoint must be global" and is silent on concurrent ones: Flink's reading, at the decision, with
    the FLIP's counter (``counter >= max-consecutive-failures``)."""
    if not s.region_enabled or mutant == "no-forced-global":
        return False
    return force_next if s.semantics == PR else counter >= s.max_consecutive_failures


def after_complete(s: CoordinatorSettings, kind: str, *, counter: int, force_next: bool) -> tuple[int, bool]:
    """(counter, forced flag) after a checkpoint completed as ``kind``: a global one resets both;
    a regional one counts, and the PR sets its flag at the bound (tier 1: force the NEXT one)."""
    if kind == GLOBAL:
        return 0, False
    counter += 1
    return counter, force_next or counter >= s.max_consecutive_failures


def after_abort(s: CoordinatorSettings, reason: str, *, forced: bool, counter: int,
                force_next: bool) -> tuple[int, bool]:
    """(counter, forced flag) after an abort. PR: only its forced-global abort resets both (one
    aborted by the failure ratio keeps forcing). FLIP tier 2: a failed forced checkpoint aborts
    normally and, under ``reset-counter``, resets the counter. A checkpoint aborted by a failover or
    subsumed by a newer one (`UNCOUNTED`) did not fail: nothing moves."""
    if s.semantics == PR:
        return (0, False) if reason == R_FORCED_GLOBAL else (counter, force_next)
    if forced and reason not in UNCOUNTED and s.forced_global_policy == "reset-counter":
        return 0, force_next
    return counter, force_next


# -- the CheckpointFailureManager (execution.checkpointing.tolerable-failed-checkpoints) ----------


def counts_as_failed_checkpoint(s: CoordinatorSettings, *, forced: bool, savepoint: bool) -> bool:
    """Does this abort count toward ``tolerable-failed-checkpoints``? A savepoint never does
    (``CheckpointFailureManager.handleJobLevelCheckpointException`` skips ``isSavepoint()``).
    PR: every abort does: the handler aborts through ``CheckpointCoordinator.abortPendingCheckpoint``
    with ``CHECKPOINT_DECLINED`` (the canceller's with ``CHECKPOINT_EXPIRED``), both counted by
    ``CheckpointFailureManager.checkFailureCounter``, the tier-2 abort of a forced checkpoint too.
    FLIP: PROTOCOL.md 3.5 says a failed forced checkpoint is "not a job failure"; on every other
    abort the FLIP is silent, and Flink's failure manager counts it as before."""
    if savepoint:
        return False
    if s.semantics == PR:
        return True
    return not forced


def counted(s: CoordinatorSettings, reason: str, *, forced: bool, savepoint: bool) -> bool:
    """`counts_as_failed_checkpoint`, and never for the reasons Flink ignores (`UNCOUNTED`)."""
    return reason not in UNCOUNTED and counts_as_failed_checkpoint(s, forced=forced, savepoint=savepoint)


def after_failure_count(s: CoordinatorSettings, failures: int, *, counted: bool) -> tuple[int, bool]:
    """(consecutive failed checkpoints after an abort, does the job fail). Flink's
    ``checkFailureAgainstCounter``: more than the tolerable number fails the job and clears the
    count (``clearCount``); any completed checkpoint (a regional one as well: the handler's
    ``completeRegionalCheckpoint`` calls ``reportCompletedCheckpoint`` ->
    ``handleCheckpointSuccess``) clears it too (the coordinator does that)."""
    if not counted:
        return failures, False
    failures += 1
    if s.tolerable_failed_checkpoints is not None and failures > s.tolerable_failed_checkpoints:
        return 0, True
    return failures, False
