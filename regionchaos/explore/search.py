"""The search: every schedule of up to N checkpoint attempts, breadth first, one expansion per distinct state.

In:  a Scenario inside the explorer's scope (`regionchaos.explore.scope.refuse` passed), a mutant or None, N;
     optionally signature fields to leave out and an audit depth (`regionchaos.explore.signature`; the soundness
     tests use both).
Out: `search(...) -> Graph`: the distinct states (`Node`: signature, depth first reached, parent, the action from
     it, what that step did), how many schedules they stand for, the depth after which no new state appeared
     (the fixpoint) if it did, per explorer predicate its first violating transition, the first transition of
     each kind of step from each state (`Graph.kinds`), and the audit's findings.

How: breadth first from the run's first choice point. Each state's model is copied once per action
(`Model.clone`) and stepped to the next choice point; a successor whose signature was seen before is not
expanded again. Breadth first, so the first path that reaches a state, or first breaks a predicate, is a shortest
one; the actions are tried with the fewest faults first, so it is also a path with few faults. A schedule whose
fault placed at a region fallback did not land in its own attempt (the checkpoint never fell back) is not kept:
that fault would wait for a later attempt's fallback, which the same later attempt places itself. A state whose
job finished (bounded sources) is not expanded: the run ended there.

Kinds of step: two transitions from one state are of one kind when their steps have the same shape
(`regionchaos.explore.model.Step.shape`: the decisions with what they read, the restores with the phases they
interrupted) and the same flip_bounds observations. The first of each kind is judged besides the states' own
paths, so a wrong decision that lands in a state reached before (a mutant's REGIONAL over the failure ratio lands
where a correct REGIONAL does) is still judged, and so is each way a failure meets a pending checkpoint. With the
reduced action set, the schedule language's other actions (`scope.Choices.probes`: every failure kind at every
instant) are tried from every state for their kinds only; one that reaches a state the reduced set did not is
reported as a mismatch (the reduction's own check).

The explorer's own predicates are flip_bounds' two claims (`PREDICATES`), checked at every completion of every
transition: at most max-consecutive-failures REGIONAL checkpoints in a row since the last GLOBAL one, and no ref
chain deeper than max-consecutive-failures. They prune nothing; they pick extra representatives (a violating
transition into a state first reached another way), and they are the invariant whose verdict the signature
decides. The verdicts themselves are the GX suites' (`regionchaos.explore.judging`).

The audit (``audit=D``): every time a transition within the first D attempts reaches a state seen before, the
model it brought is expanded too, and its successors' signatures (and predicate observations) must be the ones
the first model of that state had. A mismatch means the signature merges two runs whose futures differ.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from ..scenario import Scenario
from .model import Model, Step
from .scope import Action, Choices
from .signature import signature

# the explorer's predicates: GX rule (invariant.rule) -> which value of a completion (streak, depth) it bounds
PREDICATES = {"flip_bounds.consecutive_regional_within_bound": 0, "flip_bounds.ref_chain_depth_within_bound": 1}
MAX_KINDS = 1500  # transitions judged besides the states' own (breadth first: the shallowest kinds first)


@dataclass
class Node:
    sig: tuple
    depth: int
    parent: int | None
    action: Action | None
    step: Step | None


@dataclass
class Transition:
    """A step from node ``parent`` by ``action`` into node ``into`` (the first violating one of a predicate, or the
    first of its kind)."""

    parent: int
    action: Action
    step: Step
    into: int | None


@dataclass
class Graph:
    max_checkpoints: int
    full: bool  # every action of the schedule language was tried (else one per class: `Choices`)
    nodes: list[Node] = field(default_factory=list)
    edges: dict[int, Counter] = field(default_factory=dict)  # node -> successor node -> actions leading there
    weight: dict[int, float] = field(default_factory=dict)  # node -> schedule-language actions per explored action
    violations: dict[str, Transition] = field(default_factory=dict)
    kinds: list[Transition] = field(default_factory=list)  # one step of each kind from each state (`search`)
    fixpoint: int | None = None  # the depth whose states brought no new one (None: still growing at N)
    ended: set[int] = field(default_factory=set)  # states whose job finished (bounded sources): no next attempt
    transitions: int = 0
    discarded: int = 0  # transitions whose fallback fault did not land in its own attempt
    mismatches: list[str] = field(default_factory=list)  # the audit's
    reached: dict = field(default_factory=dict)  # every successor's whole signature (with ``without``: the fields
    # left out too) -> the depth it was first reached at
    wall_seconds: float = 0.0

    def path(self, node: int) -> list[Action]:
        """The actions from the root to ``node`` (one per attempt)."""
        out = []
        while self.nodes[node].parent is not None:
            out.append(self.nodes[node].action)
            node = self.nodes[node].parent
        return out[::-1]

    def log(self, node: int) -> list[tuple]:
        """What the steps on the path to ``node`` did, in order (the predicted decisions and restores)."""
        steps = []
        while self.nodes[node].parent is not None:
            steps.append(self.nodes[node].step)
            node = self.nodes[node].parent
        return [entry for step in steps[::-1] for entry in step.log]

    def schedules(self) -> float:
        """How many schedules of ``max_checkpoints`` attempts the states stand for: paths counted over the
        transitions depth by depth, each explored action weighted by the schedule-language actions it stands for
        (1 with the full set; the reduced set's classes are spread evenly, exact while every state of a depth
        has the same job shape). A schedule on which the job finished ends there: it is counted once."""
        count = {0: 1.0}
        for _ in range(self.max_checkpoints):
            nxt: Counter = Counter()
            for node, n in count.items():
                if node in self.ended:
                    nxt[node] += n
                    continue
                for succ, mult in self.edges.get(node, {}).items():
                    nxt[succ] += n * mult * self.weight.get(node, 1.0)
            count = nxt
        return sum(count.values())


def search(scenario: Scenario, mutant: str | None, max_checkpoints: int, *, without: frozenset[str] = frozenset(),
           full: bool | None = None, audit: int = 0, kinds: int = MAX_KINDS, progress=None) -> Graph:
    """See the module docstring. ``full``: force the full action set (or the reduced one); ``kinds``: at most this
    many transitions judged for their kind (0: none)."""
    started = time.perf_counter()
    choices = Choices(scenario, mutant)
    if full is not None:
        choices.full = full
    one_at_a_time = scenario.flink.max_concurrent == 1
    root = Model(scenario, mutant)
    graph = Graph(max_checkpoints, choices.full)
    graph.nodes.append(Node(signature(root, without), 0, None, None, None))
    graph.reached[signature(root)] = 0
    seen = {graph.nodes[0].sig: 0}
    kept = {0: root}  # the first model of each state within the audit depth
    cap = scenario.flink.max_consecutive_failures + 1
    seen_kinds: set[tuple] = set()
    frontier = [(0, root)]
    for depth in range(max_checkpoints):
        nxt = []
        for node_id, model in frontier:
            if model.done:  # the job finished: no next attempt
                continue
            actions = _actions(choices, model)
            graph.weight[node_id] = choices.count(*_shape(model)) / len(actions)
            out = graph.edges.setdefault(node_id, Counter())
            for action, succ, step in _expand(model, actions, one_at_a_time, graph):
                sig = signature(succ, without)
                graph.reached.setdefault(signature(succ) if without else sig, depth + 1)
                into = seen.get(sig)
                kind = (node_id, tuple(step.shape), observed(step, cap))
                if into is None:
                    into = seen[sig] = len(graph.nodes)
                    graph.nodes.append(Node(sig, depth + 1, node_id, action, step))
                    nxt.append((into, succ))
                    if succ.done:
                        graph.ended.add(into)
                    if depth + 1 <= audit:
                        kept[into] = succ
                else:
                    if kind not in seen_kinds and len(graph.kinds) < kinds:
                        graph.kinds.append(Transition(node_id, action, step, into))
                    if depth + 1 <= audit and depth + 1 < max_checkpoints and into in kept:
                        _audit(graph, choices, kept[into], succ, into, one_at_a_time, without)
                seen_kinds.add(kind)
                out[into] += 1
                for rule, which in PREDICATES.items():
                    if rule not in graph.violations and any(
                            c[which] > scenario.flink.max_consecutive_failures for c in step.completions):
                        graph.violations[rule] = Transition(node_id, action, step, into)
            if not graph.full and kinds:  # the schedule language's other actions, for their kinds of step only
                _probe(graph, model, node_id, choices, seen, seen_kinds, one_at_a_time, without, cap, kinds)
        if progress is not None:
            progress(depth + 1, len(graph.nodes), graph.transitions)
        if not nxt:
            graph.fixpoint = depth + 1
            break
        frontier = nxt
    graph.wall_seconds = round(time.perf_counter() - started, 2)
    return graph


def _probe(graph: Graph, model: Model, node_id: int, choices: Choices, seen: dict, seen_kinds: set,
           one_at_a_time: bool, without: frozenset[str], cap: int, kinds: int) -> None:
    """The probes from one state (`scope.Choices.probes`): each new kind of step is judged; a probe that reaches a
    state the reduced actions did not reach is a mismatch of the reduction."""
    for action, succ, step in _expand(model, choices.probes(*_shape(model)), one_at_a_time, graph):
        into = seen.get(signature(succ, without))
        if into is None:
            graph.mismatches.append(f"state {node_id}: {action.describe()} reaches a state no reduced action reaches")
            continue
        kind = (node_id, tuple(step.shape), observed(step, cap))
        if kind not in seen_kinds and len(graph.kinds) < kinds:
            graph.kinds.append(Transition(node_id, action, step, into))
        seen_kinds.add(kind)


def _shape(model: Model) -> tuple:
    """What the actions at a model's choice point depend on: its graph, regions and finished tasks."""
    return model.coord.graph, model.coord.regions, frozenset(model.coord.finished)


def _actions(choices: Choices, model: Model) -> list[Action]:
    graph, regions, finished = _shape(model)
    return choices.actions(graph, regions, finished=finished)


def observed(step: Step, cap: int) -> tuple:
    """What the predicates see of a step's completions: each (streak, depth), capped as the signature caps them."""
    return tuple((min(streak, cap), min(depth, cap)) for streak, depth in step.completions)


def _expand(model: Model, actions: list[Action], one_at_a_time: bool, graph: Graph):
    """(action, successor model, step) for each action kept (see the module docstring on fallback faults)."""
    for action in actions:
        succ = model.clone()
        step = succ.step(action.faults)
        graph.transitions += 1
        if one_at_a_time and succ.awaiting_fallback:
            graph.discarded += 1
            continue
        yield action, succ, step


def _audit(graph: Graph, choices: Choices, first: Model, other: Model, node: int, one_at_a_time: bool,
           without: frozenset[str]) -> None:
    """``other`` reached the state of ``first``: both must have the same successors and predicate observations."""
    def successors(model: Model) -> set:
        if model.done:
            return set()
        actions = _actions(choices, model)
        cap = model.settings.max_consecutive_failures + 1
        return {(a.entries, signature(s, without), observed(st, cap)) for a, s, st in
                _expand(model, actions, one_at_a_time, graph)}

    mine, theirs = successors(first), successors(other)
    if mine != theirs:
        diff = sorted(mine ^ theirs, key=repr)[0]
        graph.mismatches.append(f"state {node} (depth {graph.nodes[node].depth}): two runs with its signature "
                                f"differ after {diff[0] or 'every region acks'}")
