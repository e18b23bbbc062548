"""Job graph, pipeline regions and FLIP-147 trigger roots.

In:  job vertices (name, parallelism, operators) and job edges (POINTWISE or
     ALL_TO_ALL, PIPELINED or BLOCKING/HYBRID).
Out: the pipeline regions of the execution graph (subtasks joined by pipelined
     edges) and, given which subtasks are still running, the subtasks the
     CheckpointCoordinator must trigger (FLIP-147 appendix 1, linear time).

A task is ``(vertex_name, subtask_index)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

Task = tuple[str, int]

POINTWISE = "POINTWISE"
ALL_TO_ALL = "ALL_TO_ALL"


@dataclass(frozen=True)
class JobVertex:
    name: str
    parallelism: int
    operators: tuple[str, ...]


@dataclass(frozen=True)
class JobEdge:
    source: str
    target: str
    distribution: str = POINTWISE  # POINTWISE (forward) or ALL_TO_ALL (rebalance/keyBy)
    pipelined: bool = True  # False for BLOCKING / HYBRID result partitions


@dataclass(frozen=True)
class JobGraph:
    vertices: tuple[JobVertex, ...]
    edges: tuple[JobEdge, ...] = ()
    _index: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        names = [v.name for v in self.vertices]
        if len(set(names)) != len(names):
            raise ValueError("job vertex names must be unique")
        self._index.update({v.name: v for v in self.vertices})
        for e in self.edges:
            if e.source not in self._index or e.target not in self._index:
                raise ValueError(f"edge {e.source}->{e.target} names an unknown vertex")
            if e.distribution == POINTWISE and self._index[e.source].parallelism != self._index[e.target].parallelism:
                raise ValueError(f"POINTWISE edge {e.source}->{e.target} needs equal parallelism")

    def vertex(self, name: str) -> JobVertex:
        return self._index[name]

    def tasks(self) -> list[Task]:
        return [(v.name, i) for v in self.vertices for i in range(v.parallelism)]

    def operators(self) -> list[tuple[str, str]]:
        """(vertex, operator) pairs in topological order of declaration."""
        return [(v.name, op) for v in self.vertices for op in v.operators]

    def inputs(self, name: str) -> list[JobEdge]:
        return [e for e in self.edges if e.target == name]

    def with_parallelism(self, parallelism: int, fixed: Iterable[str] = ()) -> JobGraph:
        """The same graph rescaled: every vertex not in ``fixed`` gets ``parallelism``."""
        fixed = set(fixed)
        return JobGraph(
            tuple(v if v.name in fixed else JobVertex(v.name, parallelism, v.operators) for v in self.vertices),
            self.edges,
        )

    def has_blocking_edges(self) -> bool:
        return any(not e.pipelined for e in self.edges)


def pipeline_regions(graph: JobGraph) -> dict[Task, int]:
    """Map every task to its pipeline region id (0..R-1, ordered by first task).

    Subtasks connected by pipelined edges share a region: a POINTWISE edge joins
    subtask i upstream with subtask i downstream; an ALL_TO_ALL edge joins every
    subtask of both vertices. BLOCKING/HYBRID edges do not join regions.
    """
    parent: dict[Task, Task] = {t: t for t in graph.tasks()}

    def find(t: Task) -> Task:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    def union(a: Task, b: Task) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    for e in graph.edges:
        if not e.pipelined:
            continue
        src, dst = graph.vertex(e.source), graph.vertex(e.target)
        if e.distribution == POINTWISE:
            for i in range(src.parallelism):
                union((src.name, i), (dst.name, i))
        else:
            anchor = (src.name, 0)
            for i in range(src.parallelism):
                union(anchor, (src.name, i))
            for i in range(dst.parallelism):
                union(anchor, (dst.name, i))
    ids: dict[Task, int] = {}
    out: dict[Task, int] = {}
    for t in graph.tasks():
        root = find(t)
        if root not in ids:
            ids[root] = len(ids)
        out[t] = ids[root]
    return out


def tasks_to_trigger(graph: JobGraph, running: set[Task]) -> set[Task]:
    """Running tasks with no running precedent task (FLIP-147 appendix 1).

    Linear in the size of the graph: a vertex is skipped by the fast check when
    an ALL_TO_ALL input has some running task, or a POINTWISE input has all of
    its tasks running; otherwise only POINTWISE predecessors are inspected.
    """
    out: set[Task] = set()
    for v in graph.vertices:
        running_here = [i for i in range(v.parallelism) if (v.name, i) in running]
        if not running_here:
            continue
        skip = False
        pointwise_inputs = []
        for e in graph.inputs(v.name):
            up = graph.vertex(e.source)
            up_running = sum(1 for i in range(up.parallelism) if (up.name, i) in running)
            if (e.distribution == ALL_TO_ALL and up_running > 0) or (
                e.distribution == POINTWISE and up_running == up.parallelism
            ):
                skip = True
                break
            if e.distribution == POINTWISE:
                pointwise_inputs.append(up.name)
        if skip:
            continue
        for i in running_here:
            if not any((u, i) in running for u in pointwise_inputs):
                out.add((v.name, i))
    return out
