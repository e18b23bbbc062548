"""A real-Flink run's stored artifacts as rows of the suites' tables (the same `SCHEMAS` as the emulation's).

In:  the run's `ObjectStore` holding what `regionchaos.flink.artifacts.store_artifacts` wrote under ``flink/``:
     ``run.json`` (spec, final state, why unknown), ``source.json`` (records 0..N-1, K keys),
     ``metadata/JOB/chk-N.json`` (Flink's own reader's dump of each copied ``_metadata``),
     ``inventory.json`` (every checkpoint file the watcher saw; files that vanished between listing and stat),
     ``sink/NAME`` (the committed part files, ``key,count,seq`` lines).
Out: `build_rows(store, run_id)` -> table -> row tuples in `SCHEMAS` order, for every table; filled:
     - ``run``: one row; a bounded job of ONE split (the source's seq range, ``records_per_split`` = N);
       ``started`` when ``run.json`` is there, ``run_finished`` only when the job FINISHED and nothing made the
       run unknown (else every applicable suite's ``_evaluable`` says unknown), ``job_finished``;
     - ``commits`` / ``transactions``: one row per committed line, the record ``seq`` as the range [seq, seq+1)
       of split 0; the transaction holds count 1 and sum = the line's key (``txn_checkpoint_id`` 0: which
       checkpoint committed a part file is not in the artifacts); a line that does not parse is a commit with
       no range and no transaction;
     - ``truth``: from ``source.json`` only, one row per seq: count 1, sum = seq mod K (the key it must carry);
     - ``handles`` (source ``storage``): every file (not inline) a dumped checkpoint names, relative to the
       checkpoint root as the inventory names it;
     - ``inventory``: every file the watcher saw (area ``checkpoints``, kind ``metadata`` for ``_metadata`` and its
       in-progress temporary file, else ``state``); a named file never seen is a loss when a _metadata naming it
       was seen by two scans, else a race: a row of kind ``unresolved``, which makes storage_safety unknown.
     The other tables stay empty: the suites reading them do not apply to ``flink`` (suite YAML ``applies_to``).
     `storage_counts`: named files, lost, unresolved, files nothing names (a leak: counted, not judged).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from regionchaos.flink.artifacts import PREFIX, SINK, file_handles
from regionchaos.flink.checks import parse_lines
from regionchaos.storage import ObjectStore
from regionchaos.tables import TABLES, column_names

SPLIT = 0  # the source's one seq range
UNATTRIBUTED_TXN = 0  # a committed part file's checkpoint: not in a real run's artifacts
UNRESOLVED = "unresolved"  # inventory kind of a named file a race leaves undecided (never an emulation kind)
_DUMP = re.compile(r"^flink/metadata/([^/]+)/chk-(\d+)\.json$")
_CHK = re.compile(r"^chk-(\d+)$")


def row(table: str, **values) -> tuple:
    """One row of ``table`` in `SCHEMAS` order (unnamed columns null); a column it lacks raises."""
    names = column_names(table)
    unknown = set(values) - set(names)
    if unknown:
        raise KeyError(f"{table} has no column(s) {sorted(unknown)}")
    return tuple(values.get(name) for name in names)


def read_json(store: ObjectStore, key: str) -> dict:
    return json.loads(store.get(key))


def dumps_of(store: ObjectStore) -> dict[tuple[str, int], dict]:
    """The stored metadata dumps by (job id, checkpoint id)."""
    out = {}
    for key in store.list_keys(PREFIX + "metadata/"):
        match = _DUMP.match(key)
        if match:
            out[(match.group(1), int(match.group(2)))] = read_json(store, key)
    return out


def run_row(run_id: str, record: dict) -> tuple:
    spec, source = record["spec"], record["source"]
    finished = record.get("final_state") == "FINISHED"
    return row("run", run_id=run_id, scenario="real-flink", seed=int(spec["seed"]), bounded=True,
               records_per_split=int(source["records"]), splits_total=1, initial_splits=1, unaligned=False,
               region_enabled=False, num_retained=int(spec["retained"]),
               initial_parallelism=int(spec["parallelism"]), fault_attempts=len(record.get("faults_planned", [])),
               started=True, run_finished=finished and not record.get("unknown_because"),
               job_finished=finished, job_not_finished=not finished, semantics="released",
               findings="")  # no finding is about a real Flink run (`findings.applicable`)


def sink_rows(store: ObjectStore, run_id: str) -> tuple[list[tuple], list[tuple]]:
    """(commits, transactions): one of each per committed line; a malformed line a commit without range."""
    commits, transactions = [], []
    for key in store.list_keys(SINK):
        name = key[len(SINK):]
        rows, bad = parse_lines(store.get(key).decode().splitlines())
        for pos, (key_, _count, seq) in enumerate(rows):
            commits.append(row("commits", run_id=run_id, commit_file=name, pos=pos,
                               txn_checkpoint_id=UNATTRIBUTED_TXN, split=SPLIT, start=seq, end=seq + 1,
                               cause="notify", n_lost=0))
            transactions.append(row("transactions", run_id=run_id, pos=pos, txn_checkpoint_id=UNATTRIBUTED_TXN,
                                    split=SPLIT, start=seq, end=seq + 1, count=1, sum=key_))
        commits += [row("commits", run_id=run_id, commit_file=name, pos=len(rows) + i,
                        txn_checkpoint_id=UNATTRIBUTED_TXN, split=SPLIT, cause="notify", n_lost=0)
                    for i in range(len(bad))]
    return commits, transactions


def truth_rows(run_id: str, source: dict) -> list[tuple]:
    """What the source's range says each committed record must be: seq once, carrying key seq mod K."""
    keys = int(source["keys"])
    return [row("truth", run_id=run_id, split=SPLIT, start=seq, end=seq + 1, count=1, sum=seq % keys)
            for seq in range(int(source["records"]))]


def relative_to_root(path: str, jobs: set[str]) -> str:
    """A handle's absolute path as the inventory names it: from the job-id folder on (kept whole if none)."""
    parts = PurePosixPath("/" + path.removeprefix("file:").lstrip("/")).parts
    for i, part in enumerate(parts):
        if part in jobs:
            return "/".join(parts[i:])
    return "/".join(parts)


def named_files(dumps: dict[tuple[str, int], dict], jobs: set[str]) -> dict[str, set[tuple[str, int]]]:
    """Every file a dumped checkpoint names (file handles only: inline ones are not files) -> the
    (job, checkpoint id) of the checkpoints naming it."""
    named: dict[str, set[tuple[str, int]]] = {}
    for (job, chk), dump in dumps.items():
        for handle in file_handles(dump):
            named.setdefault(relative_to_root(handle["path"], jobs), set()).add((job, chk))
    return named


def metadata_seen_twice(inventory: dict) -> set[tuple[str, int]]:
    """The checkpoints whose ``_metadata`` two scans saw: every file it names was there at the second scan's
    listing (written before the _metadata, deleted only after it), so one never seen is lost, not raced."""
    out = set()
    for r in inventory.get("files", []):
        parts = r["path"].split("/")
        match = _CHK.match(parts[1]) if len(parts) == 3 and parts[2] == "_metadata" else None
        if match and r.get("last_seen_s", 0) > r.get("first_seen_s", 0):
            out.add((parts[0], int(match.group(1))))
    return out


def classify(dumps: dict, inventory: dict) -> tuple[dict[str, set], dict[str, int | None], set[str], set[str]]:
    """(named files, seen files, lost: named and never seen although a naming _metadata was seen twice,
    unresolved: named, never seen, and every naming _metadata seen in one scan only: a race, unknown)."""
    seen = seen_files(inventory)
    jobs = {path.split("/")[0] for path in seen} | {job for job, _chk in dumps}
    named = named_files(dumps, jobs)
    twice = metadata_seen_twice(inventory)
    unseen = {path for path in named if path not in seen}
    lost = {path for path in unseen if named[path] & twice}
    return named, seen, lost, unseen - lost


def seen_files(inventory: dict) -> dict[str, int | None]:
    """Every file the watcher saw (listed and sized, or listed then gone before its size: a subsumption race,
    the file existed) -> its size."""
    seen: dict[str, int | None] = {r["path"]: r.get("size") for r in inventory.get("files", [])}
    for race in inventory.get("raced", []):
        if race.get("what") == "stat":
            seen.setdefault(race["path"], None)
    return seen


def is_metadata(path: str) -> bool:
    """A ``_metadata`` file, or the temporary file Flink writes it through (``._metadata.inprogress.UUID``)."""
    name = path.rsplit("/", 1)[-1]
    return name == "_metadata" or name.startswith("._metadata.inprogress")


def checkpoint_of(path: str) -> int | None:
    """N of a ``JOB/chk-N/...`` path (shared/ and taskowned/ files belong to no one checkpoint)."""
    parts = path.split("/")
    match = _CHK.match(parts[1]) if len(parts) > 2 else None
    return int(match.group(1)) if match else None


def storage_rows(run_id: str, dumps: dict, inventory: dict) -> tuple[list[tuple], list[tuple]]:
    """(handles, inventory) rows: what the copied metadata names, what the watcher saw; a named file whose
    presence a race leaves undecided is an inventory row of kind ``unresolved`` (storage_safety's
    ``_evaluable`` then says unknown, never passed or failed)."""
    named, seen, _lost, unresolved = classify(dumps, inventory)
    handles = [row("handles", run_id=run_id, checkpoint_id=max(chk for _job, chk in named[path]), object_key=path,
                   source="storage", n_segments=1) for path in sorted(named)]
    listed = [row("inventory", run_id=run_id, key=path, area="checkpoints", checkpoint_id=checkpoint_of(path),
                  kind="metadata" if is_metadata(path) else "state", size_bytes=size)
              for path, size in sorted(seen.items())]
    listed += [row("inventory", run_id=run_id, key=path, area="checkpoints", checkpoint_id=checkpoint_of(path),
                   kind=UNRESOLVED) for path in sorted(unresolved)]
    return handles, listed


def storage_counts(dumps: dict, inventory: dict) -> dict:
    """Named files, lost ones (judged by storage_safety), unresolved ones (a race: unknown), files nothing
    names (leaks: counted, not judged; what a crashed JobManager leaves), chk-N folders without _metadata."""
    named, seen, lost, unresolved = classify(dumps, inventory)
    leaked = sorted(p for p in set(seen) - set(named) if not is_metadata(p))
    return {"named": len(named), "lost": len(lost), "lost_examples": sorted(lost)[:5], "unresolved": len(unresolved),
            "leaked": len(leaked), "leaked_examples": leaked[:5],
            "incomplete_checkpoints": len(inventory.get("incomplete_checkpoints", []))}


def build_rows(store: ObjectStore, run_id: str) -> dict[str, list[tuple]]:
    """Every table's rows for the real run stored in ``store`` (see the module docstring)."""
    record = read_json(store, PREFIX + "run.json")
    source = read_json(store, PREFIX + "source.json")
    out: dict[str, list[tuple]] = {name: [] for name in TABLES}
    out["run"] = [run_row(run_id, record)]
    out["commits"], out["transactions"] = sink_rows(store, run_id)
    out["truth"] = truth_rows(run_id, source)
    out["handles"], out["inventory"] = storage_rows(run_id, dumps_of(store), read_json(store, PREFIX + "inventory.json"))
    return out
