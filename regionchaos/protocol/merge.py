"""The pre-merged CompletedCheckpoint of FLIP-600: healthy tasks' fresh entries and failed
regions' references, and what each task is told (PROTOCOL.md sections 3.2 and 4).

In:  the tasks (in the graph's order) and their regions, the checkpoint's failed regions, the acks of the pending
     checkpoint, each task's fallback (its states in the latest completed checkpoint and that
     checkpoint's id), and the checkpoint's kind.
Out: the entries keyed (operator, subtask index) and each task's notification; and the
     CompletedCheckpoint built from the entries (with every operator's parallelism, the source
     coordinator's state and the counter after the completion).

Pure: the coordinator decides the kind; this puts the checkpoint together.

The fallback is grafted per operator and subtask index, and only where the fallback has an
entry: apache/flink's ``RegionalCheckpointHandler.tryCompleteRegionalCheckpoint`` step 11 (commit
4e12013748c0af9c17eeafb5b6c28d1806f51973) puts ``lastState.getState(subtaskIdx)`` over the pending
checkpoint's entry only when it is not null, so where the last completed checkpoint has no entry
for (operator, index), e.g. a subtask index that did not exist before an upscale, a failed-region
task that acknowledged keeps its fresh entry, and one that declined has none. Under the FLIP the
fallback table is complete (PROTOCOL.md 3.4 and 5: L's entry, or after a rescale the restored
state), so there every failed-region entry is a reference.
"""

from __future__ import annotations

from dataclasses import replace

from .assignment import States
from .checkpoint import GLOBAL, CompletedCheckpoint
from .state import OperatorSubtaskState
from .topology import JobGraph, Task

# notification kinds
N_COMPLETE = "complete"
N_REGIONAL_COMPLETE = "regional-complete"
N_FALLBACK = "fallback"
N_ABORTED = "aborted"


def merge_entries(tasks: list[Task], regions: dict[Task, int], failed_regions: tuple[int, ...], acks: dict[Task, States],
                  fallback: dict[Task, tuple[States, int]], kind: str, *, mutant: str | None
                  ) -> tuple[dict[tuple[str, int], OperatorSubtaskState], dict[Task, str]]:
    """(entries, notifications). A task of a failed region keeps its fallback states as
    references to the checkpoint they came from and is told ``fallback`` (it commits nothing);
    where its fallback has no entry for an operator (the PR's lookup after an upscale) its ack,
    if it acknowledged, stays fresh. Every other task contributes its ack and is told
    ``complete`` or ``regional-complete``."""
    failed = set(failed_regions)
    entries = {}
    notifications = {}
    for task in tasks:
        if regions[task] in failed:
            grafted, ref = fallback.get(task, ({}, None))
            states = {op: st for op, st in acks.get(task, {}).items() if op not in grafted}
            states.update({op: st.as_reference(ref) for op, st in grafted.items()})
            notifications[task] = N_COMPLETE if mutant == "failed-region-commits" else N_FALLBACK
        else:
            states = acks[task]
            notifications[task] = N_COMPLETE if kind == GLOBAL else N_REGIONAL_COMPLETE
        for op, st in states.items():
            entries[(op, task[1])] = st
    return entries, notifications


def completed_checkpoint(checkpoint_id: int, kind: str, graph: JobGraph,
                         operator_states: dict[tuple[str, int], OperatorSubtaskState], coordinator_state: dict,
                         consecutive_regional: int, *, failed_regions: tuple[int, ...],
                         num_regions: int) -> CompletedCheckpoint:
    """The CompletedCheckpoint of ``kind`` with these entries, every operator's parallelism in
    ``graph``, the source coordinator's state, and the counter after the completion."""
    return CompletedCheckpoint(
        checkpoint_id=checkpoint_id,
        checkpoint_type=kind,
        parallelism={op: graph.vertex(v).parallelism for v, op in graph.operators()},
        operator_states=operator_states,
        coordinator_state=coordinator_state,
        consecutive_regional=consecutive_regional,
        failed_regions=failed_regions,
        num_regions=num_regions,
    )


def unacknowledged_at_old_parallelism(graph: JobGraph, store, pending, cp: CompletedCheckpoint) -> CompletedCheckpoint:
    """PR: an operator none of whose subtasks acknowledged N has no OperatorState in the pending
    checkpoint; the graft then builds one with the fallback checkpoint's parallelism, not the job's
    (``RegionalCheckpointHandler.tryCompleteRegionalCheckpoint`` step 11, the ``lastState != null &&
    currentState == null`` branch: ``new OperatorState(null, null, opId, lastState.getParallelism(),
    lastState.getMaxParallelism())``, apache/flink 4e12013748c0af9c17eeafb5b6c28d1806f51973). After a
    rescale N's metadata then names the old parallelism for it, with entries at the new indices."""
    acked = {t[0] for t in pending.acks}
    refs = {ref for _, ref in (pending.grafted or {}).values()}
    last = store.get(max(refs)) if refs else None
    if last is None:
        return cp
    old = {op: last.parallelism[op] for v, op in graph.operators() if v not in acked and op in last.parallelism}
    if all(cp.parallelism[op] == p for op, p in old.items()):
        return cp
    return replace(cp, parallelism={**cp.parallelism, **old})
