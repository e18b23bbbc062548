"""Which state each task starts from on a restore (Flink's ``StateAssignmentOperation``,
PROTOCOL.md section 5).

In:  the job graph at the parallelism it restarts with, each operator's redistribution mode,
     the completed checkpoint it restores from, and on a region failover the coordinator's
     fallback table.
Out: per task, its operators' OperatorSubtaskStates: the task's own entries, every subtask's
     union list, or the entries redistributed to a new parallelism, with channel state
     following its channel (split) to the subtask that now reads it; on a region failover, the
     region's tasks' fallback entries; and the fallback table (what each task falls back to in
     a regional checkpoint) after a completion or a global restore.

Pure: the coordinator decides when to restore and keeps the fallback table.
"""

from __future__ import annotations

from .checkpoint import CompletedCheckpoint
from .state import UNION, OperatorSubtaskState, assign_channel_state, redistribute_handles
from .topology import JobGraph, Task

States = dict[str, OperatorSubtaskState]  # operator -> state of one task


def task_states(graph: JobGraph, cp: CompletedCheckpoint, task: Task) -> States | None:
    """The task's entries in ``cp``; None if it has none (Flink restores such a subtask empty)."""
    vertex, sub = task
    ops = graph.vertex(vertex).operators
    if any((op, sub) not in cp.operator_states for op in ops):
        return None
    return {op: cp.operator_states[(op, sub)] for op in ops}


def fallback_table(graph: JobGraph, cp: CompletedCheckpoint, *, gaps_allowed: bool) -> dict[Task, tuple[States, int]]:
    """What each task falls back to in a regional checkpoint after ``cp`` completed: its entries
    there and ``cp``'s id. A task with no entry is left out when ``gaps_allowed`` (only the PR's
    fallback lookup can leave a gap), else that is an error. The PR grafts per operator and
    subtask index (`regionchaos.protocol.merge`); here every operator of a job vertex has the
    vertex's parallelism and a task writes all its operators' entries together, so a task has
    an entry for all of its operators or for none, and per task is per operator."""
    table = {}
    for t in graph.tasks():
        states = task_states(graph, cp, t)
        if states is not None:
            table[t] = (states, cp.checkpoint_id)
        elif not gaps_allowed:
            raise KeyError(f"checkpoint {cp.checkpoint_id} has no entry for {t}")
    return table


def fallback_after_restore(graph: JobGraph, latest: CompletedCheckpoint, restored: dict[Task, States], *,
                           rescaled: bool, pr: bool) -> dict[Task, tuple[States, int]]:
    """The fallback table after a global restore from ``latest`` into ``restored``. Rescaled
    under the FLIP: a new subtask that fails its first checkpoint falls back to its redistributed
    restored state, ref = the checkpoint restored from. Otherwise ``latest``'s own entries (the
    PR, as implemented, after a rescale too: the failed subtask's index in L, at L's old
    parallelism)."""
    if rescaled and not pr:
        return {t: (states, latest.checkpoint_id) for t, states in restored.items()}
    return fallback_table(graph, latest, gaps_allowed=pr)


def region_states(graph: JobGraph, operator_modes: dict[str, str], latest: CompletedCheckpoint | None,
                  fallback: dict[Task, tuple[States, int]], tasks: list[Task]) -> dict[Task, States]:
    """What each of ``tasks`` restarts from on a region failover: its fallback entry (its
    entries in the latest completed checkpoint, possibly older, referenced handles), empty
    without one; union state from every subtask of ``latest``, always (StateAssignmentOperation)."""
    out = {}
    for task in tasks:
        states = fallback[task][0] if task in fallback else empty_states(graph, task)
        if latest is not None:
            states = {**states, **union_lists(graph, operator_modes, latest, task)}
        out[task] = states
    return out


def source_splits(states_by_task: dict[Task, States], source_vertex: str, source_operator: str) -> dict[int, list]:
    """The splits each source subtask's states hold, by subtask index."""
    return {sub: list(states[source_operator].elements) for (v, sub), states in states_by_task.items()
            if v == source_vertex}


def empty_states(graph: JobGraph, task: Task) -> States:
    return {op: OperatorSubtaskState(()) for op in graph.vertex(task[0]).operators}


def union_lists(graph: JobGraph, operator_modes: dict[str, str], cp: CompletedCheckpoint, task: Task) -> States:
    """Each union operator of the task's vertex: every subtask's list in ``cp``, concatenated
    in subtask order (Flink repartitions union state on every restore, rescaled or not)."""
    out = {}
    for op in graph.vertex(task[0]).operators:
        if operator_modes.get(op) != UNION:
            continue
        p = cp.parallelism.get(op, 0)
        handles = tuple(h for i in range(p) for h in cp.operator_states.get((op, i), OperatorSubtaskState(())).handles)
        out[op] = OperatorSubtaskState(handles)
    return out


def assign_all(graph: JobGraph, operator_modes: dict[str, str], latest: CompletedCheckpoint,
               source_operator: str, *, mutant: str | None) -> tuple[dict[Task, States], bool]:
    """Every task's state after a global restore from ``latest`` at the graph's parallelism, and
    whether any operator's parallelism changed (redistributed by its mode when it did, and
    union state always)."""
    restored: dict[Task, States] = {t: {} for t in graph.tasks()}
    rescaled = False
    for vertex, op in graph.operators():
        old_p = latest.parallelism[op]
        new_p = graph.vertex(vertex).parallelism
        old_states = [latest.operator_states.get((op, i), OperatorSubtaskState(())) for i in range(old_p)]
        mode = operator_modes[op]
        if old_p == new_p and mode != UNION:
            parts = [s.handles for s in old_states]
        else:
            parts = redistribute_handles(old_states, new_p, mode, mutant=mutant)
        rescaled = rescaled or old_p != new_p
        for i, handles in enumerate(parts):
            restored[(vertex, i)][op] = OperatorSubtaskState(handles=handles)
    _assign_channel_state(graph, latest, restored, source_operator)
    return restored, rescaled


def _assign_channel_state(graph: JobGraph, latest: CompletedCheckpoint, restored: dict[Task, States],
                          source_operator: str) -> None:
    """Channel state follows its channel (split) to the subtask that now reads it."""
    if not any(s.channel_state for s in latest.operator_states.values()):
        return
    source_vertex = next(v for v, op in graph.operators() if op == source_operator)
    owner = {split: sub for (v, sub), states in restored.items() if v == source_vertex
             for split in states[source_operator].elements}
    for vertex, op in graph.operators():
        old = [s for (o, _), s in latest.operator_states.items() if o == op]
        if not any(s.channel_state for s in old):
            continue
        parts = assign_channel_state(old, owner.__getitem__, graph.vertex(vertex).parallelism)
        for i, channels in enumerate(parts):
            st = restored[(vertex, i)][op]
            restored[(vertex, i)][op] = OperatorSubtaskState(st.handles, channels)
