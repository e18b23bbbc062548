"""The CheckpointCoordinator's side of the source's OperatorCoordinator (Flink's
``OperatorCoordinatorHolder``): what it asks of the split enumerator, in the job's terms.

In:  the split enumerator (or None: a job without one), the source operator and its job
     vertex; per call the tasks' states (acks, fallback entries, restored states), the failed
     source subtasks and, under ``pr``, the fallback checkpoint's id.
Out: the enumerator's snapshot for checkpoint N, its region-fallback state for the mixed view of
     a regional checkpoint (None: it cannot produce one), and the enumerator reset to a
     restored state: a failed region's splits handed back, or the whole job's after a global
     restore. Without an enumerator: no snapshot, an empty fallback state, nothing to reset.
"""

from __future__ import annotations

from collections.abc import Iterable

from .assignment import States, source_splits
from .enumerator import SplitEnumerator
from .gateway import Gateways
from .topology import JobGraph, Task


class OperatorCoordinatorHolder:
    def __init__(self, enumerator: SplitEnumerator | None, source_operator: str, source_vertex: str | None):
        """``source_vertex``: the job vertex of ``source_operator`` (None: the job has none, and
        then no enumerator)."""
        self.enumerator = enumerator
        self.source_operator = source_operator
        self.source_vertex = source_vertex
        self.gateways = Gateways()

    def snapshot(self, checkpoint_id: int) -> dict | None:
        """The coordinator's state for checkpoint ``checkpoint_id`` (taken at the trigger)."""
        return self.enumerator.checkpoint_coordinator(checkpoint_id) if self.enumerator else None

    def region_fallback(self, acks: dict[Task, States], fallback: dict[Task, tuple[States, int]],
                        failed: Iterable[Task], *, hand_back_after: int | None, live: bool = False,
                        at_trigger: dict | None = None) -> tuple[dict | None, bool]:
        """(the state for the mixed view, can the regional checkpoint complete). The mixed view:
        the healthy tasks' acks, the failed tasks' fallback entries. ``hand_back_after`` (PR: the
        fallback checkpoint's id): the failed subtasks' splits assigned after it go back to the
        live enumerator now. ``live`` (PR): the state is the live enumerator's snapshot after that
        hand-back (see `SplitEnumerator.checkpoint_coordinator_for_region_fallback`). ``at_trigger``
        (the ``fallback-at-trigger`` mutant): that snapshot, taken at the trigger, stands instead."""
        if self.enumerator is None:
            return None, True
        failed = list(failed)
        merged = {t: fallback[t][0] for t in failed if t in fallback}
        hand_back = {}
        if hand_back_after is not None:
            hand_back = {"hand_back_after": hand_back_after,
                         "failed_subtasks": [t[1] for t in failed if t[0] == self.source_vertex]}
        state = self.enumerator.checkpoint_coordinator_for_region_fallback(
            source_splits({**acks, **merged}, self.source_vertex, self.source_operator), live=live, **hand_back)
        if state is not None and at_trigger is not None:
            state = at_trigger
        return state, state is not None

    def subtask_reset(self, task: Task, states: States) -> None:
        """A source subtask restarts from ``states`` (region failover): the splits it read since
        go back to the enumerator."""
        if self.enumerator is not None and task[0] == self.source_vertex:
            self.gateways.reset(task[1])
            self.enumerator.add_splits_back(task[1], states[self.source_operator].elements)

    def reset_to_checkpoint(self, coordinator_state: dict, restored: dict[Task, States], graph: JobGraph) -> None:
        """Global restore: the enumerator rebuilt from its checkpointed state and the restored
        source subtasks' splits, at the source's parallelism in ``graph`` (the job restarted)."""
        self.gateways.reset_all()
        if self.enumerator is not None:
            splits = source_splits(restored, self.source_vertex, self.source_operator)
            self.enumerator.reset_to_checkpoint(coordinator_state, splits, graph.vertex(self.source_vertex).parallelism)
