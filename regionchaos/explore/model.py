"""The control plane of a run without its data plane: what the explorer steps and copies.

In:  a Scenario the explorer covers (`regionchaos.explore.scope`), an optional mutant, and per checkpoint
     attempt its faults as explicit-schedule entries (`regionchaos.faultkinds.land` turns them into the
     attempt's `AttemptFaults`, exactly as a pinned run's `Nemesis` does).
Out: `Model`: the run between two choice points. `Model.step(faults)` runs attempt ``index`` from its
     interval (split assignment, the faults between checkpoints) to the next attempt's interval, and
     returns what happened on the way (`Step`: the decisions and restores in order, for the conformance
     check against the real emulation, and the explorer's own flip_bounds observations). `Model.clone()`
     copies it at a branch point. Its methods come in three parts, one module each, as the emulator's rooms:
     `model_trigger` (triggering), `model_checkpoint` (a checkpoint's life), `model_failover` (faults at their
     instants, failures and restarts), `model_input` (a bounded job's input: the end of input, finished tasks,
     the job's end); `model_base` holds the event kinds, `Attempt` and `Step`. A run whose job finished
     (``done``) has no next choice point.

The decisions are the real protocol rooms': the CheckpointCoordinator (its decision rules, counters, store,
fallback table, split enumerator) is the one `regionchaos.emulator.Emulation` builds, called with the same
arguments at the same instants. What this module restates is *when* the event simulation calls them
(`regionchaos.triggering`, `regionchaos.checkpointing`, `regionchaos.instants`, `regionchaos.failover`),
method for method, with the data plane left out: no records, sink transactions, state rows, history or
notifications. Nothing the data plane does reaches a decision in the configurations the explorer accepts,
except with bounded sources the end of input: there the model keeps the emulator's own data flow (positions
only; `model_input`), whose positions decide the final checkpoint, the sources that finish and the job's end
(`scope.refuse` names what it admits). The event queue holds plain data (kind, arguments), so a copy is cheap. Each method says which method of the emulator it restates;
`regionchaos.explore.judging` re-runs every representative through the real emulator and compares its
decisions with the ones predicted here, so a drift between the two ends a run as unknown, never as valid.

The two mutants that live in the emulator's rooms and change a decision are switched here the same way:
``failover-keeps-pending`` (a failover leaves the pending checkpoints alone) and ``metadata-before-state``
(a JobManager crash between state upload and metadata commit completes the checkpoint first). Every other
mutant either lives in the protocol rooms called here or changes only the data plane, which the judged
representatives run for real.
"""

from __future__ import annotations

import copy
import heapq
from dataclasses import fields, replace
from typing import Any

from ..emulator import job_graph
from ..faultkinds import AttemptFaults, land
from ..nemesis import Nemesis
from ..protocol.checkpoint import CompletedCheckpoint
from ..protocol.coordinator import CheckpointCoordinator, CoordinatorSettings
from ..protocol.enumerator import SplitEnumerator
from ..protocol.store import CompletedCheckpointStore
from ..protocol.topology import Task
from ..scenario import Scenario
from ..workload.dataflow import OPERATOR_MODES, SOURCE
from .model_base import ARRIVE, CANCELLER, DUE, FALLBACK_DONE, FINALIZED, INTERVAL, LAND_REST, Attempt, Step
from .model_checkpoint import Checkpointing
from .model_failover import Failures
from .model_input import Input, new_flow
from .model_trigger import Triggering


class Model(Triggering, Checkpointing, Failures, Input):
    """The run, between two choice points; see the module docstring."""

    def __init__(self, scenario: Scenario, mutant: str | None = None):
        sc = scenario
        self.sc, self.mutant = sc, mutant
        self.settings = CoordinatorSettings(
            region_enabled=sc.region_enabled_effective, max_failure_ratio=sc.flink.max_failure_ratio,
            max_consecutive_failures=sc.flink.max_consecutive_failures,
            forced_global_policy=sc.flink.forced_global_policy, semantics=sc.flink.semantics,
            timeout_ms=sc.flink.timeout_ms, region_timeout_ms=sc.flink.region_timeout_ms,
            tolerable_failed_checkpoints=sc.flink.tolerable_failed_checkpoints)
        self.nemesis = Nemesis(sc)  # the seed's upload times: the same draws as the emulation's
        self.cache = _Cache()  # pure functions of their keys, shared by every copy
        self.tms = sc.topology.taskmanagers
        self.parallelism = sc.topology.parallelism
        self.now_ms = 0
        self.queue: list[tuple] = []
        self.seq = 0
        self.life = 0
        self.index = 0
        self.attempts: dict[int, Attempt] = {}
        self.faults: dict[int, AttemptFaults] = {}
        self.times: list[tuple[int, int]] = []  # (checkpoint id, trigger ms) of the last trigger only
        self.waiting: int | None = None
        self.deferred: int | None = None
        self.last_end_ms: int | None = None
        self.rescales = {e.after_checkpoint: e.parallelism for e in sc.rescale}
        self.awaiting_fallback: list[tuple[str, Any]] = []
        self.crashed_in: set[int] = set()
        self.storage: dict[int, CompletedCheckpoint] = {}  # the _metadata on storage (what a new JobManager reads)
        self.depth: dict[int, int] = {}  # completed checkpoint -> ref-chain depth (as flip_bounds computes it)
        self.streak = 0  # REGIONAL checkpoints completed since the last GLOBAL one
        self.flow = new_flow(sc, mutant)  # bounded sources: the data flow's positions (`model_input`), else None
        self.reported: dict[Task, int] = {}  # bounded: the newest checkpoint each task was told completed
        self.done = False  # bounded: the job finished (the run ends)
        self.coord = self._new_coordinator(CompletedCheckpointStore(sc.flink.num_retained, mutant=mutant,
                                                                    semantics=sc.flink.semantics),
                                           sc.first_checkpoint_id)
        self.coord.enumerator.add_splits(range(sc.workload.splits))
        self._assign_splits()
        self.step_out = Step()
        self._at(sc.flink.interval_ms // 2, INTERVAL, 0)
        self.run_to_choice()

    # -- copying and stepping ---------------------------------------------------------------

    def clone(self) -> Model:
        """A copy to step on; what no step changes in place (the scenario, settings, graphs, completed
        checkpoints and state objects) is shared."""
        new = copy.copy(self)
        memo = {id(o): o for o in self._shared()}
        (new.coord, new.queue, new.attempts, new.faults, new.times, new.rescales, new.awaiting_fallback,
         new.crashed_in, new.storage, new.depth, new.flow, new.reported) = copy.deepcopy(
            (self.coord, self.queue, self.attempts, self.faults, self.times, self.rescales, self.awaiting_fallback,
             self.crashed_in, self.storage, self.depth, self.flow, self.reported), memo)
        return new

    def _shared(self) -> list:
        c = self.coord
        out: list = [self.sc, self.settings, self.nemesis, self.cache, c.settings, c.graph, c.regions, c.vertex_of,
                     c.operator_modes]
        if self.flow is not None:
            out.append(self.flow.stats)
        out += c.store._retained + list(self.storage.values())
        out += [v for v in c.fallback.values()]
        for p in [a.pending for a in self.attempts.values()]:
            out += list(p.acks.values())
            if p.grafted is not None:
                out += list(p.grafted.values())
            if p.coordinator_snapshot is not None:
                out.append(p.coordinator_snapshot)
        return out

    def step(self, faults: list) -> Step:
        """Attempt ``self.index`` with ``faults`` (explicit-schedule entries: `regionchaos.scenario.ScheduledFault`
        or any object with its fields): from its interval to the next attempt's."""
        self.step_out = Step()
        self._choice = faults
        self._run_one()  # the interval itself: it draws ``faults``
        self._choice = None
        self.run_to_choice()
        return self.step_out

    def run_to_choice(self) -> None:
        """Run events until the next interval that draws an attempt's faults (one that would wait for a
        checkpoint to end is run: it only defers), or until nothing is left (the job finished: ``done``)."""
        while self.queue:
            _, _, kind, args = self.queue[0]
            if kind == INTERVAL and not (self.coord.pending and self.sc.flink.max_concurrent == 1):
                self.index = args[0]
                self.now_ms = self.queue[0][0]  # the choice point is the interval's instant (nothing runs before it)
                self._forget_ended()
                return
            self._run_one()

    def _forget_ended(self) -> None:
        """Drop what can no longer do anything: a response, a canceller or a finalization of a checkpoint
        that is no longer live (`_arrive`, `_canceller` and `_finalized` return at once for it: in the
        emulator a late acknowledgement is data only, `regionchaos.outcomes.late_ack`), and the records of
        attempts no queued event names. A fallback request and faults left to land stay."""
        dead = {cid for cid, a in self.attempts.items() if not self.live(a)}
        kept = [e for e in self.queue if not (e[2] in (ARRIVE, CANCELLER, FINALIZED) and e[3][0] in dead)]
        if len(kept) != len(self.queue):
            heapq.heapify(kept)
            self.queue = kept
        named = {e[3][0] for e in self.queue if e[2] in (ARRIVE, CANCELLER, FALLBACK_DONE, FINALIZED, LAND_REST)}
        self.attempts = {cid: a for cid, a in self.attempts.items() if cid not in dead or cid in named}
        self.faults = {i: f for i, f in self.faults.items() if i >= self.index - 1}

    def _run_one(self) -> None:
        time_ms, _, kind, args = heapq.heappop(self.queue)
        self.now_ms = time_ms
        getattr(self, "_" + kind)(*args)

    def _at(self, time_ms: int, kind: str, *args) -> None:
        heapq.heappush(self.queue, (max(int(time_ms), self.now_ms), self.seq, kind, args))
        self.seq += 1

    def _log(self, *entry) -> None:
        self.step_out.log.append(entry)

    def _shape(self, *entry) -> None:
        self.step_out.shape.append(entry)

    def _phases(self) -> tuple[str, ...]:
        return tuple(sorted(p.phase for p in self.coord.pending.values()))

    # -- the run (`regionchaos.emulator.Emulation`) ----------------------------------------------

    def _new_coordinator(self, store: CompletedCheckpointStore, next_id: int) -> CheckpointCoordinator:
        """`Emulation.new_coordinator`."""
        enumerator = SplitEnumerator(self.parallelism, supports_region_fallback=self.sc.topology.coordinator_fallback,
                                     mutant=self.mutant)
        return CheckpointCoordinator(job_graph(self.sc, self.parallelism), self.settings, store,
                                     operator_modes=OPERATOR_MODES, enumerator=enumerator,
                                     next_checkpoint_id=next_id, mutant=self.mutant)

    def _assign_splits(self) -> None:
        """`Emulation.assign_splits`: the enumerator's side (the readers are data, except a bounded job's:
        `Input._flow_assigned`)."""
        running = [sub for sub in range(self.parallelism) if (SOURCE, sub) not in self.coord.finished]
        self._flow_assigned(self.coord.enumerator.assign_pending(running))

    def _interval(self, index: int) -> None:
        """`Emulation.interval`."""
        if self.coord.pending and self.sc.flink.max_concurrent == 1:
            self.deferred = index
            return
        self.deferred = None
        self.index = index
        self._assign_splits()
        self._advance(index)
        faults = self.cache.faults(index, self._choice or (), self.coord, self.tms)
        self.faults[index] = faults
        if self._crash(faults):
            self._assign_splits()
            self._advance(index)
        previous = self.times[-1][1] if self.times else 0  # `Triggering.after_interval`
        self._at(max(self.now_ms, previous + self.sc.flink.interval_ms), DUE, index)


class _Cache:
    """What several copies of a run compute alike: the seed's upload times per attempt, the tasks' snapshot states
    (immutable), an action's faults per job shape (copied before use: landing a fault pops it)."""

    def __init__(self):
        self.uploads: dict[tuple, dict] = {}
        self.states: dict[tuple, dict] = {}
        self.landed: dict[tuple, AttemptFaults] = {}

    def upload_times(self, nemesis: Nemesis, index: int, expected: list[Task], limit_ms: int) -> dict:
        key = (index, tuple(expected), limit_ms)
        if key not in self.uploads:
            self.uploads[key] = nemesis.upload_times(index, expected, limit_ms)
        return self.uploads[key]

    def faults(self, index: int, entries, coord: CheckpointCoordinator, tms: int) -> AttemptFaults:
        key = (id(entries), tuple(coord.graph.tasks()), coord.num_regions)
        if key not in self.landed:
            present = {"task": set(coord.graph.tasks()), "region": coord.num_regions, "taskmanager": tms}
            self.landed[key] = (entries, land(index, list(entries), present))  # entries kept: their id stays theirs
        template = self.landed[key][1]
        return replace(template, **{f.name: copy.copy(getattr(template, f.name)) for f in fields(template)})
