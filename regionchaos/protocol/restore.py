"""What the event simulation asks of the CheckpointCoordinator between its steps, and its restores.

In:  the coordinator's own state (`regionchaos.protocol.coordinator.CheckpointCoordinator` mixes these in):
     its pending checkpoints, store, counters, fallback table, graph and source coordinator.
Out: `PendingTable`: a checkpoint decided and completed at once (the synchronous path the model's
     unit tests take), the canceller's marking of silent tasks, the checkpoints a completion subsumes,
     a failover's abort of every pending checkpoint, the notifications a decision would send;
     `Savepoints`: a savepoint's trigger and completion;
     `Restoring`: the state each task restarts from after a region failover, a global failover
     or a rescale (Flink's ``StateAssignmentOperation`` through `regionchaos.protocol.assignment`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .assignment import States, assign_all, fallback_after_restore, region_states
from .checkpoint import GLOBAL, REGIONAL
from .merge import completed_checkpoint, merge_entries
from .pending import ABORTED, CheckpointOutcome, PendingCheckpoint
from .rules import PR
from .topology import Task

if TYPE_CHECKING:
    from .coordinator import CheckpointCoordinator as _Base
else:
    _Base = object


class PendingTable(_Base):
    def complete_pending_checkpoint(self, pending: PendingCheckpoint) -> CheckpointOutcome:
        """Decide checkpoint N once every task responded or timed out (section 3), and complete
        or abort it at once: `decide`, the source coordinator's region fallback, `complete`. The
        event simulation (`regionchaos.checkpointing`) takes these steps at their own instants. A
        checkpoint already aborted at a decline keeps that decision; its record of responses is
        completed."""
        outcome, kind, reason = self.decide(pending)
        if kind == ABORTED:
            return outcome if reason is None else self.abort(pending, outcome, reason)
        if kind == REGIONAL:
            reason = self.region_fallback(pending, outcome)
            if reason is not None:
                return self.abort(pending, outcome, reason)
        return self.complete(pending, outcome, kind)

    def mark_unacknowledged_declined(self, pending: PendingCheckpoint) -> None:
        """PR, the CheckpointCanceller: every task that has not responded is marked declined
        (``markUnacknowledgedTasksAsDeclined``, raoraoxiong/flink fada049) and may still ack late."""
        pending.marked_declined |= pending.expected - set(pending.acks) - set(pending.declines)


    def subsumed_pending(self, checkpoint_id: int) -> list[PendingCheckpoint]:
        """The pending checkpoints older than ``checkpoint_id`` that its completion subsumes
        (``dropSubsumedCheckpoints``: ``getCheckpointID() < checkpointId && canBeSubsumed()``, not a
        savepoint), oldest first."""
        return [p for cid, p in sorted(self.pending.items()) if cid < checkpoint_id and not p.savepoint]


    def abort_all_pending(self, reason: str) -> list[tuple[PendingCheckpoint, CheckpointOutcome]]:
        """Every pending checkpoint aborted for ``reason`` (a failover: ``abortPendingCheckpoints``), oldest first."""
        out = []
        for pending in [p for _, p in sorted(self.pending.items())]:
            out.append((pending, self.abort(pending, self._undecided(pending, settled=False), reason)))
        return out

    def notifications(self, pending: PendingCheckpoint, kind: str) -> dict[Task, str]:
        """What each task would be told if N completed as ``kind`` now (the ``notify-before-metadata``
        mutant tells them before the metadata is written)."""
        grafted = pending.grafted if pending.grafted is not None else self.fallback
        failed = pending.decision.failed_regions if pending.decision is not None else ()
        return merge_entries(self.graph.tasks(), self.regions, failed, pending.acks, grafted, kind,
                             mutant=self.mutant)[1]


    def complete_copy(self, pending: PendingCheckpoint, outcome: CheckpointOutcome, kind: str):
        """The CompletedCheckpoint N would be as ``kind``, built without completing it (the ``_metadata`` a
        store failure then discards)."""
        grafted = pending.grafted if pending.grafted is not None else self.fallback
        entries, _ = merge_entries(self.graph.tasks(), self.regions, outcome.failed_regions, pending.acks, grafted,
                                   kind, mutant=self.mutant)
        coord_state = (pending.fallback_state if kind == REGIONAL and pending.fallback_state is not None
                       else pending.coordinator_snapshot or {})
        return completed_checkpoint(pending.checkpoint_id, kind, self.graph, entries, coord_state,
                                    self.counters.consecutive_regional, failed_regions=outcome.failed_regions,
                                    num_regions=self.num_regions)


class Savepoints(_Base):
    def trigger_savepoint(self) -> PendingCheckpoint:
        """A savepoint: never forced, never final, and it leaves the forced flag alone
        (``RegionalCheckpointHandler.checkAllSourcesFinishedAndForceGlobal`` skips
        ``props.isSavepoint()``, apache/flink 4e120137). It takes the next checkpoint id."""
        return self._pending(forced=False, final=False, savepoint=True)


    def _complete_savepoint(self, pending: PendingCheckpoint, outcome: CheckpointOutcome) -> CheckpointOutcome:
        """A savepoint every task acknowledged. It is not added to the CompletedCheckpointStore
        (``completePendingCheckpoint``: ``if (!props.isSavepoint())`` around the store), tasks
        are not notified (``cleanupAfterCompletedCheckpoint`` notifies for a savepoint only if
        synchronous), the failure count clears (``reportCompletedCheckpoint`` ->
        ``CheckpointFailureManager.handleCheckpointSuccess``), and the counters move as
        `CheckpointCounters.savepoint_completed` says."""
        self.counters.savepoint_completed(self.settings)
        states = {(op, t[1]): st for t, states in pending.acks.items() for op, st in states.items()}
        checkpoint = completed_checkpoint(pending.checkpoint_id, GLOBAL, self.graph, states,
                                          pending.coordinator_snapshot or {}, self.counters.consecutive_regional,
                                          failed_regions=(), num_regions=self.num_regions)
        return outcome.completed_as(GLOBAL, checkpoint, counter=self.counters.consecutive_regional)


class Restoring(_Base):
    def restore_region(self, region: int) -> dict[Task, States]:
        """Region failover: the region's tasks restart from their entries in the
        latest completed checkpoint (possibly older, referenced handles). A checkpoint taken at another
        parallelism (the job rescaled since, no checkpoint at the new one completed yet) is redistributed at
        the job's parallelism first, as for a global restore: the scheduler's local failover restores through
        ``CheckpointCoordinator.restoreLatestCheckpointedStateToSubtasks``, whose ``StateAssignmentOperation``
        assigns the checkpoint's state to every subtask of the restarted job vertices at their current
        parallelism (apache/flink ``SchedulerBase.restoreState``, eb0eaa329d613c0281d5dfe917ba9b2f2ac492bb). Under the PR the fallback table then
        holds the checkpoint's entries at its old indexes (F5, the regional graft); a restore never reads them."""
        tasks = [t for t, r in self.regions.items() if r == region]
        latest = self.store.latest()
        if latest is not None and any(latest.parallelism.get(op) != self.graph.vertex(v).parallelism
                                      for v, op in self.graph.operators()):
            redistributed, _ = assign_all(self.graph, self.operator_modes, latest, self.source_operator,
                                          mutant=self.mutant)
            out = {task: redistributed[task] for task in tasks}
        else:
            out = region_states(self.graph, self.operator_modes, latest, self.fallback, tasks)
        for task, states in out.items():
            self.finished.pop(task, None)
            self.source.subtask_reset(task, states)
        return out

    def restore_global(self, new_parallelism: int | None = None, fixed_vertices: tuple[str, ...] = ()) -> dict[Task, States]:
        """Global failover / rescale: every task restarts from the latest completed
        checkpoint L, redistributed when the parallelism changes."""
        latest = self.store.latest()
        if latest is None:
            raise RuntimeError("no completed checkpoint to restore from")
        if new_parallelism is not None:
            self._set_graph(self.graph.with_parallelism(new_parallelism, fixed_vertices))
        self.finished = {}
        restored, rescaled = assign_all(self.graph, self.operator_modes, latest, self.source_operator,
                                        mutant=self.mutant)
        self.fallback = fallback_after_restore(self.graph, latest, restored, rescaled=rescaled,
                                               pr=self.settings.semantics == PR)
        self.source.reset_to_checkpoint(latest.coordinator_state, restored, self.graph)
        return restored
