"""The state signature: what two runs must agree on for the explorer to treat them as one state.

In:  a `regionchaos.explore.model.Model` at a choice point (the interval of the next attempt, about to draw its
     faults), and optionally fields to leave out (the soundness tests show each one is needed).
Out: `signature(model)`: a hashable tuple, one value per name in `FIELDS`; `fields(model)`: the same as a dict.

Why it is sound for the actions of `regionchaos.explore.scope` (no per-region timeout, zero control-plane delays,
the fault kinds listed there; bounded sources only as `scope.BOUNDED_NEEDS` admits them). The future of a run
depends on its past only through what the decision rules, the counter rules, the restores and the event order
read, and what the explorer's predicates read (flip_bounds: the REGIONAL streak and the ref-chain depth of each
completion). Field by field, with
B = max-consecutive-failures and "capped" meaning min(value, B + 1):

- ``counter``: the consecutive-regional counter, capped. The FLIP's tier 1 reads ``counter >= B``
  (`rules.trigger_forced`, `rules.forced_at_decision`); a completion adds 1 or resets it, an abort keeps or
  resets it (`rules.after_complete`, `rules.after_abort`): values above B behave alike (under the FLIP the
  counter never passes B; under the PR with B = 0 it reaches 1 = B + 1).
- ``latest_depth``: None while no checkpoint completed (the "no previous checkpoint" rule, and a failover then
  restarts the job from scratch), else the ref-chain depth of the latest completed checkpoint, capped. A global
  restore and a new JobManager refill the fallback table from it, so a REGIONAL checkpoint after them is one
  deeper.
- ``streak``: REGIONAL checkpoints completed since the last GLOBAL one, capped: flip_bounds' consecutive rule.
  With the protocol unmutated and one checkpoint at a time it equals ``latest_depth`` (each REGIONAL checkpoint
  references the one before it); a fallback to an aborted checkpoint, or checkpoints completing out of trigger
  order, make them differ.
- ``fallback``: per task of the job as it runs now (after a rescale, at the new parallelism): ``L`` where the
  task falls back to the latest completed checkpoint, None where it has no fallback entry (the PR after an
  upscale: the task keeps its fresh state, F11), else the capped depth of the checkpoint its entry names (the
  ``fallback-to-aborted`` mutant: an aborted one, depth 0). A REGIONAL checkpoint is one deeper than the
  deepest entry its failed regions fall back to (flip_bounds follows the same links). Unmutated, every entry is
  ``L`` (or every one None before the first completion).
- ``failures``: the consecutive failed checkpoints of the CheckpointFailureManager, capped at
  tolerable-failed-checkpoints + 1 (0 when the key is null: then no abort fails the job). More than the
  tolerable number fails the job (`rules.after_failure_count`): a global restore, which refills the fallback
  table and, with several checkpoints pending, aborts them.
- ``rescales``: the rescale plan still ahead, as (attempts from now, parallelism); after the last one it is
  empty, so the attempt index stops mattering.
- ``inflight``: None with one checkpoint at a time and the protocol unmutated, where every choice point has
  nothing in flight: the interval waits for the checkpoint before it to end; its fallback, finalization, faults
  left to land and restarts run at the instant it ends, before the interval; what is left (late acks,
  cancellers of ended checkpoints) does nothing (`Model._forget_ended`); the search keeps only schedules whose
  faults placed at a region fallback land in their own attempt. Then no time enters the state: the next
  trigger only waits for the interval or the min pause, nothing else is pending to race it, and where a fault
  lands among the responses (whose order the seed draws per attempt) ends the same way wherever it lands
  (`scope.Choices._reduced` says how). Otherwise it is the whole rest: the attempt index (with several
  checkpoints at once the seed's upload times decide which races which, and a mutant may read which responses
  came before a fault: ``fallback-to-aborted`` keeps them), every queued event with its time from the choice
  point, every pending checkpoint's record (phase, responses, forced flags, grafted entries' depths, the
  decision's failed regions), the attempts' faults still to land and those of a trigger still to come, the
  faults waiting for a region fallback, and the trigger's waiting state. The abstraction then only merges runs
  at the same attempt, so the search ends at N without a fixpoint. (A bounded job is explored one checkpoint at a
  time: no checkpoint is pending at a choice point, so no acknowledgement's positions are pending either; the
  queued ones and a queued notification's are held as positions.)

With bounded sources three more fields hold what decides the end of input (None with unbounded ones, where
nothing does). The data flow (`regionchaos.explore.model_input`, the emulator's own `Dataflow`) moves a
position only by a fixed number of records per interval (the scope refuses a drawn one), by a restore, or
back to a split's start (a split reassigned, a restart from scratch); the next checkpoint is the final one
when no split is left to assign and every owned split was read to its end; a source subtask finishes on the
notification of a GLOBAL checkpoint at whose trigger its splits were read to their end; the job finishes when
its final checkpoint's notifications are delivered. So:

- ``input``: whether the job finished (the run ends: no successor); the enumerator's unassigned splits and
  owners (`SplitEnumerator.assign_pending` balances by owner; a region reset hands a subtask's unrestored
  splits back by owner); each reader's splits in order (a snapshot lists them in that order: the union list of
  offsets a restore resolves, last entry winning); each split's position, emitted and consumed. Positions are
  absolute (at most ``records_per_split``): the rates are fixed, so the attempt index adds nothing;
- ``finished``: each finished task with the positions of its final state: it is not triggered (it cannot fail
  its region: `scope.failing_task` picks a running task), its final state stands as its acknowledgement in
  every later checkpoint, and a region failover restarts it;
- ``restore``: the positions a restore would set: per task, its fallback entry (a region failover restores
  the region from it), and the latest completed checkpoint's entries (a global restore and a new JobManager
  restore every task from them; a region failover takes the union list of offsets from every subtask of it)
  with its source coordinator state (a global restore rebuilds the enumerator's unassigned splits from it).
  Only what `Dataflow.restore` reads: the source's splits and offsets, the counter's positions per split (the
  snapshot's emitted and consumed); not the checkpoint ids, sink transactions, lost ranges or epoch values.

What is left out, and why nothing reads it:
- the PR's forced flag (forceGlobalNextCheckpoint): a function of the counter under these actions. It is set
  when a REGIONAL completion brings the counter to max(B, 1) and cleared together with the counter (a forced
  checkpoint's abort, a GLOBAL completion, a new JobManager); an abort by the failure ratio keeps both; no
  bounded source sets it alone;
- the counter the latest checkpoint's metadata records (a new JobManager starts from it under the FLIP): the
  counter itself, except after a tier-2 reset (counter 0 while the latest checkpoint is REGIONAL), when it is B:
  that checkpoint was forced because the counter had reached B, and under the FLIP it never passes B;
- checkpoint ids (the rules compare ids only with each other: all shift alike); which older checkpoints the
  store retains (no rule reads them; a new JobManager reads only the latest); the split enumerator's
  assignment (the region fallback fails only when the enumerator cannot produce one, a setting of the
  scenario; splits discovered while running change only the data), except with bounded sources (``input``);
  records, sink transactions and state contents (the data plane), except a bounded job's positions; the
  indices of attempts whose JobManager crashed before the metadata commit (only an attempt's own index is
  looked up); a fallback request still queued for a checkpoint that ended (`Model._fallback_done` then only has
  the split enumerator serve it: the PR's hand-back of splits);
- with bounded sources: whether the sources are exhausted (`Input._check_end_of_input` computes it again before
  every trigger, the only reader); the newest checkpoint each task was told of (``Model.reported``: with one
  checkpoint at a time a notification is always of the newest checkpoint triggered, so no task ignores one); the
  enumerator's assignment history (``assignments_by_checkpoint``: read by the PR's hand-back only, and the scope
  refuses the PR for bounded jobs); the positions recorded by checkpoints no entry of the latest one or of the
  fallback table names (nothing restores from them).
"""

from __future__ import annotations

from typing import Any

from ..workload.dataflow import SOURCE_OPERATORS
from .model_base import ARRIVE, CANCELLER, DUE, FALLBACK_DONE, FINALIZED, INTERVAL, LAND_REST, NOTIFY

FIELDS = ("counter", "latest_depth", "streak", "fallback", "failures", "rescales", "inflight", "input", "finished",
          "restore")
VIEWED = ("source", "offsets", "counter")  # the operators whose state `Dataflow.restore` reads


def fields(model) -> dict[str, Any]:
    coord = model.coord
    cap = model.settings.max_consecutive_failures + 1
    tolerable = model.settings.tolerable_failed_checkpoints
    latest = coord.store.latest()
    latest_id = None if latest is None else latest.checkpoint_id
    return {
        "counter": min(coord.counters.consecutive_regional, cap),
        "latest_depth": None if latest is None else min(model.depth[latest_id], cap),
        "streak": min(model.streak, cap),
        "fallback": tuple(_entry(model, coord.fallback.get(t), latest_id, cap) for t in coord.graph.tasks()),
        "failures": 0 if tolerable is None else min(coord.counters.failed_checkpoints, tolerable + 1),
        "rescales": tuple(sorted((after - model.index, p) for after, p in model.rescales.items()
                                 if after >= model.index)),
        "inflight": _inflight(model, cap),
        "input": _input(model),
        "finished": None if model.flow is None else tuple((t, _view(model, states))
                                                          for t, states in sorted(coord.finished.items())),
        "restore": _restore(model),
    }


def signature(model, without: frozenset[str] = frozenset()) -> tuple:
    """The signature as a tuple in `FIELDS` order; a field in ``without`` is left out (its slot holds None)."""
    values = fields(model)
    return tuple(None if name in without else values[name] for name in FIELDS)


def _input(model):
    """A bounded job's live input (see the module docstring); None with unbounded sources."""
    flow = model.flow
    if flow is None:
        return None
    enum = model.coord.enumerator
    return (model.done, tuple(sorted(enum.discovered)), tuple(sorted(enum.unassigned)),
            tuple(sorted(enum.owner.items())),
            tuple((sub, tuple(splits)) for sub, splits in sorted(flow.owned.items()) if splits),
            tuple((split, sp.src, sp.consumed) for split, sp in sorted(flow.splits.items())))


def _restore(model):
    """The positions a restore would set (see the module docstring); None with unbounded sources."""
    if model.flow is None:
        return None
    coord = model.coord
    fallback = tuple(None if t not in coord.fallback else _view(model, coord.fallback[t][0])
                     for t in coord.graph.tasks())
    latest = coord.store.latest()
    if latest is None:
        return fallback, None, None
    entries = tuple((key, _operator(model, key[0], st)) for key, st in sorted(latest.operator_states.items())
                    if key[0] in VIEWED)
    return fallback, entries, tuple(sorted((k, repr(v)) for k, v in latest.coordinator_state.items()))


def _view(model, states: dict) -> tuple:
    """A task's states as a restore of the data flow reads them."""
    return tuple((op, _operator(model, op, states[op])) for op in VIEWED if op in states)


def _operator(model, op: str, st) -> tuple:
    if op != "counter":
        return st.elements
    saved = model.flow.snapshots
    return (tuple((split, saved[(h.checkpoint_id, split)][:2]) for h in st.handles for split in h.elements),
            tuple((c.channel, c.records) for c in st.channel_state))


def _entry(model, entry, latest_id, cap: int):
    if entry is None:
        return None
    ref = entry[1]
    return "L" if ref == latest_id else min(model.depth.get(ref, 0), cap)


def _inflight(model, cap: int):
    coord = model.coord
    live = {cid for cid, a in model.attempts.items() if model.live(a)}
    queued = [e for e in model.queue if not (e[2] == FALLBACK_DONE and e[3][0] not in live)]
    quiet = not coord.pending and len(queued) == 1 and not model.awaiting_fallback
    if model.done or (model.sc.flink.max_concurrent == 1 and model.mutant is None and quiet):
        return None  # (a finished job has nothing in flight, and no future)
    base = coord.next_checkpoint_id

    def rel(cid: int) -> int:
        return cid - base

    def depth_of(ref: int) -> int:
        return min(model.depth.get(ref, 0), cap)

    queue = tuple((t - model.now_ms, kind, _args(model, kind, args, rel)) for t, _, kind, args in sorted(queued))
    pendings = []
    for cid, p in sorted(coord.pending.items()):
        pendings.append((rel(cid), p.phase, p.forced_at_trigger, p.forced_global, p.final, tuple(sorted(p.acks)),
                         tuple(sorted(p.declines.items())), tuple(sorted(p.marked_declined)),
                         None if p.grafted is None else tuple(sorted((t, depth_of(r)) for t, (_, r) in p.grafted.items())),
                         None if p.decision is None else tuple(p.decision.failed_regions), p.kind,
                         p.fallback_requests, tuple(sorted(p.acked_after_graft)),
                         tuple(sorted((r, None if f is None else rel(f)) for r, f in p.fallback_from.items()))))
    attempts = tuple((rel(cid), a.index - model.index, a.life == model.life, a.arrived, a.ended,
                      tuple(sorted(a.faults.inside.items(), key=repr)), a.faults.crash_before_metadata,
                      a.index in model.crashed_in, tuple(sorted(a.sources_done)), a.notified)
                     for cid, a in sorted(model.attempts.items()) if cid in live or a.faults.inside)
    due = sorted({e[3][0] for e in queued if e[2] == DUE} | ({model.waiting} if model.waiting is not None else set()))
    trigger = (tuple((i - model.index, repr(model.faults[i])) for i in due if i in model.faults),
               None if model.waiting is None else model.waiting - model.index,
               None if model.deferred is None else model.deferred - model.index,
               None if model.last_end_ms is None else model.last_end_ms - model.now_ms,
               tuple(t - model.now_ms for _, t in model.times))
    latest = coord.store.latest()  # what the derivations of the PR's forced flag and the metadata's counter assume
    counters = (coord.counters.force_global_next if model.settings.semantics == "pr" else None,
                None if latest is None else latest.consecutive_regional)
    return model.index, queue, tuple(pendings), attempts, trigger, tuple(model.awaiting_fallback), counters


def _args(model, kind: str, args: tuple, rel) -> tuple:
    """A queued event's arguments with checkpoint ids and attempt indices relative, an ack's states as ``ack`` (a
    bounded job's as their positions), a notification's checkpoint as the positions its sources would finish
    with."""
    if kind in (INTERVAL, DUE):
        return (args[0] - model.index,)
    if kind == ARRIVE and model.flow is not None:
        cid, task, states, reason = args
        return rel(cid), task, None if states is None else _view(model, states), reason
    if kind == NOTIFY:
        cid, notifications, sources_done, checkpoint, final = args
        states = {} if checkpoint is None else checkpoint.operator_states
        finishing = None if checkpoint is None else tuple(
            (sub, _view(model, {op: states[(op, sub)] for op in SOURCE_OPERATORS}))
            for sub in sorted(sources_done) if all((op, sub) in states for op in SOURCE_OPERATORS))
        return rel(cid), notifications, finishing, final
    if kind == ARRIVE:
        cid, task, states, reason = args
        return rel(cid), task, "ack" if states is not None else reason
    if kind in (CANCELLER, FALLBACK_DONE, FINALIZED, LAND_REST):
        return (rel(args[0]), *args[1:])
    return args
