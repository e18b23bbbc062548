"""The job's data flow in offsets: the source, the operators and the two-phase-commit sink.

In:  the scenario (splits, rates, bounded or not, unaligned or not), the run's counters and its
     event log (both owned by the `regionchaos.emulator.Emulation` that drives this), and what the
     control plane hands over: split assignments, checkpoint ids, restored operator state.
Out: `Dataflow`: records advancing between checkpoints (`advance`), each task's snapshot as
     operator state plus the state rows the data plane writes (`snapshot`), pending transactions
     committed on notification or restore (`commit`), and tasks restarted from restored state
     (`restore`, `restart_from_scratch`).

The job (PROTOCOL.md section 1) has two job vertices joined by a POINTWISE (forward) or
ALL_TO_ALL edge:
  source  [source: even-split split ownership; its OperatorCoordinator is the SplitEnumerator,
           offsets: union list state of (split, offset), the legacy FlinkKafkaConsumer's pattern:
           each subtask writes the offsets of its splits; on restore every subtask gets every
           entry and resumes each of its splits from the last entry for it]
  process [counter: even-split per-split count/sum + input channel state,
           epoch: union state, rules: broadcast state,
           sink: two-phase-commit, even-split pending transactions]
Records of split ``k`` travel on the channel identified by ``k``. Between two checkpoints every
live split advances by a seeded number of records; with unaligned checkpoints the process side
lags, and the gap is channel state. Only offsets and handles live here: record values, counts
and sums are the data plane's (`regionchaos.dataplane`, from `regionchaos.workload.records`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..history import Kind
from ..nemesis import Stream, stream_rng
from ..protocol.state import BROADCAST, EVEN_SPLIT, UNION, ChannelStateHandle, OperatorSubtaskState, StateHandle
from ..protocol.topology import Task
from ..scenario import Scenario

SOURCE, PROCESS = "source", "process"
OPERATOR_MODES = {"source": EVEN_SPLIT, "offsets": UNION, "counter": EVEN_SPLIT, "epoch": UNION, "rules": BROADCAST,
                  "sink": EVEN_SPLIT}
SOURCE_OPERATORS = ("source", "offsets")
PROCESS_OPERATORS = ("counter", "epoch", "rules", "sink")

Restored = dict[Task, dict[str, OperatorSubtaskState]]


@dataclass
class SplitProgress:
    """Live progress of one split (all offsets are record sequence numbers)."""

    length: int | None
    src: int = 0  # next record the source emits
    consumed: int = 0  # next record position of the counter / sink
    lost: tuple[tuple[int, int], ...] = ()  # ranges skipped without processing (never legal)
    recovering_until: int = 0  # recovered in-flight records end here
    precommitted: int = 0  # the sink pre-committed [.., precommitted)
    pending: tuple[tuple[int, int, int], ...] = ()  # (txn checkpoint id, start, end), pre-committed
    drained: tuple[tuple[int, int], ...] = ()  # recovered channel records processed before a source rewind,
    #                                            in the open transaction (pre-committed at the next snapshot)

    def snapshot(self) -> tuple:
        return (self.src, self.consumed, self.lost, self.pending)

    def resume_from(self, offset: int) -> None:
        """The source resumes at ``offset`` where the process side restored another position:
        the records in between are read again (behind it) or skipped (ahead of it), duplicates
        or loss that the sink's committed transactions show.

        With unaligned checkpoints the process side first gets its recovered channel state,
        records [consumed, recovering_until): they reach the counter and the sink's open
        transaction whatever the source does. Only then do the source's records from the offset
        arrive: an offset inside or behind the channel's records duplicates them, one past its
        end skips the records in between."""
        if self.recovering_until > self.consumed:  # drain the recovered channel state first
            self.drained = self.drained + ((self.consumed, self.recovering_until),)
            self.consumed = self.recovering_until
        if offset > self.consumed:
            self.lost = self.lost + ((self.consumed, offset),)
        self.src = self.consumed = self.precommitted = offset
        self.recovering_until = 0

    def precommit(self, cid: int) -> None:
        """Two-phase commit at checkpoint ``cid``'s snapshot: the open transaction (the drained
        channel records, then the records consumed since the last pre-commit) becomes pending."""
        if self.drained:
            self.pending = self.pending + tuple((cid, start, end) for start, end in self.drained)
            self.drained = ()
        if self.consumed > self.precommitted:
            self.pending = self.pending + ((cid, self.precommitted, self.consumed),)
            self.precommitted = self.consumed

    def take_pending(self, which: Callable[[tuple], bool]) -> tuple[tuple[int, int, int], ...]:
        """Remove and return the pending transactions ``which`` selects; the rest stay pending."""
        taken = tuple(txn for txn in self.pending if which(txn))
        self.pending = tuple(txn for txn in self.pending if not which(txn))
        return taken

    def restart_from(self, snapshot: tuple, channel: tuple[int, int] | None, *,
                     unaligned: bool) -> tuple[int, int] | None:
        """The process side restarts from ``snapshot`` (`snapshot` at a checkpoint; its pending
        transactions are the caller's) and the split's recovered channel records [start, end),
        if any. In-flight records before the channel state's start are gone: that range is
        returned (else None). With unaligned checkpoints the channel's records are drained first."""
        src, consumed, lost, _ = snapshot
        self.src, self.consumed, self.lost, self.drained = src, consumed, tuple(lost), ()
        start, end = channel if channel is not None else (src, src)
        gone = None
        if start > consumed:  # in-flight records not in the channel state: gone
            gone = (consumed, start)
            self.lost = self.lost + (gone,)
            self.consumed = start
        self.recovering_until = end if unaligned else 0
        self.precommitted = self.consumed
        return gone


class Dataflow:
    """Splits, who reads them, and how far each got; see the module docstring."""

    def __init__(self, scenario: Scenario, stats: dict[str, Any], log: Callable[..., dict],
                 mutant: str | None = None):
        self.sc = scenario
        self.stats = stats  # the run's counters: records_committed, records_replayed
        self.log = log
        self.mutant = mutant
        w = scenario.workload
        self.length = w.records_per_split if w.bounded else None
        self.splits: dict[int, SplitProgress] = {}
        self.owned: dict[int, list[int]] = {}  # source subtask -> splits, in state order
        self.snapshots: dict[tuple[int, int], tuple] = {}  # (checkpoint, split) -> SplitProgress.snapshot()
        self.committed: set[tuple[int, int, int, int]] = set()  # (txn checkpoint, split, start, end)

    def assign(self, subtask: int, split: int) -> None:
        """The enumerator hands ``split`` to ``subtask``'s reader, which reads it from the split's
        start. A split still held by a running reader (the PR hands a failed region's splits back
        to the enumerator while its readers run on, `regionchaos.protocol.enumerator`) is then read
        twice: the records from its start are emitted again into the sinks' open transactions,
        while the transactions already pre-committed stay pending. There is one progress per
        split, so the two readers' positions are folded into one: rewound to the start."""
        if split not in self.splits:
            self.splits[split] = SplitProgress(self.length)
        elif any(split in splits for splits in self.owned.values()):
            sp = self.splits[split]
            self.stats["records_replayed"] += sp.consumed
            sp.resume_from(0)
        if split not in self.owned.setdefault(subtask, []):
            self.owned[subtask].append(split)

    def advance(self, attempt: int) -> None:
        """Records flow between two checkpoints."""
        w = self.sc.workload
        lo, hi = w.records_per_interval
        live = sorted(s for splits in self.owned.values() for s in splits)
        draw = stream_rng(self.sc.seed, Stream.RATES, attempt)
        rates = draw.integers(lo, hi + 1, size=len(live))
        lags = draw.integers(0, w.inflight_max + 1, size=len(live)) if self.sc.flink.unaligned else None
        for i, split in enumerate(live):
            sp = self.splits[split]
            end = sp.length if sp.length is not None else None
            sp.src = sp.src + int(rates[i]) if end is None else min(end, sp.src + int(rates[i]))
            target = sp.src - (int(lags[i]) if lags is not None and sp.src != end else 0)
            if sp.consumed < sp.recovering_until:  # draining recovered channel state first
                target = min(target, sp.consumed + w.drain_per_interval)
            sp.consumed = max(sp.consumed, target)

    def all_consumed(self) -> bool:
        """Every owned split processed to its end (bounded input)."""
        return all(self.splits[s].consumed == self.splits[s].length for splits in self.owned.values() for s in splits)

    def source_done(self, subtask: int) -> bool:
        """The source subtask owns splits and has emitted every one of them to its end."""
        splits = self.owned.get(subtask, [])
        return bool(splits) and all(self.splits[s].src == self.splits[s].length for s in splits)

    def records_in(self) -> int:
        return sum(sp.src for sp in self.splits.values()) + self.stats["records_replayed"]

    # -- snapshots and the sink --------------------------------------------------------

    def snapshot(self, cid: int, task: Task, key: str, tm: int, rows: list[tuple]) -> dict[str, OperatorSubtaskState]:
        """The task's operator states for checkpoint ``cid``, stored in object ``key``; the state
        rows the data plane writes go to ``rows`` as ``(cid, tm, key, row)``, ``row`` in the
        data plane's compact form (the comment above `regionchaos.dataplane.FileTask`). The sink
        pre-commits its open transaction."""
        vertex, sub = task
        splits = tuple(self.owned.get(sub, []))
        recovering = False
        if vertex == SOURCE:
            if not splits:  # the data plane still writes the empty segment the metadata names
                rows.append((cid, tm, key, ("source", sub, -1, None)))
            offsets = []
            for split in splits:
                sp = self.splits[split]
                rows.append((cid, tm, key, ("source", sub, split, sp.src)))
                offsets.append(("offset", split, sp.src))
                rows.append((cid, tm, key, ("offsets", sub, offsets[-1], sp.src)))
            return {"source": OperatorSubtaskState((StateHandle(key, f"source/{sub}", cid, splits),)),
                    "offsets": OperatorSubtaskState((StateHandle(key, f"offsets/{sub}", cid, tuple(offsets)),))}
        unaligned = self.sc.flink.unaligned
        channels = []
        for split in splits:
            sp = self.splits[split]
            sp.precommit(cid)
            chan_start = sp.consumed
            if sp.consumed < sp.recovering_until:
                recovering = True
                if self.mutant == "drop-recovered-inflight":
                    chan_start = sp.recovering_until
            if unaligned and sp.src > chan_start:
                channels.append(ChannelStateHandle(key, f"counter/{sub}/channel/{split}", cid, split,
                                                   (chan_start, sp.src)))
            self.snapshots[(cid, split)] = sp.snapshot()
            rows.append((cid, tm, key, ("counter", sub, split, sp.consumed, tuple(tuple(r) for r in sp.lost),
                                        chan_start if unaligned else sp.src, sp.src,
                                        tuple(tuple(p) for p in sp.pending))))
        if recovering:
            self.log(Kind.CHECKPOINT_DURING_RECOVERY, checkpoint_id=cid, subtask=sub)
        epoch_element = ("epoch", cid, sub)
        rows.append((cid, tm, key, ("epoch", sub, epoch_element, sum(self.splits[s].consumed for s in splits))))
        rows.append((cid, tm, key, ("rules", sub, ("rules", 1), 1)))
        return {
            "counter": OperatorSubtaskState((StateHandle(key, f"counter/{sub}", cid, splits),), tuple(channels)),
            "epoch": OperatorSubtaskState((StateHandle(key, f"epoch/{sub}", cid, (epoch_element,)),)),
            "rules": OperatorSubtaskState((StateHandle(key, f"rules/{sub}", cid, (("rules", 1),)),)),
            "sink": OperatorSubtaskState((StateHandle(key, f"sink/{sub}", cid, splits),)),
        }

    def commit(self, split: int, which: Callable[[tuple], bool], task: Task, region: int, cid: int, cause: str,
               attempt: int) -> list[dict]:
        """Commit the split's pending transactions ``which`` selects (each at most once)."""
        sp = self.splits[split]
        out = []
        for txn in sp.take_pending(which):
            key = (txn[0], split, txn[1], txn[2])
            if key not in self.committed:
                self.committed.add(key)
                self.stats["records_committed"] += txn[2] - txn[1]
                out.append({"txn_checkpoint_id": txn[0], "split": split, "start": txn[1], "end": txn[2],
                            "subtask": task[1], "region": region, "notified_checkpoint_id": cid, "cause": cause,
                            "attempt": attempt, "lost": [list(r) for r in sp.lost if r[0] < txn[2] and r[1] > txn[1]]})
        return out

    def notified(self, subtask: int, region: int, cid: int, attempt: int) -> list[dict]:
        """notifyCheckpointComplete (or regional complete) at a sink subtask: commit up to ``cid``."""
        txns = []
        for split in self.owned.get(subtask, []):
            txns += self.commit(split, lambda t: t[0] <= cid, (PROCESS, subtask), region, cid, "notify", attempt)
        return txns

    # -- restarts ----------------------------------------------------------------------

    def restore(self, restored: Restored, partial: bool, parallelism: int, regions: dict[Task, int],
                attempt: int) -> list[dict]:
        """Tasks restart: sources rewind, the sink commits restored pending transactions and
        aborts the rest, recovered channel state is drained first. Returns the commits."""
        subs = {sub for _, sub in restored}
        before = {s for sub, splits in self.owned.items() if not partial or sub in subs for s in splits}
        if not partial:
            self.owned = {}
        txns = []
        for (vertex, sub), states in sorted(restored.items()):  # "process" before "source"
            if vertex == SOURCE:
                self.owned[sub] = list(states["source"].elements)
                self._resume_from_union_offsets(self.owned[sub], states["offsets"].elements)
                continue
            counter = states["counter"]
            channels = {c.channel: c.records for c in counter.channel_state}
            for h in counter.handles:
                for split in h.elements:
                    saved = self.snapshots[(h.checkpoint_id, split)]
                    sp = self.splits[split]
                    sp.pending = tuple(saved[3])
                    txns += self.commit(split, lambda t: True, (PROCESS, sub), regions[(PROCESS, sub)],
                                        h.checkpoint_id, "restore", attempt)
                    self.stats["records_replayed"] += max(0, sp.consumed - saved[1])
                    gone = sp.restart_from(saved, channels.get(split), unaligned=self.sc.flink.unaligned)
                    if gone is not None:
                        self.log(Kind.RECORDS_LOST, split=split, start=gone[0], end=gone[1])
        after = {s for sub in subs for s in self.owned.get(sub, [])}
        for split in sorted(before - after):
            # handed back to the enumerator: the next owner reads it from its start
            self.splits[split] = SplitProgress(self.length)
        for sub in range(parallelism):
            self.owned.setdefault(sub, [])
        return txns

    def _resume_from_union_offsets(self, splits: list[int], union: tuple) -> None:
        """The source resumes each of its splits from its union list state as the legacy
        FlinkKafkaConsumer does: every entry of the (complete) list is put into a map, the last
        entry for a split wins (`SplitProgress.resume_from`)."""
        chosen = {el[1]: el[2] for el in union if el[0] == "offset"}
        for split in splits:
            sp = self.splits.get(split)
            offset = chosen.get(split)
            if sp is not None and offset is not None and offset != sp.src:
                sp.resume_from(offset)

    def restart_from_scratch(self) -> None:
        """The whole job starts over with no state: every record consumed so far is consumed
        again (replayed, as after a restore from checkpoint 0)."""
        self.stats["records_replayed"] += sum(sp.consumed for sp in self.splits.values())
        self.splits = {split: SplitProgress(self.length) for split in self.splits}
        self.owned = {}
