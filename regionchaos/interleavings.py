"""The interleavings a run's control plane went through: the swarm's measure of how rude its chaos was.

In:  nothing but the list below; the emulator (`regionchaos.emulator`, `regionchaos.checkpointing`,
     `regionchaos.failover`) counts each one where it happens, into the run's ``stats["interleavings"]``.
Out: `INTERLEAVINGS`, the kinds, each what it means; a swarm reports per kind the seeds in which it
     happened at least once (a kind that never happens is a gap in the chaos).

These are coverage, not checks: no verdict reads them.
"""

from __future__ import annotations

INTERLEAVINGS: dict[str, str] = {
    "failover_while_pending": "a region, TaskManager or JobManager failure while a checkpoint is pending",
    "concurrent_pending": "a checkpoint triggered while another is pending",
    "ack_after_abort": "an acknowledgement reaching the JobManager after its checkpoint was aborted",
    "notification_after_next_trigger": "a checkpoint's notification reaching a task after the next trigger",
    "assignment_between_trigger_and_decision": "a split assigned while a checkpoint is pending",
    "failure_while_fallback_pending": "a failure while a REGIONAL decision's region fallback is pending",
    "jobmanager_crash_while_finalizing": "the JobManager dies while a checkpoint's metadata is written",
}
