"""The data plane: a control-plane Batch written to S3, the state files in bulk on Spark.

In:  `Batch`es from the emulator (state rows, ordered steps, events, planned storage
     faults), the run's `ObjectStore` (keys relative to ``runs/RUN_ID/``), the scenario
     (seed, TaskManagers, file merging), optionally a SparkSession and a mutant.
Out: the run's artifacts as docs/ARTIFACTS.md lays them out, and counters (S3 requests
     and bytes, wall seconds) in `S3Persistence.stats`. `S3Persistence` implements the
     emulator's `Persistence`: `flush`, `recover`, `delete_orphans` (and `list_objects`).

One flush = one Spark job. The state rows are grouped into one `FileTask` per
(checkpoint, TaskManager): its merged state file(s) (``checkpoints/chk-N/tm-T.state``,
or one file per task with file merging off) and the sink transactions pre-committed at N
(``sink/txn/chk-N/tm-T.json``). Spark tasks compute the counters' counts and sums from
the records themselves (`regionchaos.workload`, prefix sums per split, once per
partition), build their own `FaultyObjectStore` from the picklable `StorageConfig`,
and PUT with a thread pool. Planned storage faults are injected for real there: a
failed PUT leaves no object, a slow PUT is delayed by `SLOW_PUT_MS`. Each fault that
fired becomes a ``storage_fault`` history event.

Order of a flush (PROTOCOL.md section 4: metadata only after the objects it names):
  1. state objects and sink transactions (Spark job, or in-process without Spark);
  2. ``batch.steps``: ``metadata`` -> conditional PUT of ``chk-N/_metadata`` (a key
     already there raises `MetadataExists`); ``delete`` -> DeleteObjects of the
     cleaner's keys and the subsumed ``_metadata``; ``commit`` ->
     ``sink/commits/BBBBB-KKKK.json`` (K counts commit steps in the batch). Executed in
     bulk phases (all metadata, then all deletes, then all commits) with the same
     final state as one by one: see `S3Persistence._run_steps_now`;
  3. ``history/events-BBBBB.jsonl``, then ``ha/checkpoint-id-counter``.
Mutant ``metadata-before-state`` commits the metadata before step 1, and the state
objects of ``batch.crash_before_metadata`` are never uploaded (the JobManager died in
between); the sink's pre-commits of that checkpoint happened at snapshot time and stay.

``storage_fault`` events get ``seq`` = the batch's last ``seq`` + 1, + 2, ... (sorted by
checkpoint, TaskManager, fault); the emulator continues numbering after them, so seqs
stay unique integers. They carry ``fault`` (``put_failure|slow_put``), ``key``,
``checkpoint_id``, ``taskmanager`` and, for slow PUTs, ``delay_ms``.

Everything written is a function of the scenario and seed (sorted-key JSON, no wall
times), so the same seed under two run ids yields byte-identical artifacts.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from . import history, jsonform
from .emulator import Batch
from .faultkinds import STORAGE_PLANS
from .gcpause import paused, release_memory
from .task_side import object_key
from .history import Kind, dumps
from .protocol.checkpoint import CompletedCheckpoint
from .scenario import Scenario
from .storage import (
    FAIL_ALWAYS,
    FaultPlan,
    FaultyObjectStore,
    InjectedPutFailure,
    ObjectStore,
    StorageConfig,
    StorageError,
    StorageStats,
)
from .storage.s3 import cached_client
from .workload import record_values

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SLOW_PUT_MS = 50  # injected delay of a slow state-file PUT
PUT_THREADS = 16  # PUT threads per partition, and for the driver's bulk steps
SLICES_PER_CORE = 2  # Spark partitions per default-parallelism slot
MUTANT_METADATA_FIRST = "metadata-before-state"
COUNTER_KEY = "ha/checkpoint-id-counter"
PUT_FAILURE, SLOW_PUT = STORAGE_PLANS["failed_put_keys"], STORAGE_PLANS["slow_put_ms"]  # the kinds' names
NO_SPLIT = -1  # split of the emulator's placeholder row for a source subtask that owns none

# Compact state rows, as the emulation's snapshots make them and Spark tasks receive them (tuples: no
# dict per row, and they pickle small):
#   ("source", subtask, split, src)
#   ("counter", subtask, split, consumed, lost, chan_start, chan_end, pending)
#   ("offsets" | "epoch" | "rules", subtask, element, value)


class MetadataExists(StorageError):
    """``chk-N/_metadata`` was already on storage: an earlier run left it behind."""


@dataclass(frozen=True)
class FileTask:
    """The uploads of one TaskManager for one checkpoint (one unit of Spark work)."""

    checkpoint_id: int
    tm: int
    objects: tuple[tuple[str, tuple[tuple, ...]], ...]  # (state object key, compact rows)
    fault: str | None = None  # PUT_FAILURE | SLOW_PUT | None
    upload_state: bool = True  # False: the state objects are never uploaded (mutant crash)

    @property
    def txn_key(self) -> str:
        return f"sink/txn/chk-{self.checkpoint_id}/tm-{self.tm}.json"


@dataclass(frozen=True)
class UploadContext:
    """What a Spark task needs besides its FileTasks (small, picklable)."""

    config: StorageConfig
    run_prefix: str
    seed: int
    threads: int = PUT_THREADS
    slow_put_ms: int = SLOW_PUT_MS


# -- driver: planning ------------------------------------------------------------------


def plan_file_tasks(batch: Batch, scenario: Scenario, never_uploaded: int | None = None) -> list[FileTask]:
    """Group a batch's state rows into FileTasks, sorted by (TaskManager, checkpoint)
    so a Spark partition covers few TaskManagers and therefore few splits.
    ``never_uploaded``: a checkpoint whose state objects are not uploaded (its sink
    transactions still are: the sink pre-committed them at snapshot time)."""
    grouped: dict[tuple[int, int], dict[str, list[tuple]]] = {}
    for cid, tm, key, row in batch.state_rows:
        grouped.setdefault((cid, tm), {}).setdefault(key, []).append(row)
    tms = scenario.topology.taskmanagers
    for cid, tm in batch.put_failures:  # every subtask there declined: no rows, the PUT still fails
        grouped.setdefault((cid, tm), {}).setdefault(object_key(cid, ("source", tm), tms, True), [])
    out = []
    for (cid, tm), files in grouped.items():
        fault = PUT_FAILURE if (cid, tm) in batch.put_failures else SLOW_PUT if (cid, tm) in batch.slow_puts else None
        out.append(FileTask(cid, tm, tuple((k, tuple(rows)) for k, rows in sorted(files.items())),
                            fault=fault, upload_state=cid != never_uploaded))
    return sorted(out, key=lambda t: (t.tm, t.checkpoint_id))


# -- Spark task: building and uploading files ---------------------------------------------


class PrefixSums:
    """Per-split prefix sums of record values: count/sum of any range in O(1)."""

    def __init__(self, seed: int, needed: dict[int, int]):
        self.seed = seed
        self._prefix: dict[int, np.ndarray] = {}
        for split, end in needed.items():
            values = record_values(seed, split, 0, end)
            prefix = np.zeros(end + 1, dtype=np.int64)
            np.cumsum(values, out=prefix[1:])
            self._prefix[split] = prefix

    def count_sum(self, split: int, start: int, end: int, skipped: Iterable[tuple[int, int]] = ()) -> tuple[int, int]:
        """Like `workload.range_count_sum`: records ``[start, end)`` minus ``skipped``."""
        if end <= start:
            return 0, 0
        p = self._prefix[split]
        count, total = end - start, int(p[end] - p[start])
        last = start
        for a, b in sorted(skipped):  # merged walk: overlapping skipped ranges count once
            lo, hi = max(a, last), min(b, end)
            if hi > lo:
                count -= hi - lo
                total -= int(p[hi] - p[lo])
                last = hi
        return count, total


def _needed_offsets(tasks: list[FileTask]) -> dict[int, int]:
    needed: dict[int, int] = {}
    for task in tasks:
        for _, rows in task.objects:
            for row in rows:
                if row[0] != "counter":
                    continue
                _, _, split, consumed, _, _, chan_end, pending = row
                end = max(consumed, chan_end, *(t[2] for t in pending if t[0] == task.checkpoint_id))
                if end > needed.get(split, 0):
                    needed[split] = end
    return needed


def build_state_file(checkpoint_id: int, rows: Iterable[tuple], sums: PrefixSums) -> dict:
    """The merged state file of docs/ARTIFACTS.md from compact rows."""
    segments: dict[str, Any] = {}
    for row in rows:
        op, sub = row[0], row[1]
        if op == "source":
            entries = segments.setdefault(f"source/{sub}", [])
            segments.setdefault(f"offsets/{sub}", [])  # its union offsets: empty too for a subtask without splits
            if row[2] != NO_SPLIT:  # NO_SPLIT: a subtask without splits, its segment is empty
                entries.append({"split": row[2], "src": row[3]})
        elif op == "counter":
            _, _, split, consumed, lost, chan_start, chan_end, pending = row
            count, total = sums.count_sum(split, 0, consumed, lost)
            segments.setdefault(f"counter/{sub}", []).append(
                {"split": split, "consumed": consumed, "count": count, "sum": total, "lost": [list(r) for r in lost]})
            segments.setdefault(f"sink/{sub}", []).append({"split": split, "pending": [list(p) for p in pending]})
            if chan_end > chan_start:
                c_count, c_sum = sums.count_sum(split, chan_start, chan_end)
                segments[f"counter/{sub}/channel/{split}"] = {
                    "split": split, "start": chan_start, "end": chan_end, "count": c_count, "sum": c_sum}
        else:  # offsets / epoch (union), rules (broadcast); a process subtask without splits still
            # has its (empty) counter and sink segments: the metadata names them
            segments.setdefault(f"{op}/{sub}", []).append({"element": list(row[2]), "value": row[3]})
            if op == "epoch":
                segments.setdefault(f"counter/{sub}", [])
                segments.setdefault(f"sink/{sub}", [])
    return {"checkpoint_id": checkpoint_id, "segments": segments}


def build_transactions(task: FileTask, sums: PrefixSums) -> list[dict]:
    """Transactions the sink pre-committed at this checkpoint on this TaskManager."""
    out = []
    for _, rows in task.objects:
        for row in rows:
            if row[0] != "counter":
                continue
            _, _, split, _, lost, _, _, pending = row
            for txn_id, start, end in pending:
                if txn_id == task.checkpoint_id:
                    count, total = sums.count_sum(split, start, end, lost)
                    out.append({"txn_checkpoint_id": txn_id, "split": split, "start": start, "end": end,
                                "count": count, "sum": total})
    # in the order the sink wrote them: a transaction can hold two ranges of a split (recovered
    # channel records, then the source's records after it rewound); the last one written ends
    # where the split's channel state begins (a stable sort keeps the pending order)
    return sorted(out, key=lambda t: t["split"])


def write_partition(ctx: UploadContext, tasks_iter: Iterator[FileTask], client: Any = None, *,
                    release: bool = False) -> Iterator[dict]:
    """Spark task body: build and PUT the files of some FileTasks; yields one stats dict.

    ``client``: a boto3 client to use (in-process callers pass theirs); else one per
    worker process and storage config, cached across tasks (reused Python workers).
    ``release``: hand the worker's freed memory back afterwards (a Spark task; in-process
    callers, such as a swarm emulating many seeds in one task, leave that to themselves).
    """
    started = time.perf_counter()
    with paused():  # regionchaos.gcpause: the tasks' rows and the files built from them
        stats = _write_tasks(ctx, list(tasks_iter), client)
    if release:
        release_memory()  # a reused Python worker keeps its heap for the rest of the run otherwise
    stats["seconds"] = round(time.perf_counter() - started, 3)
    yield stats


def _write_tasks(ctx: UploadContext, tasks: list[FileTask], client: Any) -> dict:
    sums = PrefixSums(ctx.seed, _needed_offsets(tasks))
    failing = {key: FAIL_ALWAYS for t in tasks if t.fault == PUT_FAILURE for key, _ in t.objects}
    slow = {key: ctx.slow_put_ms for t in tasks if t.fault == SLOW_PUT for key, _ in t.objects}
    plan = FaultPlan(failed_put_keys=failing, slow_put_ms=slow)
    store = FaultyObjectStore(ctx.config, ctx.run_prefix, plan, client=client or cached_client(ctx.config))

    def put(key: str, body: bytes) -> bool:
        try:
            store.put(key, body)
            return True
        except InjectedPutFailure:  # planned: recorded in store.injected, the object stays absent
            return False

    state_files = txn_files = 0
    futures = []
    with _pool(ctx.threads) as pool:  # PUTs overlap building the next files
        for task in tasks:
            if task.upload_state:
                for key, rows in task.objects:
                    futures.append(pool.submit(put, key, dumps(build_state_file(task.checkpoint_id, rows, sums))))
                    state_files += 1
            txns = build_transactions(task, sums)
            if txns:
                futures.append(pool.submit(put, task.txn_key, dumps(txns)))
                txn_files += 1
        written = sum(f.result() for f in futures)  # a real storage error fails the Spark task
    return {"tasks": len(tasks), "state_files": state_files, "txn_files": txn_files, "puts_written": written,
            "storage": store.stats.as_dict(), "injected": list(store.injected)}


class _Inline:
    """A pool of no threads: ``submit`` runs the call at once (in-memory stores, ``threads=1``)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result(), as a pool would
            future.set_exception(exc)
        return future


def _pool(threads: int):
    return ThreadPoolExecutor(max_workers=threads) if threads > 1 else _Inline()


# -- the Persistence ------------------------------------------------------------------------


@dataclass
class DataPlaneStats:
    """The data plane's share of a run (S3 counts include the Spark tasks')."""

    s3: StorageStats = field(default_factory=StorageStats)
    flushes: int = 0
    spark_jobs: int = 0
    state_files: int = 0
    txn_files: int = 0
    storage_faults: int = 0
    wall_seconds: float = 0.0
    phase_seconds: dict[str, float] = field(default_factory=dict)  # plan, upload, steps, history

    def as_dict(self) -> dict[str, Any]:
        s3 = self.s3.as_dict()
        return {"s3_requests": s3["requests"], "s3_requests_by_op": s3["requests_by_op"],
                "s3_bytes_written": s3["bytes_written"], "s3_bytes_read": s3["bytes_read"],
                "flushes": self.flushes, "spark_jobs": self.spark_jobs, "state_files": self.state_files,
                "txn_files": self.txn_files, "storage_faults": self.storage_faults,
                "wall_seconds_data_plane": round(self.wall_seconds, 3),
                "wall_seconds_by_phase": {k: round(v, 3) for k, v in sorted(self.phase_seconds.items())}}


class S3Persistence:
    """The emulator's Persistence on S3: bulk state upload on Spark, commits and history from the driver.

    ``spark=None`` runs the same partition function in this process (no Spark job):
    for Spark-less callers, e.g. many small runs inside one Spark task.
    Partition S3 counts are merged into ``store.stats`` too, so that stays the run's
    total; `stats` is this data plane's part of it.
    """

    def __init__(self, store: ObjectStore, scenario: Scenario, *, mutant: str | None = None,
                 spark: SparkSession | None = None, threads: int = PUT_THREADS, slow_put_ms: int = SLOW_PUT_MS):
        self.store = store
        self.scenario = scenario
        self.mutant = mutant
        self.spark = spark
        self.context = UploadContext(store.config, store.run_prefix, scenario.seed, threads, slow_put_ms)
        self._stats = DataPlaneStats()

    @property
    def stats(self) -> dict[str, Any]:
        return self._stats.as_dict()

    # -- Persistence ----------------------------------------------------------------------

    def flush(self, batch: Batch) -> None:
        with self._measured():
            self._stats.flushes += 1
            metadata_first = self.mutant == MUTANT_METADATA_FIRST  # the mutant's one switch
            with self._phase("plan"):  # with metadata first, the crash falls before the state upload
                tasks = plan_file_tasks(batch, self.scenario, batch.crash_before_metadata if metadata_first else None)
                batch.state_rows = []  # planned: the rows go before the upload (1 M of them on large)
            if metadata_first:
                self._run_steps(batch, [s for s in batch.steps if s["op"] == "metadata"])
                injected = self._upload(tasks)
                self._run_steps(batch, [s for s in batch.steps if s["op"] != "metadata"])
            else:
                injected = self._upload(tasks)
                self._run_steps(batch, batch.steps)
            batch.events.extend(fault_events(batch, tasks, injected))
            self._stats.storage_faults += len(injected)
            with self._phase("history"):
                bodies = {s["checkpoint_id"]: s["body"] for s in batch.steps if s["op"] == "metadata"}
                self.store.put(history.key(batch.index), history.encode(batch.events, bodies))
                self.store.put(COUNTER_KEY, dumps(batch.counter))

    def recover(self) -> tuple[list[CompletedCheckpoint], int]:
        with self._measured():
            keys = [k for k in self.store.list_keys("checkpoints/") if k.endswith("/_metadata")]
            bodies = self.store.get_many(keys)
            checkpoints = sorted((CompletedCheckpoint.from_bytes(bodies[k]) for k in keys),
                                 key=lambda c: c.checkpoint_id)
            raw = self.store.get_or_none(COUNTER_KEY)
            if raw is not None:
                next_id = int(jsonform.loads(raw))
            else:  # never flushed: nothing can have been triggered
                next_id = max([c.checkpoint_id + 1 for c in checkpoints], default=self.scenario.first_checkpoint_id)
            return checkpoints, next_id

    def delete_orphans(self, live: set[str]) -> list[str]:
        with self._measured():
            orphans = [k for k in self.store.list_keys("checkpoints/")
                       if not k.endswith("/_metadata") and k not in live]
            self.store.delete_many(orphans)
            return orphans

    def list_objects(self, prefix: str = "") -> list[str]:
        """Keys under ``prefix`` (relative to the run prefix), sorted."""
        with self._measured():
            return self.store.list_keys(prefix)

    # -- internals --------------------------------------------------------------------------

    def _measured(self):
        return _Measured(self)

    @contextmanager
    def _phase(self, name: str):
        started = time.perf_counter()
        try:
            yield
        finally:
            phases = self._stats.phase_seconds
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

    def _upload(self, tasks: list[FileTask]) -> list[dict]:
        """State objects and sink transactions; returns the storage faults that fired."""
        if not tasks:
            return []
        with self._phase("upload"):
            return self._upload_now(tasks)

    def _upload_now(self, tasks: list[FileTask]) -> list[dict]:
        if self.spark is not None:
            slots = max(1, self.spark.sparkContext.defaultParallelism * SLICES_PER_CORE)
            slices = min(len(tasks), slots)
            rdd = self.spark.sparkContext.parallelize(tasks, numSlices=slices)
            self.spark.sparkContext.setJobDescription(f"regionchaos data plane: {len(tasks)} file tasks")
            try:
                results = rdd.mapPartitions(partial(write_partition, self.context, release=True)).collect()
            except Exception as exc:  # Py4JJavaError / PythonException: keep the worker's cause
                raise StorageError(f"data plane upload to {self.store.uri()} failed: {_root_cause(exc)}") from exc
            self._stats.spark_jobs += 1
        else:
            results = []
            step = max(1, -(-len(tasks) // (SLICES_PER_CORE * 2)))
            for i in range(0, len(tasks), step):
                results.extend(write_partition(self.context, iter(tasks[i:i + step]), client=self.store.client))
        injected = []
        for r in results:
            self.store.stats.merge(r["storage"])
            self._stats.state_files += r["state_files"]
            self._stats.txn_files += r["txn_files"]
            injected.extend(r["injected"])
        return injected

    def _run_steps(self, batch: Batch, steps: list[dict]) -> None:
        with self._phase("steps"):
            self._run_steps_now(batch, steps)

    def _run_steps_now(self, batch: Batch, steps: list[dict]) -> None:
        """The steps' outcome, in three bulk phases: every metadata commit, then every
        delete (DeleteObjects of up to 1000 keys), then every sink commit. Same final
        state as one step after the other: the steps of a batch touch distinct keys,
        except that a delete may remove an earlier step's ``_metadata``, and deletes
        still follow every metadata commit. Nothing observes the store mid-flush (the
        emulator models a JobManager crash at batch boundaries)."""
        unknown = {s["op"] for s in steps} - {"metadata", "delete", "commit"}
        if unknown:
            raise ValueError(f"unknown batch step(s) {sorted(unknown)}")
        commit_index = {id(s): k for k, s in enumerate(s for s in batch.steps if s["op"] == "commit")}
        metadata = [(f"checkpoints/chk-{s['checkpoint_id']}/_metadata", s["body"]) for s in steps if s["op"] == "metadata"]
        written = self._parallel([partial(self.store.put_if_absent, key, body) for key, body in metadata])
        existing = [key for (key, _), ok in zip(metadata, written) if not ok]
        if existing:
            raise MetadataExists(
                f"{self.store.uri(existing[0])} already exists: an earlier run left it. Checkpoint ids are never "
                f"reused within a run, so the run prefix {self.store.uri()} must be cleared before a re-run")
        doomed = [k for s in steps if s["op"] == "delete"
                  for k in list(s["keys"]) + [f"checkpoints/chk-{m}/_metadata" for m in s["subsumed"]]]
        if doomed:
            self.store.delete_many(list(dict.fromkeys(doomed)))
        commits = [(f"sink/commits/{batch.index:05d}-{commit_index[id(s)]:04d}.json", dumps(s["txns"]))
                   for s in steps if s["op"] == "commit"]
        self._parallel([partial(self.store.put, key, body) for key, body in commits])

    def _parallel(self, calls: list) -> list:
        if len(calls) <= 1 or self.context.threads <= 1:
            return [call() for call in calls]
        with ThreadPoolExecutor(max_workers=min(self.context.threads, len(calls))) as pool:
            futures = [pool.submit(call) for call in calls]
            return [f.result() for f in futures]


class _Measured:
    """Adds the wall time and the driver store's S3 counts of a block to the data plane's stats."""

    def __init__(self, owner: S3Persistence):
        self.owner = owner

    def __enter__(self):
        self.started = time.perf_counter()
        self.before = self.owner.store.stats.as_dict()

    def __exit__(self, *exc):
        after = self.owner.store.stats.as_dict()
        by_op = {op: n - self.before["requests_by_op"].get(op, 0) for op, n in after["requests_by_op"].items()}
        self.owner._stats.s3.merge({"requests_by_op": {op: n for op, n in by_op.items() if n},
                                    "bytes_written": after["bytes_written"] - self.before["bytes_written"],
                                    "bytes_read": after["bytes_read"] - self.before["bytes_read"]})
        self.owner._stats.wall_seconds += time.perf_counter() - self.started
        return False


def fault_events(batch: Batch, tasks: list[FileTask], injected: list[dict]) -> list[dict]:
    """``storage_fault`` events for the faults that fired, seq continuing the batch's."""
    where = {key: (t.checkpoint_id, t.tm) for t in tasks for key, _ in t.objects}
    attempt_of = {e["checkpoint_id"]: e["attempt"] for e in batch.events if e["kind"] == Kind.CHECKPOINT_TRIGGERED}
    last = batch.events[-1] if batch.events else {"seq": -1, "attempt": 0}
    rows = []
    for f in injected:
        cid, tm = where[f["key"]]
        event = {"kind": Kind.STORAGE_FAULT.value, "fault": f["kind"], "key": f["key"], "checkpoint_id": cid,
                 "taskmanager": tm, "attempt": attempt_of.get(cid, last["attempt"])}
        if "delay_ms" in f:
            event["delay_ms"] = f["delay_ms"]
        rows.append(event)
    rows.sort(key=lambda e: (e["checkpoint_id"], e["taskmanager"], e["fault"], e["key"]))
    return [{"seq": last["seq"] + 1 + i, **e} for i, e in enumerate(rows)]


def _root_cause(exc: BaseException) -> str:
    text = str(exc)
    for marker in ("StorageError", "StorageUnreachable", "BucketMissing"):
        i = text.rfind(marker)
        if i >= 0:
            return text[i:].splitlines()[0]
    return text.strip().splitlines()[-1] if text.strip() else type(exc).__name__
