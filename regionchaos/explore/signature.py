"""The state signature: what two runs must agree on for the explorer to treat them as one state.

In:  a `regionchaos.explore.model.Model` at a choice point (the interval of the next attempt, about to draw its
     faults), and optionally fields to leave out (the soundness test shows each one is needed).
Out: `signature(model)`: a hashable tuple, one value per name in `FIELDS`; `fields(model)`: the same as a dict.

Why it is sound for the actions of `regionchaos.explore.scope` (no bounded sources, no per-region timeout, zero
control-plane delays, the fault kinds listed there). The future of a run depends on its past only through what
the decision rules, the counter rules, the restores and the event order read, and the explorer's predicates
(flip_bounds: the REGIONAL streak and the ref-chain depth of each completed checkpoint). Field by field, with
B = max-consecutive-failures; "capped" means min(value, B + 1):

- ``counter``: the consecutive-regional counter, capped. The FLIP's tier 1 reads ``counter >= B``
  (`rules.trigger_forced`, `rules.forced_at_decision`), a completion adds 1 or resets to 0, an abort keeps it or
  resets it (`rules.after_complete`, `rules.after_abort`): values above B behave as B + 1 (under the FLIP the
  counter never passes B; under the PR with B = 0 it reaches 1 = B + 1).
- ``force_next``: the PR's forceGlobalNextCheckpoint flag, which its decision reads instead of the counter.
- ``failures``: the consecutive failed checkpoints of the CheckpointFailureManager, capped at
  tolerable-failed-checkpoints + 1 (0 when the key is null: then no abort ever fails the job). More than the
  tolerable number fails the job (a global restore) and clears it (`rules.after_failure_count`).
- ``latest_depth``: None while no checkpoint completed (the FLIP's and the PR's "no previous checkpoint" rule,
  a region failover that becomes a global restart from scratch), else the ref-chain depth of the latest
  completed checkpoint, capped. A global restore and a new JobManager refill the fallback table from it.
- ``latest_counter``: the counter the latest completed checkpoint's metadata records, capped: a new JobManager
  starts from it under the FLIP (under the PR from 0). It differs from ``counter`` after a tier-2 reset.
- ``streak``: REGIONAL checkpoints completed since the last GLOBAL one, capped: flip_bounds' consecutive rule
  (the counter does not bound it: tier 2 resets the counter, not the streak).
- ``fallback``: per task of the job as it runs now (after a rescale: the new parallelism), the capped depth of
  the checkpoint its fallback entry references, or None where it has none (the PR after an upscale). A REGIONAL
  checkpoint's depth is 1 + the deepest fallback reference of its failed regions (flip_bounds follows the same
  links), and a task without an entry keeps its fresh state (F11). Under the correct protocol every entry
  references the latest completed checkpoint; a mutant (``fallback-to-aborted``) makes them differ.
- ``rescales``: the rescale plan still ahead, as (attempts from now, parallelism); after the last one it is
  empty, so the attempt index stops mattering.
- ``inflight``: None when nothing is in flight: no checkpoint pending, no fault waiting for a region fallback,
  and no event queued but the interval about to draw (a fallback request of a checkpoint that ended only
  serves the split enumerator, see below). That is every choice point with ``max-concurrent-checkpoints: 1``:
  the interval waits for the checkpoint before it to end; its fallback, finalization, faults left to land and
  restarts run at the instant it ends, before the interval; what is left (late acks, cancellers of ended
  checkpoints) does nothing (`Model._forget_ended`); and the search keeps only schedules whose faults placed
  at a region fallback land in their own attempt. Then no time enters the state: the next trigger only waits
  for the interval or the min pause, and nothing else is pending to race it. Otherwise (several checkpoints
  pending) it is the whole rest: the attempt index (the seed draws each attempt's upload times), every queued
  event with its time from now, every pending checkpoint's record (phase, responses, forced flags, grafted
  entries' depths, the decision's failed regions), the attempts' faults still to land, the faults waiting for
  a region fallback, and the trigger's waiting state. The abstraction then only merges runs at the same
  attempt, so the search ends at N without a fixpoint.

What is left out, and why no decision reads it: checkpoint ids (the rules compare ids only with each other:
all are shifted alike); which older checkpoints the store retains (no rule reads them; a new JobManager reads
only the latest); the split enumerator's assignment (the region fallback fails only when the enumerator cannot
produce one, a setting of the scenario; splits discovered while running change only the data); records, sink
transactions and state contents (the data plane); finished tasks and the end of input (always none: bounded
sources are refused); the failed attempts' indices (``crashed_in``: only an attempt's own index is looked up);
a fallback request still queued for a checkpoint that ended (`Model._fallback_done` then only has the split
enumerator serve it: the PR's hand-back of splits).
"""

from __future__ import annotations

from typing import Any

FIELDS = ("counter", "force_next", "failures", "latest_depth", "latest_counter", "streak", "fallback", "rescales",
          "inflight")


def fields(model) -> dict[str, Any]:
    coord = model.coord
    bound = model.settings.max_consecutive_failures
    cap = bound + 1
    tolerable = model.settings.tolerable_failed_checkpoints
    latest = coord.store.latest()
    return {
        "counter": min(coord.counters.consecutive_regional, cap),
        "force_next": coord.counters.force_global_next,
        "failures": 0 if tolerable is None else min(coord.counters.failed_checkpoints, tolerable + 1),
        "latest_depth": None if latest is None else min(model.depth[latest.checkpoint_id], cap),
        "latest_counter": None if latest is None else min(latest.consecutive_regional, cap),
        "streak": min(model.streak, cap),
        "fallback": tuple(min(model.depth.get(coord.fallback[t][1], 0), cap) if t in coord.fallback else None
                          for t in coord.graph.tasks()),
        "rescales": tuple(sorted((after - model.index, p) for after, p in model.rescales.items()
                                 if after >= model.index)),
        "inflight": _inflight(model, cap),
    }


def signature(model, without: frozenset[str] = frozenset()) -> tuple:
    """The signature as a tuple in `FIELDS` order; a field in ``without`` is left out (its slot holds None)."""
    values = fields(model)
    return tuple(None if name in without else values[name] for name in FIELDS)


def _inflight(model, cap: int):
    from .model import FALLBACK_DONE

    coord = model.coord
    live = {cid for cid, a in model.attempts.items() if model.live(a)}
    queued = [e for e in model.queue if not (e[2] == FALLBACK_DONE and e[3][0] not in live)]
    if not coord.pending and len(queued) == 1 and model.waiting is None and not model.awaiting_fallback:
        return None
    base = coord.next_checkpoint_id

    def rel(cid: int) -> int:
        return cid - base

    def depth_of(ref: int) -> int:
        return min(model.depth.get(ref, 0), cap)

    queue = tuple((t - model.now_ms, kind, _args(kind, args, rel, model.index)) for t, _, kind, args in sorted(queued))
    pendings = []
    for cid, p in sorted(coord.pending.items()):
        pendings.append((rel(cid), p.phase, p.forced_at_trigger, p.forced_global, p.final, tuple(sorted(p.acks)),
                         tuple(sorted(p.declines.items())), tuple(sorted(p.marked_declined)),
                         None if p.grafted is None else tuple(sorted((t, depth_of(r)) for t, (_, r) in p.grafted.items())),
                         None if p.decision is None else tuple(p.decision.failed_regions), p.kind,
                         p.fallback_requests, tuple(sorted(p.acked_after_graft))))
    attempts = tuple((rel(cid), a.index - model.index, a.life == model.life, a.arrived, a.ended,
                      tuple(sorted(a.faults.inside.items(), key=repr)), a.faults.crash_before_metadata,
                      a.index in model.crashed_in)
                     for cid, a in sorted(model.attempts.items()) if cid in live or a.faults.inside)
    trigger = (None if model.waiting is None else model.waiting - model.index,
               None if model.deferred is None else model.deferred - model.index,
               None if model.last_end_ms is None else model.last_end_ms - model.now_ms,
               tuple(t - model.now_ms for _, t in model.times))
    return model.index, queue, tuple(pendings), attempts, trigger, tuple(model.awaiting_fallback)


def _args(kind: str, args: tuple, rel, index: int) -> tuple:
    """A queued event's arguments with checkpoint ids and attempt indices relative, an ack's states as ``ack``."""
    from .model import ARRIVE, CANCELLER, DUE, FALLBACK_DONE, FINALIZED, INTERVAL, LAND_REST

    if kind in (INTERVAL, DUE):
        return (args[0] - index,)
    if kind == ARRIVE:
        cid, task, states, reason = args
        return rel(cid), task, "ack" if states is not None else reason
    if kind in (CANCELLER, FALLBACK_DONE, FINALIZED, LAND_REST):
        return (rel(args[0]), *args[1:])
    return args
