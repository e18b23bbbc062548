"""The control plane of a run without its data plane: what the explorer steps and copies.

In:  a Scenario the explorer covers (`regionchaos.explore.scope`), an optional mutant, and per checkpoint
     attempt its faults as explicit-schedule entries (`regionchaos.faultkinds.land` turns them into the
     attempt's `AttemptFaults`, exactly as a pinned run's `Nemesis` does).
Out: `Model`: the run between two choice points. `Model.step(faults)` runs attempt ``index`` from its
     interval (split assignment, the faults between checkpoints) to the next attempt's interval, and
     returns what happened on the way (`Step`: the decisions and restores in order, for the conformance
     check against the real emulation, and the explorer's own flip_bounds observations). `Model.clone()`
     copies it at a branch point.

The decisions are the real protocol rooms': the CheckpointCoordinator (its decision rules, counters, store,
fallback table, split enumerator) is the one `regionchaos.emulator.Emulation` builds, called with the same
arguments at the same instants. What this module restates is *when* the event simulation calls them
(`regionchaos.triggering`, `regionchaos.checkpointing`, `regionchaos.instants`, `regionchaos.failover`),
method for method, with the data plane left out: no records, sink transactions, state rows, history or
notifications. Nothing the data plane does reaches a decision in the configurations the explorer accepts
(unbounded sources: no end of input; `scope.refuse` names the rest), and the event queue holds plain
data (kind, arguments), so a copy is cheap. Each method says which method of the emulator it restates;
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
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..emulator import job_graph
from ..faultkinds import AttemptFaults, land
from ..nemesis import Nemesis
from ..protocol.checkpoint import GLOBAL, REGIONAL, CompletedCheckpoint
from ..protocol.coordinator import (ABORTED, CheckpointCoordinator, CheckpointOutcome, CoordinatorSettings,
                                    PendingCheckpoint)
from ..protocol.enumerator import SplitEnumerator
from ..protocol.rules import PR, R_FAILOVER, R_SUBSUMED, UNCOUNTED
from ..protocol.state import OperatorSubtaskState, StateHandle
from ..protocol.store import CompletedCheckpointStore
from ..protocol.topology import Task
from ..scenario import Partitioning, Scenario
from ..task_side import object_key
from ..workload.dataflow import OPERATOR_MODES, SOURCE

# the events of the queue, as the emulator's actions: (time_ms, seq, kind, args)
INTERVAL, DUE, ARRIVE, CANCELLER, FALLBACK_DONE, FINALIZED, LAND_REST, RESTART = (
    "interval", "due", "arrive", "canceller", "fallback_done", "finalized", "land_rest", "restart")


@dataclass
class Attempt:
    """One checkpoint attempt in flight (`regionchaos.checkpointing.Attempt` without its data)."""

    index: int
    checkpoint_id: int
    life: int  # the JobManager life that triggered it (the emulator compares coordinator objects)
    faults: AttemptFaults
    pending: PendingCheckpoint
    arrived: int = 0
    ended: str | None = None  # GLOBAL, REGIONAL, ABORTED, or None while in flight


@dataclass
class Step:
    """What one step did: ``log`` the decisions and restores in order (`judging.conformance` compares them with
    the real emulation's history), ``completions`` per completed checkpoint (REGIONAL streak, ref-chain depth),
    ``shape`` the same without ids and with what a decision read and a failure interrupted: each decision's
    status, reason, forced flag, failed and timed-out regions, counter moves and job failure; each restore with
    the phases of the checkpoints pending when it came (the kinds of step `regionchaos.explore.search` judges)."""

    log: list[tuple] = field(default_factory=list)
    completions: list[tuple[int, int]] = field(default_factory=list)
    shape: list[tuple] = field(default_factory=list)


class Model:
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
         new.crashed_in, new.storage, new.depth) = copy.deepcopy(
            (self.coord, self.queue, self.attempts, self.faults, self.times, self.rescales, self.awaiting_fallback,
             self.crashed_in, self.storage, self.depth), memo)
        return new

    def _shared(self) -> list:
        c = self.coord
        out: list = [self.sc, self.settings, self.nemesis, self.cache, c.settings, c.graph, c.regions, c.vertex_of,
                     c.operator_modes]
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
        checkpoint to end is run: it only defers), or until nothing is left."""
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
        """`Emulation.assign_splits`: the enumerator's side only (the readers are data)."""
        running = [sub for sub in range(self.parallelism) if (SOURCE, sub) not in self.coord.finished]
        self.coord.enumerator.assign_pending(running)

    def _interval(self, index: int) -> None:
        """`Emulation.interval`."""
        if self.coord.pending and self.sc.flink.max_concurrent == 1:
            self.deferred = index
            return
        self.deferred = None
        self.index = index
        self._assign_splits()
        faults = self.cache.faults(index, self._choice or (), self.coord, self.tms)
        self.faults[index] = faults
        if self._crash(faults):
            self._assign_splits()
        previous = self.times[-1][1] if self.times else 0  # `Triggering.after_interval`
        self._at(max(self.now_ms, previous + self.sc.flink.interval_ms), DUE, index)

    # -- triggering (`regionchaos.triggering.Triggering`) ------------------------------------------

    def _due(self, index: int) -> None:
        """`Triggering.due` (no end of input: the sources are unbounded)."""
        f = self.sc.flink
        if len(self.coord.pending) >= f.max_concurrent:
            self.waiting = index
            return
        if self.last_end_ms is not None and self.now_ms < self.last_end_ms + f.min_pause_ms:
            self._at(self.last_end_ms + f.min_pause_ms, DUE, index)
            return
        self.waiting = None
        attempt = self._trigger(index, self.faults[index])
        self.times = [(attempt.checkpoint_id, self.now_ms)]
        self._at(self.now_ms + f.interval_ms // 2, INTERVAL, index + 1)

    def _checkpoint_ended(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """`Triggering.checkpoint_ended`."""
        self.last_end_ms = self.now_ms
        rescale = outcome.reason not in UNCOUNTED and attempt.index in self.rescales
        if outcome.job_failed or rescale:
            self._at(self.now_ms, RESTART, outcome.job_failed, self.rescales.pop(attempt.index) if rescale else None)
        self._resume()

    def _restart(self, job_failed: bool, parallelism: int | None) -> None:
        """`Triggering._restart`."""
        if job_failed:
            self._global_restore(None)
        if parallelism is not None:
            if self.coord.store.latest() is None:
                self._log("rescale_skipped", parallelism)
            else:
                self._global_restore(parallelism, rescale=True)
        self._resume()

    def _resume(self) -> None:
        """`Triggering.resume`."""
        if self.deferred is not None and not self.coord.pending:
            self._at(self.now_ms, INTERVAL, self.deferred)
            self.deferred = None
        if self.waiting is not None:
            self._at(self.now_ms, DUE, self.waiting)
            self.waiting = None

    # -- a checkpoint's life (`regionchaos.checkpointing.Checkpointing`) ---------------------------

    def _trigger(self, index: int, faults: AttemptFaults) -> Attempt:
        """`Checkpointing.trigger` with `regionchaos.task_side.respond`: each expected task's response
        planned at the trigger (a decline at its upload time, an ack then, a silent task's ack after the
        timeout)."""
        coord = self.coord
        pending = coord.trigger_checkpoint()
        cid = pending.checkpoint_id
        attempt = Attempt(index, cid, self.life, faults, pending)
        self.attempts[cid] = attempt
        expected = sorted(pending.expected)
        timeout = self.sc.flink.timeout_ms
        upload = self.cache.upload_times(self.nemesis, index, expected, timeout)
        self._await_fallback(faults)
        for task in expected:
            lat = upload[task]
            if task in faults.declines:
                self._at(self.now_ms + lat, ARRIVE, cid, task, None, faults.declines[task])
                continue
            at = timeout + 1 + lat if task in faults.timeouts else lat
            self._at(self.now_ms + at, ARRIVE, cid, task, self._states(cid, task), None)
        self._at(self.now_ms + (self.settings.deadline_ms or timeout), CANCELLER, cid)
        self._land_inside(attempt, "pending", 0)
        return attempt

    def _states(self, cid: int, task: Task) -> dict[str, OperatorSubtaskState]:
        """A task's snapshot as its operator states: one handle per operator in the object the task side
        names; the source's holds the splits the enumerator gave that subtask (what the coordinator's
        region fallback reads)."""
        splits = tuple(sorted(s for s, sub in self.coord.enumerator.owner.items() if sub == task[1]))
        cached = self.cache.states.get((cid, task, splits))
        if cached is None:
            key = object_key(cid, task, self.tms, self.sc.flink.file_merging)
            cached = self.cache.states[(cid, task, splits)] = {
                op: OperatorSubtaskState((StateHandle(key, f"{op}/{task[1]}", cid,
                                                      splits if op == self.coord.source_operator else ()),))
                for op in self.coord.graph.vertex(task[0]).operators}
        return cached

    def live(self, attempt: Attempt) -> bool:
        return attempt.life == self.life and attempt.checkpoint_id in self.coord.pending

    def _arrive(self, cid: int, task: Task, states, reason) -> None:
        """`Checkpointing._arrive` (a late one is data only: `regionchaos.outcomes.late_ack`)."""
        attempt = self.attempts[cid]
        pending = attempt.pending
        if not self.live(attempt) or (pending.phase != "pending" and task not in pending.marked_declined):
            return
        attempt.arrived += 1
        if states is not None:
            self.coord.receive_acknowledge(pending, task, states)
        else:
            outcome = self.coord.receive_decline(pending, task, reason)
            if outcome is not None:
                self._ended(attempt, outcome)
                return
        if pending.phase == "pending":
            self._land_inside(attempt, "pending", attempt.arrived)
        if not self.live(attempt):
            return
        pr = self.settings.semantics == PR
        if pending.fully_acknowledged and (pending.phase == "pending" or pr):
            self._decide(attempt)
        elif pending.declines and pending.responded() and (pending.phase == "pending" or pr):
            self._decide(attempt)

    def _canceller(self, cid: int) -> None:
        """`Checkpointing._canceller`."""
        attempt = self.attempts[cid]
        if not self.live(attempt):
            return
        pending = attempt.pending
        if self.settings.semantics == PR and self.settings.region_enabled:
            self.coord.mark_unacknowledged_declined(pending)
            self._decide(attempt)
        elif pending.phase == "pending":
            self._decide(attempt)

    def _decide(self, attempt: Attempt) -> None:
        """`Checkpointing._decide` (zero delays: the scope refuses others)."""
        coord, pending = self.coord, attempt.pending
        if pending.phase == "finalizing":
            return
        if pending.phase == "fallback" and pending.fully_acknowledged:
            self._finalize(attempt, GLOBAL)
            return
        outcome, kind, reason = coord.decide(pending, settled=True)
        if kind == ABORTED:
            self._ended(attempt, coord.abort(pending, outcome, reason) if reason is not None else outcome)
            return
        if kind == GLOBAL:
            self._finalize(attempt, GLOBAL)
            return
        self._land_inside(attempt, "pending", None)
        pending.phase = "fallback"
        pending.fallback_requests += 1
        self._at(self.now_ms, FALLBACK_DONE, attempt.checkpoint_id, pending.fallback_requests)
        if pending.fallback_requests == 1:
            self._land_at_fallback(attempt)

    def _fallback_done(self, cid: int, request: int) -> None:
        """`Checkpointing._fallback_done`."""
        attempt = self.attempts[cid]
        if attempt.life != self.life:
            return
        pending = attempt.pending
        live = self.live(attempt) and pending.phase == "fallback"
        reason = self.coord.region_fallback(pending, pending.decision)  # served either way
        if not live:
            return
        if reason is not None:
            self._ended(attempt, self.coord.abort(pending, pending.decision, reason))
            return
        self._finalize(attempt, REGIONAL)

    def _finalize(self, attempt: Attempt, kind: str) -> None:
        """`Checkpointing._finalize` (the ``notify-before-metadata`` mutant's early notifications are data)."""
        pending = attempt.pending
        pending.phase = "finalizing"
        if self._crash_before_metadata(attempt, kind):
            return
        self._land_inside(attempt, "pending", None)
        self._land_inside(attempt, "finalize", 0)
        if self.live(attempt):
            self._at(self.now_ms, FINALIZED, attempt.checkpoint_id, kind)

    def _finalized(self, cid: int, kind: str) -> None:
        attempt = self.attempts[cid]
        if not self.live(attempt):
            return
        pending = attempt.pending
        self._ended(attempt, self.coord.complete(pending, pending.decision, kind))

    def _ended(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """`Checkpointing._ended`: the decision written down, the metadata to storage, older pending
        checkpoints subsumed, faults placed at instants it never reached landed right after it."""
        if outcome.status == ABORTED and outcome.reason is not None and self._crash_before_metadata(attempt, None):
            return
        coord = self.coord
        attempt.ended = outcome.status
        self._decided(outcome)
        if outcome.completed:
            self._completed(outcome.checkpoint)
        for cid in outcome.subsumed:
            self.storage.pop(cid, None)
        if outcome.completed:
            for older in coord.subsumed_pending(attempt.checkpoint_id):
                self._subsume(self.attempts[older.checkpoint_id])
        if attempt.faults.inside and attempt.life == self.life:
            self._at(self.now_ms, LAND_REST, attempt.checkpoint_id)
        self._checkpoint_ended(attempt, outcome)

    def _decided(self, o: CheckpointOutcome) -> None:
        self._log("decided", o.checkpoint_id, o.status, o.reason, o.counter_before, o.counter_after)
        cap = self.settings.max_consecutive_failures + 1
        self._shape("decided", o.status, o.reason, o.forced_global, len(o.failed_regions), len(o.timed_out),
                    min(o.counter_before, cap), min(o.counter_after, cap), o.job_failed)

    def _completed(self, checkpoint: CompletedCheckpoint) -> None:
        """A completion: its metadata on storage, its ref-chain depth (flip_bounds' definition: the longest
        chain of refCheckpointId links, each to an older completed checkpoint's own links) and the streak of
        REGIONAL completions since the last GLOBAL one."""
        cid = checkpoint.checkpoint_id
        self.storage[cid] = checkpoint
        refs = [r for r in checkpoint.ref_ids() if r < cid]
        self.depth[cid] = max((1 + self.depth.get(r, 0) for r in refs), default=0)
        self.streak = self.streak + 1 if checkpoint.checkpoint_type == REGIONAL else 0
        self.step_out.completions.append((self.streak, self.depth[cid]))

    def _subsume(self, attempt: Attempt) -> None:
        """`Checkpointing._subsume` (the ``subsumed-notification-commits`` mutant's notifications are data)."""
        pending = attempt.pending
        self._ended(attempt, self.coord.abort(pending, self.coord._undecided(pending, settled=False), R_SUBSUMED))

    def _abort_all(self, reason: str) -> None:
        """`Checkpointing.abort_all`."""
        if self.mutant == "failover-keeps-pending":
            return
        for pending, outcome in self.coord.abort_all_pending(reason):
            self._ended(self.attempts[pending.checkpoint_id], outcome)

    # -- faults at their instants (`regionchaos.instants.Instants`) ---------------------------------

    def _land_rest(self, cid: int) -> None:
        attempt = self.attempts[cid]
        for instant in ("pending", "finalize"):
            self._land_inside(attempt, instant, None)

    def _land_inside(self, attempt: Attempt, instant: str, arrived: int | None) -> None:
        if not attempt.faults.inside or attempt.life != self.life:
            return
        due = [(k, t) for k, t, n in attempt.faults.landing(instant)
               if instant != "pending" or arrived is None or n == arrived]
        for kind, target in due:
            attempt.faults.inside.pop((kind, target), None)
            if attempt.life != self.life:
                return
            self._land(kind, target)

    def _await_fallback(self, faults: AttemptFaults) -> None:
        waiting = [(k, t) for k, t, _ in faults.landing("fallback")]
        for key in waiting:
            faults.inside.pop(key, None)
        self.awaiting_fallback += waiting

    def _land_at_fallback(self, attempt: Attempt) -> None:
        while self.awaiting_fallback and attempt.life == self.life:
            kind, target = self.awaiting_fallback.pop(0)
            self._land(kind, target)

    def _crash_before_metadata(self, attempt: Attempt, kind: str | None) -> bool:
        """`Instants.crash_before_metadata`."""
        if not attempt.faults.crash_before_metadata or attempt.index in self.crashed_in:
            return False
        self.crashed_in.add(attempt.index)
        cid, pending = attempt.checkpoint_id, attempt.pending
        self._shape("crash_before_metadata", kind)
        if kind is not None and self.mutant == "metadata-before-state":
            outcome = self.coord.complete(pending, pending.decision, kind)
            self._decided(outcome)
            self._completed(outcome.checkpoint)
        else:
            self.coord.pending.pop(cid, None)
            self._log("voided", cid)
        self._jobmanager_failover()
        return True

    # -- failures and restarts (`regionchaos.failover.Failover`) -------------------------------------

    def _crash(self, faults: AttemptFaults) -> bool:
        """`Failover.crash`."""
        if faults.between("jobmanager_failover", faults.jobmanager_failover):
            self._jobmanager_failover()
            return True
        regions = list(faults.between("subtask_crash", faults.region_crashes))
        for tm in faults.between("taskmanager_loss", faults.taskmanager_losses):
            regions += self._lost(tm)
        self._fail_regions(regions)
        return bool(regions)

    def _land(self, kind: str, target) -> None:
        """`Failover.land`."""
        if kind == "jobmanager_failover":
            self._jobmanager_failover()
            return
        regions = self._lost(target) if kind == "taskmanager_loss" else [target]
        if all(r < self.coord.num_regions for r in regions):
            self._fail_regions(regions)
            self._assign_splits()

    def _lost(self, tm: int) -> list[int]:
        coord = self.coord
        return sorted({coord.regions[t] for t in coord.graph.tasks() if t[1] % self.tms == tm})

    def _fail_regions(self, regions: list[int]) -> None:
        for region in dict.fromkeys(regions):
            self._region_failover(region)

    def _region_failover(self, region: int) -> None:
        """`Failover.region_failover`."""
        coord = self.coord
        if coord.store.latest() is None or not self._embarrassingly_parallel():
            self._global_restore(None)
            return
        self._shape("region_failover", self._phases())
        self._abort_pending()
        coord.restore_region(region)
        self._log("region_failover", region, coord.store.latest().checkpoint_id)

    def _embarrassingly_parallel(self) -> bool:
        t = self.sc.topology
        return (t.partitioning == Partitioning.FORWARD and t.exchange.value == "pipelined"
                and self.coord.num_regions > 1)

    def _abort_pending(self) -> None:
        if self.coord.pending:
            self._abort_all(R_FAILOVER)

    def _global_restore(self, parallelism: int | None, *, rescale: bool = False) -> None:
        """`Failover.global_restore` (and `Failover.rescale`, whose caller checked for a completed checkpoint)."""
        self._shape("global_restore", self._phases(), rescale)
        self._abort_pending()
        coord = self.coord
        if coord.store.latest() is None:
            self._restart_from_scratch()
            return
        new_p = parallelism or self.parallelism
        latest = coord.store.latest()
        coord.restore_global(new_p)
        self._rediscover()
        self.parallelism = new_p
        self._log("global_restore", latest.checkpoint_id, new_p)

    def _rediscover(self) -> None:
        """`Failover._rediscover`: the initial splits (discovered ones are data here: see `regionchaos.explore.scope`)."""
        enum = self.coord.enumerator
        known = set(enum.discovered)
        enum.add_splits(s for s in range(self.sc.workload.splits) if s not in known)

    def _restart_from_scratch(self) -> None:
        """`Failover.restart_from_scratch`."""
        self._log("restart_from_scratch")
        enum = self.coord.enumerator
        self._rediscover()
        enum.owner = {}
        enum.unassigned = sorted(enum.discovered)
        self.coord.finished = {}
        self._assign_splits()

    def _jobmanager_failover(self) -> None:
        """`Failover.jobmanager_failover`: a new coordinator from what is on storage."""
        self._shape("jobmanager_failover", self._phases())
        for cid in sorted(self.coord.pending):  # in memory only: never completed, never aborted
            self._log("voided", cid)
        next_id = self.coord.next_checkpoint_id
        store = CompletedCheckpointStore.recover(sorted(self.storage.values(), key=lambda c: c.checkpoint_id),
                                                 self.sc.flink.num_retained, mutant=self.mutant,
                                                 semantics=self.sc.flink.semantics)
        latest = store.latest()
        configured = self.parallelism
        if latest is not None:
            self.parallelism = latest.parallelism["source"]
        self.coord = self._new_coordinator(store, next_id)
        self.life += 1
        self._log("jobmanager_failover", [c.checkpoint_id for c in store.retained])
        if latest is None:
            self._restart_from_scratch()
        else:
            self._global_restore(configured)
        self._resume()


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
