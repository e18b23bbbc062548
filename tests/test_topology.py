"""Pipeline regions and FLIP-147 trigger roots."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regionchaos.protocol.topology import (
    ALL_TO_ALL,
    POINTWISE,
    JobEdge,
    JobGraph,
    JobVertex,
    pipeline_regions,
    tasks_to_trigger,
)


def _naive_roots(graph: JobGraph, running: set) -> set:
    """O(n^2) reference: a running task none of whose predecessors runs."""
    out = set()
    for v in graph.vertices:
        for i in range(v.parallelism):
            if (v.name, i) not in running:
                continue
            preds = []
            for e in graph.inputs(v.name):
                up = graph.vertex(e.source)
                preds += [(up.name, i)] if e.distribution == POINTWISE else [(up.name, j) for j in range(up.parallelism)]
            if not any(p in running for p in preds):
                out.add((v.name, i))
    return out


@st.composite
def graphs_and_running(draw):
    p = draw(st.integers(1, 5))
    n = draw(st.integers(1, 5))
    vertices = tuple(JobVertex(f"v{i}", p, (f"op{i}",)) for i in range(n))
    edges = []
    for j in range(1, n):
        for i in range(j):
            if draw(st.booleans()):
                edges.append(JobEdge(f"v{i}", f"v{j}", draw(st.sampled_from([POINTWISE, ALL_TO_ALL])), draw(st.booleans())))
    g = JobGraph(vertices, tuple(edges))
    running = {t for t in g.tasks() if draw(st.booleans())}
    return g, running


@settings(max_examples=300, deadline=None)
@given(graphs_and_running())
def test_linear_trigger_algorithm_matches_quadratic_reference(case):
    graph, running = case
    assert tasks_to_trigger(graph, running) == _naive_roots(graph, running)


def test_regions_forward_alltoall_blocking():
    fwd = JobGraph((JobVertex("a", 3, ("x",)), JobVertex("b", 3, ("y",))), (JobEdge("a", "b", POINTWISE),))
    regions = pipeline_regions(fwd)
    assert len(set(regions.values())) == 3 and regions[("a", 1)] == regions[("b", 1)] != regions[("a", 0)]
    a2a = JobGraph(fwd.vertices, (JobEdge("a", "b", ALL_TO_ALL),))
    assert len(set(pipeline_regions(a2a).values())) == 1
    blocking = JobGraph(fwd.vertices, (JobEdge("a", "b", ALL_TO_ALL, pipelined=False),))
    assert len(set(pipeline_regions(blocking).values())) == 6
