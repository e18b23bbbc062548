"""Building the tables' rows from a run's artifacts: one section per group of tables.

In:  `RunArtifacts` (`artifacts.read_run`).
Out: `build_rows(art) -> dict[str, list[tuple]]`: table -> tuples in the column order of
     `SCHEMAS` (`schemas`); `region_rule`, the job's operators (`OPERATOR_VERTEX`,
     `OPERATOR_MODE`, `SPLIT_OPERATORS`). `spark` makes frames, Arrow and Spark tables of the rows.

Independence: values are never copied from the run's own bookkeeping where validation
must judge them. ``truth`` is recomputed from the seed with `regionchaos.workload`;
the regions of subtasks come from the job topology of the scenario; the parallelism
"of the time" is replayed from the history's restores, not read from the metadata.
The metadata of a completed checkpoint is its ``_metadata`` object where that is still on
storage, else the copy in the history's ``checkpoint_completed`` event (the only one left
once the cleaner subsumed it); both copies' digests are kept (``checkpoints``) so a rule
holds them equal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from ..findings import applicable_ids
from ..gcpause import paused
from ..history import Kind
from ..jsonform import dumps_str as _j  # the one JSON form of an element or list (compact, sorted keys)
from ..workload import range_count_sum, record_values
from .artifacts import RunArtifacts
from .schemas import _CHK, _COLUMNS, _TXN, SCHEMAS

# The job of PROTOCOL.md section 1: which vertex runs each operator, and how each
# operator's list state is redistributed on restore (section 5).
OPERATOR_VERTEX = {"source": "source", "offsets": "source", "counter": "process", "epoch": "process",
                   "rules": "process", "sink": "process"}
OPERATOR_MODE = {"source": "even-split", "offsets": "union", "counter": "even-split", "sink": "even-split",
                 "epoch": "union", "rules": "broadcast"}
SPLIT_OPERATORS = ("source", "counter", "sink")  # operators whose list elements are split ids


# The big tables' tuples are written out by hand (no `_Cols.add` keywords: ``large`` has 0.4-1.2 M rows
# of each), in this column order (`SCHEMAS`), checked here once.
_BY_HAND = {
    "entries": ("run_id", "checkpoint_id", "checkpoint_type", "operator", "vertex", "subtask", "region",
                "parallelism", "ref_checkpoint_id", "min_origin", "max_origin", "n_handles", "n_channels",
                "n_elements"),
    "entry_splits": ("run_id", "checkpoint_id", "operator", "subtask", "region", "split", "pos",
                     "origin_checkpoint_id", "ref_checkpoint_id", "object_key", "segment"),
    "task_responses": ("run_id", "checkpoint_id", "attempt", "vertex", "subtask", "region", "response", "at_ms",
                       "upload_ms", "reason"),
    "commits": ("run_id", "commit_file", "pos", "txn_checkpoint_id", "split", "start", "end", "subtask", "region",
                "notified_checkpoint_id", "cause", "attempt", "lost", "n_lost"),
    "transactions": ("run_id", "checkpoint_id", "tm", "pos", "txn_checkpoint_id", "split", "start", "end", "count",
                     "sum"),
}
EARLY_TABLES = ("task_responses", "entries", "entry_splits")  # complete before the last sections: `build_rows`'s done
for _name, _order in _BY_HAND.items():
    if _COLUMNS[_name] != _order:
        raise ImportError(f"the columns of {_name} changed in tables.schemas: update its rows in tables.rows")


def region_rule(topology: dict) -> Callable[[str, int, int], int]:
    """``(vertex, subtask, parallelism) -> pipeline region`` for the job topology (PROTOCOL.md section 1):
    forward + pipelined: region i = {source_i, process_i}; an ALL_TO_ALL pipelined edge
    joins everything into region 0; BLOCKING/HYBRID edges join nothing (regions are
    numbered source 0..P-1, then process P..2P-1). Made once per run: the rows ask it per entry."""
    pipelined = topology.get("exchange", "pipelined") == "pipelined"
    if pipelined and topology.get("partitioning", "forward") != "forward":
        return lambda vertex, subtask, parallelism: 0
    if pipelined:
        return lambda vertex, subtask, parallelism: subtask
    return lambda vertex, subtask, parallelism: subtask if vertex == "source" else parallelism + subtask


class _Cols:
    """Row accumulator for one table (tuples in column order; a column not given is None)."""

    def __init__(self, name: str):
        self.names = _COLUMNS[name]
        self.rows: list[tuple] = []

    def add(self, **row) -> None:
        self.rows.append(tuple(map(row.get, self.names)))


def _elements(handles: list) -> list:
    return [e for h in handles for e in h[3]]


def _keep(name: str, rows: list[tuple]) -> None:
    """`build_rows`'s ``done`` when none is given: the early tables stay in the rows it returns."""


@paused()
def build_rows(art: RunArtifacts, done: Callable[[str, list[tuple]], None] | None = None) -> dict[str, list[tuple]]:
    """All tables of one run as rows: table -> tuples in the column order of `SCHEMAS`
    (`build_frames` makes frames of them; the swarm's fast path gathers the rows of many
    runs and makes one Arrow table of them, `arrow_table`). One section per group of tables,
    in this order (a table's rows keep the order its sections add them in).

    ``done(name, rows)``: called with each of `EARLY_TABLES` as soon as its rows are complete, before
    the next section is built; a deep run's loader converts them there (and may empty the list), so a
    big run's biggest tables are never all in rows at once beside its parsed artifacts."""
    done = done or _keep
    rid = art.run_id
    t = {name: _Cols(name) for name in SCHEMAS}
    sc = art.scenario_doc.get("scenario", {})
    topo = sc.get("topology", {})
    first: dict[str, dict] = {}
    for e in art.events:
        first.setdefault(e["kind"], e)
    h = _replay_history(t, art, topo, first)
    done("task_responses", t["task_responses"].rows)
    # the metadata judged: the _metadata object where it is still on storage, else the history's copy
    # (the checkpoint_completed event); for the retained ones both copies' digests are kept, so a rule
    # can hold them equal (only those: re-encoding every copy would cost as much as parsing the history)
    stored = art.metadata_at_end
    digests = ({cid: _digest(h.meta[cid]) for cid in stored if cid in h.meta},
               {cid: _digest(doc) for cid, doc in stored.items()})
    meta = {**h.meta, **stored}
    _run_row(t["run"], art, first, h.heal_attempt)
    _checkpoint_rows(t["checkpoints"], rid, h, meta, stored, digests)
    split_ranges: set[tuple[int, int, int]] = set()
    _state_rows(t, art, meta, h, topo, split_ranges)
    done("entries", t["entries"].rows)
    done("entry_splits", t["entry_splits"].rows)
    _stored_segment_rows(t, rid, stored, art.state_files)
    _inventory_rows(t["inventory"], rid, art.inventory)
    _sink_rows(t, art, split_ranges)
    _truth(t["truth"], rid, int(art.scenario_doc.get("seed", sc.get("seed", 0))), split_ranges)
    _event_rows(t, rid, art.events, meta)
    return {name: cols.rows for name, cols in t.items()}


@dataclass
class _Replayed:
    """What replaying the history tells: per checkpoint id its trigger (with the parallelism and
    regions of the time, ``_p`` / ``_regions``), decision, completed metadata and its event's
    seq, voiding; the parallelism at the end and the attempt healing started at."""

    p_now: int
    trig: dict[int, dict] = field(default_factory=dict)
    dec: dict[int, dict] = field(default_factory=dict)
    meta: dict[int, dict] = field(default_factory=dict)
    completed_seq: dict[int, int] = field(default_factory=dict)
    voided: dict[int, dict] = field(default_factory=dict)
    heal_attempt: int | None = None


def _replay_history(t: dict, art: RunArtifacts, topo: dict, first: dict) -> _Replayed:
    """Walk the history once: task responses, deletions and retention intervals as rows, the
    rest (`_Replayed`) for the sections that follow."""
    rid = art.run_id
    started = first.get(Kind.RUN_STARTED, {})
    p_now = int(started.get("parallelism", topo.get("parallelism", 1)))
    regions_now = int(started.get("regions", p_now))
    h = _Replayed(p_now, heal_attempt=first[Kind.HEAL_STARTED]["attempt"] if Kind.HEAL_STARTED in first else None)
    open_from: dict[int, int] = {}
    responses = t["task_responses"].rows  # `_BY_HAND`
    region = region_rule(topo)
    for e in art.events:
        k = e["kind"]
        if k == Kind.GLOBAL_RESTORE:
            p_now, regions_now = int(e["new_parallelism"]), int(e["regions"])
        elif k == Kind.CHECKPOINT_TRIGGERED:
            h.trig[e["checkpoint_id"]] = {**e, "_p": p_now, "_regions": regions_now}
        elif k == Kind.TASK_RESPONSES:  # the task side's record, apart from the coordinator's decision
            cid, attempt = e["checkpoint_id"], e.get("attempt")
            responses.extend([(rid, cid, attempt, vertex, sub, region(vertex, sub, p_now), response, at_ms,
                               upload_ms, reason) for vertex, sub, response, at_ms, upload_ms, reason in e["tasks"]])
        elif k == Kind.CHECKPOINT_DECIDED:
            cid = e["checkpoint_id"]
            h.dec[cid] = e
            cause = "abort" if e["status"] == "ABORTED" else "cleaner"
            for key in e.get("deleted_keys") or []:
                t["deletions"].add(run_id=rid, seq=e["seq"], checkpoint_id=cid, object_key=key, cause=cause)
            for old in e.get("subsumed") or []:
                if old in open_from:
                    t["retention"].add(run_id=rid, checkpoint_id=old, from_seq=open_from.pop(old), to_seq=e["seq"])
            if e["status"] != "ABORTED":
                open_from[cid] = e["seq"]
        elif k == Kind.CHECKPOINT_COMPLETED:
            h.meta[e["checkpoint_id"]] = e["metadata"]
            h.completed_seq[e["checkpoint_id"]] = e["seq"]
            open_from.setdefault(e["checkpoint_id"], e["seq"])
        elif k == Kind.CHECKPOINT_VOIDED:
            h.voided[e["checkpoint_id"]] = e
        elif k == Kind.JOBMANAGER_FAILOVER:
            recovered = set(e.get("recovered") or [])
            for cid in sorted(open_from):
                if cid not in recovered:
                    t["retention"].add(run_id=rid, checkpoint_id=cid, from_seq=open_from.pop(cid), to_seq=e["seq"])
            for cid in recovered:
                open_from.setdefault(cid, e["seq"])
            for key in e.get("orphan_keys") or []:
                t["deletions"].add(run_id=rid, seq=e["seq"], checkpoint_id=None, object_key=key, cause="orphan")
    for cid, frm in sorted(open_from.items()):
        t["retention"].add(run_id=rid, checkpoint_id=cid, from_seq=frm, to_seq=None)
    h.p_now = p_now
    return h


def _chains(meta: dict[int, dict]) -> tuple[dict, dict, dict]:
    """Per checkpoint: the checkpoints its entries reference, its ref-chain depth, its staleness
    (its id minus the oldest origin of its state)."""
    ref_ids: dict[int, list[int]] = {}
    depth: dict[int, int] = {}
    staleness: dict[int, int] = {}
    for cid in sorted(meta):
        entries = meta[cid]["operatorSubtaskStates"]
        refs = sorted({en["refCheckpointId"] for en in entries if en["refCheckpointId"] is not None})
        ref_ids[cid] = refs
        depth[cid] = 0 if not refs else 1 + max(depth.get(r, 0) for r in refs)
        origins = [h[2] for en in entries for h in en["handles"]]
        staleness[cid] = cid - min(origins) if origins else 0
    return ref_ids, depth, staleness


def _run_row(table: _Cols, art: RunArtifacts, first: dict, heal_attempt: int | None) -> None:
    """The run's one row: its settings as recorded in scenario.json, the findings that apply to them
    (`findings.applicable_ids`), and how far it got."""
    sc = art.scenario_doc.get("scenario", {})
    topo, work, flink = sc.get("topology", {}), sc.get("workload", {}), sc.get("flink", {})
    faults = sc.get("faults", {})
    started = first.get(Kind.RUN_STARTED, {})
    table.add(
        run_id=art.run_id, scenario=sc.get("name"), seed=int(art.scenario_doc.get("seed", sc.get("seed", 0))),
        mutant=art.scenario_doc.get("mutant"),
        bounded=bool(work.get("bounded", False)), records_per_split=int(work.get("records_per_split", 0)),
        splits_total=int(work.get("splits", 0)) + int(work.get("discovered_splits", 0)),
        initial_splits=int(work.get("splits", 0)),
        unaligned=bool(flink.get("execution.checkpointing.unaligned.enabled", False)),
        region_enabled=bool(started.get("region_enabled", flink.get("execution.checkpointing.region.enabled", False))),
        max_failure_ratio=float(flink.get("execution.checkpointing.region.max-failure-ratio", 0.5)),
        max_consecutive_failures=int(flink.get("execution.checkpointing.region.max-consecutive-failures", 3)),
        num_retained=int(flink.get("state.checkpoints.num-retained", 1)),
        heal_checkpoints=int(faults.get("heal_checkpoints", 3)),
        forced_global_policy=flink.get("execution.checkpointing.region.forced-global-failure", "reset-counter"),
        coordinator_fallback=bool(topo.get("coordinator_fallback", True)),
        partitioning=topo.get("partitioning", "forward"), exchange=topo.get("exchange", "pipelined"),
        file_merging=bool(flink.get("execution.checkpointing.file-merging.enabled", True)),
        initial_parallelism=int(topo.get("parallelism", started.get("parallelism", 1))),
        first_checkpoint_id=int(sc.get("first_checkpoint_id", 1)), fault_attempts=int(sc.get("checkpoints", 0)),
        heal_attempt=heal_attempt, started=Kind.RUN_STARTED in first, run_finished=Kind.RUN_FINISHED in first,
        job_finished=Kind.JOB_FINISHED in first, job_not_finished=Kind.JOB_NOT_FINISHED in first,
        history_events=len(art.events), history_files=art.history_files,
        timeout_ms=int(flink.get("execution.checkpointing.timeout", 600_000)),
        region_timeout_ms=flink.get("execution.checkpointing.region.timeout"),
        semantics=flink.get("execution.checkpointing.region.semantics", "flip"),
        findings=applicable_ids(sc),  # the findings whose mechanisms may tag its violating rows
    )


def _checkpoint_rows(table: _Cols, rid: str, h: _Replayed, meta: dict, stored: dict, digests: tuple) -> None:
    """One row per checkpoint id the run saw: trigger, decision, metadata, chain, digests."""
    history_digest, stored_digest = digests
    ref_ids, depth, staleness = _chains(meta)
    for cid in sorted(set(h.trig) | set(h.dec) | set(h.voided) | set(stored)):
        tr, d, m = h.trig.get(cid, {}), h.dec.get(cid), meta.get(cid)
        status = d["status"] if d else ("VOIDED" if cid in h.voided else None)
        attempt = tr.get("attempt", d["attempt"] if d else None)
        cs = (m or {}).get("coordinatorState") or {}
        table.add(
            run_id=rid, checkpoint_id=cid, attempt=attempt, trigger_seq=tr.get("seq"),
            decided_seq=d["seq"] if d else None, status=status, completed=m is not None, voided=cid in h.voided,
            reason=d.get("reason") if d else None,
            forced_global=bool(d["forced_global"]) if d else tr.get("forced_global"),
            final=bool(d["final"]) if d else tr.get("final"), trigger_counter=tr.get("counter"),
            failed_regions=list(d["failed_regions"]) if d else None,
            failed_region_count=len(d["failed_regions"]) if d else None,
            num_regions=d["num_regions"] if d else None,
            declined_count=len(d["declined"]) if d else None, timed_out_count=len(d["timed_out"]) if d else None,
            counter_before=d["counter_before"] if d else None, counter_after=d["counter_after"] if d else None,
            max_failure_ratio=d["max_failure_ratio"] if d else None,
            max_consecutive_failures=d["max_consecutive_failures"] if d else None,
            region_enabled=d["region_enabled"] if d else None,
            subsumed=[int(x) for x in d["subsumed"]] if d else None, deleted_count=d.get("deleted") if d else None,
            healing=h.heal_attempt is not None and attempt is not None and attempt >= h.heal_attempt,
            job_parallelism=tr.get("_p"), job_regions=tr.get("_regions"),
            metadata_type=m["type"] if m else None,
            metadata_parallelism=_j(m["parallelism"]) if m else None,
            consecutive_regional=m["consecutiveRegional"] if m else None,
            coord_discovered=list(cs["discovered"]) if "discovered" in cs else None,
            coord_unassigned=list(cs["unassigned"]) if "unassigned" in cs else None,
            entry_count=len(m["operatorSubtaskStates"]) if m else None,
            ref_ids=ref_ids.get(cid), ref_depth=depth.get(cid), staleness=staleness.get(cid),
            completed_seq=h.completed_seq.get(cid), stored_digest=stored_digest.get(cid),
            history_digest=history_digest.get(cid),
        )


def _state_rows(t: dict, art: RunArtifacts, meta: dict, h: _Replayed, topo: dict,
                split_ranges: set[tuple[int, int, int]]) -> None:
    """Each completed checkpoint's entries as named by its metadata (entries, entry_splits,
    handles), and what the named segments hold in the state objects (state_values,
    channel_state); the record ranges seen go into ``split_ranges`` (for the truth table).

    The hot loop of a big run (``large``: 1.2 M entries, 0.8 M entry splits): the region rule is
    made once per run (`region_rule`), each operator's vertex and parallelism looked up once per
    checkpoint, and the two big tables get their tuples in column order (`_BY_HAND`)."""
    rid = art.run_id
    readable = {k for k, _ in art.inventory} & art.state_files.keys()  # on storage at the end, and read
    entry_rows, split_rows = t["entries"].rows, t["entry_splits"].rows
    region_at = region_rule(topo)
    for cid in sorted(meta):
        m = meta[cid]
        p_time = h.trig.get(cid, {}).get("_p", h.p_now)
        ctype, parallelism = m["type"], m["parallelism"]
        per_object: dict[str, int] = {}
        operators: dict[str, tuple[str, int]] = {}  # operator -> (vertex, parallelism), this checkpoint's
        for en in m["operatorSubtaskStates"]:
            op, sub, ref = en["operator"], int(en["subtask"]), en["refCheckpointId"]
            known = operators.get(op)
            if known is None:
                known = operators[op] = (OPERATOR_VERTEX.get(op, "process"), int(parallelism.get(op, p_time)))
            vertex, par = known
            region = region_at(vertex, sub, p_time)
            handles, channels = en["handles"], en["channelState"]
            lo = hi = None
            pos = 0
            split_op = op in SPLIT_OPERATORS
            for key, seg, origin, els in handles:
                if lo is None or origin < lo:
                    lo = origin
                if hi is None or origin > hi:
                    hi = origin
                per_object[key] = per_object.get(key, 0) + 1
                if split_op:
                    split_rows.extend([(rid, cid, op, sub, region, el, i, origin, ref, key, seg)
                                       for i, el in enumerate(els, pos)])
                elif op == "offsets":  # union list state: the split each element is about (F2's evidence)
                    for i, el in enumerate(els, pos):
                        split = _offset_split(op, el)
                        if split is not None:
                            split_rows.append((rid, cid, op, sub, region, split, i, origin, ref, key, seg))
                pos += len(els)
                if key in readable:
                    _state_values(t["state_values"], rid, cid, op, sub, ref, origin, key, seg, els,
                                  art.state_files[key].get("segments", {}).get(seg), split_ranges)
            for key, seg, origin, channel, rec in channels:
                if lo is None or origin < lo:
                    lo = origin
                if hi is None or origin > hi:
                    hi = origin
                per_object[key] = per_object.get(key, 0) + 1
                is_readable = key in readable
                seg_doc = art.state_files[key].get("segments", {}).get(seg) if is_readable else None
                t["channel_state"].add(
                    run_id=rid, checkpoint_id=cid, operator=op, subtask=sub, ref_checkpoint_id=ref,
                    origin_checkpoint_id=origin, split=int(channel), start=int(rec[0]), end=int(rec[1]),
                    object_key=key, segment=seg, readable=is_readable, found=seg_doc is not None,
                    seg_start=(seg_doc or {}).get("start"), seg_end=(seg_doc or {}).get("end"),
                    seg_count=(seg_doc or {}).get("count"), seg_sum=(seg_doc or {}).get("sum"),
                )
                if seg_doc is not None:
                    split_ranges.add((int(channel), int(seg_doc["start"]), int(seg_doc["end"])))
            entry_rows.append((rid, cid, ctype, op, vertex, sub, region, par, ref, lo, hi, len(handles),
                               len(channels), pos))  # pos: the handles' elements
        for key, n in sorted(per_object.items()):
            t["handles"].add(run_id=rid, checkpoint_id=cid, object_key=key, source="completed", n_segments=n)


def _state_values(table: _Cols, rid: str, cid: int, op: str, sub: int, ref, origin, key: str, seg: str,
                  els: list, segment, split_ranges: set[tuple[int, int, int]]) -> None:
    """What one handle's segment of a state object holds for each of its elements (state_values);
    a counter's consumed range goes into ``split_ranges``."""
    for el in els:
        row = _segment_row(op, el, segment)
        table.add(
            run_id=rid, checkpoint_id=cid, operator=op, subtask=sub, ref_checkpoint_id=ref,
            origin_checkpoint_id=origin, object_key=key, segment=seg, found=row is not None,
            split=int(el) if op in SPLIT_OPERATORS else _offset_split(op, el),
            element=_j(el), **(row or {}),
        )
        if row is not None and op == "counter" and row.get("consumed") is not None:
            split_ranges.add((int(el), 0, int(row["consumed"])))


def _stored_segment_rows(t: dict, rid: str, stored: dict, state_files: dict) -> None:
    """The segments the ``_metadata`` objects still on storage name (named_segments, handles
    with source ``storage``), and what the state objects read from storage hold (object_segments)."""
    for cid, doc in sorted(stored.items()):
        per_object: dict[str, int] = {}
        for en in doc["operatorSubtaskStates"]:
            op, sub = en["operator"], int(en["subtask"])
            for kind, handles in (("state", en["handles"]), ("channel", en["channelState"])):
                for x in handles:
                    per_object[x[0]] = per_object.get(x[0], 0) + 1
                    t["named_segments"].add(run_id=rid, checkpoint_id=cid, operator=op, subtask=sub, kind=kind,
                                            object_key=x[0], segment=x[1])
        for key, n in sorted(per_object.items()):
            t["handles"].add(run_id=rid, checkpoint_id=cid, object_key=key, source="storage", n_segments=n)
    for key, file in sorted(state_files.items()):
        for seg, value in sorted((file.get("segments") or {}).items()):
            t["object_segments"].add(run_id=rid, object_key=key, segment=seg,
                                     items=len(value) if isinstance(value, list) else 1)


def _inventory_rows(table: _Cols, rid: str, inventory: list[tuple[str, int]]) -> None:
    """The final listing: every object, its area (first path part) and, for checkpoint objects,
    its checkpoint id and kind."""
    for key, size in inventory:
        mt = _CHK.match(key)
        area = key.split("/", 1)[0] if "/" in key else key
        if mt:
            kind = "metadata" if mt.group(2) == "_metadata" else "state"
            table.add(run_id=rid, key=key, area=area, checkpoint_id=int(mt.group(1)), kind=kind, size_bytes=size)
        else:
            table.add(run_id=rid, key=key, area=area, checkpoint_id=None, kind="other", size_bytes=size)


def _sink_rows(t: dict, art: RunArtifacts, split_ranges: set[tuple[int, int, int]]) -> None:
    """The sink's committed transactions (commits) and pre-committed transaction files
    (transactions); their record ranges go into ``split_ranges``."""
    rid = art.run_id
    commits, transactions = t["commits"].rows, t["transactions"].rows  # `_BY_HAND`
    for name, txns in art.commits:
        for i, c in enumerate(txns):
            lost = c.get("lost") or []
            commits.append((rid, name, i, c["txn_checkpoint_id"], c["split"], c["start"], c["end"], c.get("subtask"),
                            c.get("region"), c.get("notified_checkpoint_id"), c.get("cause"), c.get("attempt"),
                            _j(lost), len(lost)))
    for name, txns in art.transactions:
        mt = _TXN.match(name)
        cid, tm = int(mt.group(1)), int(mt.group(2))
        for i, x in enumerate(txns):
            transactions.append((rid, cid, tm, i, x["txn_checkpoint_id"], x["split"], x["start"], x["end"],
                                 x.get("count"), x.get("sum")))
            split_ranges.add((int(x["split"]), int(x["start"]), int(x["end"])))


def _event_rows(t: dict, rid: str, events: list[dict], meta: dict) -> None:
    """The history as rows (events), and each global restore's redistribution of state."""
    for e in events:
        detail = {k: v for k, v in e.items() if k not in ("metadata", "restored", "seq", "attempt", "kind", "tasks")}
        recovered = e.get("recovered")
        t["events"].add(
            run_id=rid, seq=e["seq"], attempt=e.get("attempt"), kind=e["kind"], checkpoint_id=e.get("checkpoint_id"),
            region=e.get("region"), subtask=e.get("subtask"), split=e.get("split"), start=e.get("start"),
            end=e.get("end"), cause=e.get("cause"), restore_from=e.get("restore_from"),
            recovered_latest=max(recovered) if recovered else None, detail=_j(detail),
        )
        if e["kind"] == Kind.GLOBAL_RESTORE:
            _redistribution(t["redistributions"], rid, e, meta.get(e["restore_from"]))


def _digest(doc: dict) -> str:
    """One checkpoint metadata document, hashed in the one JSON form (`_j`): equal digests, equal metadata."""
    return hashlib.sha256(_j(doc).encode()).hexdigest()


def _offset_split(op: str, element: Any) -> int | None:
    """The split an ``offsets`` (union list state) element ``["offset", split, src]`` is about."""
    if op == "offsets" and isinstance(element, (list, tuple)) and len(element) == 3:
        return int(element[1])
    return None


def _segment_row(op: str, element: Any, segment: Any) -> dict | None:
    """The state of one list element, decoded from its segment of a state file."""
    if segment is None:
        return None
    if op in SPLIT_OPERATORS:
        for r in segment:
            if r.get("split") == element:
                if op == "source":
                    return {"src": r.get("src")}
                if op == "counter":
                    lost = r.get("lost") or []
                    return {"consumed": r.get("consumed"), "count": r.get("count"), "sum": r.get("sum"),
                            "lost": _j(lost), "n_lost": len(lost)}
                return {"pending": _j(r.get("pending") or [])}
        return None
    for r in segment:
        if r.get("element") == element or (isinstance(element, list) and r.get("element") == list(element)):
            return {"value": r.get("value")}
    return None


def _truth(cols: _Cols, rid: str, seed: int, ranges: Iterable[tuple[int, int, int]]) -> None:
    """count/sum of records [start, end) of each split, from the seed alone.

    Ranges starting at 0 (a counter's [0, consumed)) use `range_count_sum` directly;
    the many small transaction ranges share one prefix-sum array per split built from
    `record_values` (the same pure function)."""
    by_split: dict[int, list[tuple[int, int]]] = {}
    for split, start, end in ranges:
        by_split.setdefault(split, []).append((start, end))
    for split, rs in sorted(by_split.items()):
        top = max(e for _, e in rs)
        prefix = None
        if len(rs) > 8 and top > 0:
            prefix = np.zeros(top + 1, dtype=np.int64)
            np.cumsum(record_values(seed, split, 0, top), out=prefix[1:])
        for start, end in sorted(set(rs)):
            if end <= start:
                count, total = 0, 0
            elif prefix is not None:
                count, total = end - start, int(prefix[end] - prefix[start])
            else:
                count, total = range_count_sum(seed, split, start, end)
            cols.add(run_id=rid, split=split, start=start, end=end, count=count, sum=total)


def _redistribution(cols: _Cols, rid: str, e: dict, old_meta: dict | None) -> None:
    """Old entries (the restore-from checkpoint's metadata) vs the new elements per new subtask.

    The old parallelism of an operator is the one its state was written at: the restore-from
    checkpoint's (its metadata's ``parallelism``), not the job's just before the restore, which
    differs when a restore follows a rescale before any checkpoint at the new parallelism
    completed (the event's ``old_parallelism`` is the job's; it is used only without metadata)."""
    base = dict(run_id=rid, restore_id=e["restore_id"], restore_seq=e["seq"], cause=e.get("cause"),
                restore_from=e["restore_from"], new_parallelism=e["new_parallelism"])
    written_at = (old_meta or {}).get("parallelism") or {}

    def add(op: str, **row) -> None:
        cols.add(**base, old_parallelism=int(written_at.get(op, e["old_parallelism"])), operator=op,
                 mode=OPERATOR_MODE.get(op), **row)

    if old_meta is not None:
        for en in sorted(old_meta["operatorSubtaskStates"], key=lambda x: (x["operator"], x["subtask"])):
            op = en["operator"]
            for pos, el in enumerate(_elements(en["handles"])):
                add(op, side="old", kind="element", subtask=en["subtask"], pos=pos, element=_j(el))
            for c in en["channelState"]:
                add(op, side="old", kind="channel", subtask=en["subtask"], channel=int(c[3]), start=int(c[4][0]),
                    end=int(c[4][1]))
    for op, sub, elements, channels in e.get("restored") or []:
        for pos, el in enumerate(elements):
            add(op, side="new", kind="element", subtask=sub, pos=pos, element=_j(el))
        for channel, start, end in channels:
            add(op, side="new", kind="channel", subtask=sub, channel=int(channel), start=int(start), end=int(end))
