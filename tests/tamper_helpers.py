"""Tamper harness: edit a raw artifact of a copied run on the embedded S3, then judge many copies at once.

In:  an emulated run's `ObjectStore` (the base run) on the embedded S3 server; per tampered copy a
     new run id and edits of raw artifacts (a `_metadata` object, a state object, a sink
     transaction or commit file, a history file), never of the emulator.
Out: `copy_run(base, run_id) -> ObjectStore` (every object of the base run under the new
     prefix; ``scenario.json``'s run_id rewritten; the base's objects are read once per base and
     process, since a base is never edited), `tamper(store, key, edit)` (``edit(bytes) ->
     bytes``, or None to delete the object), `edit_json(fn)` (an edit of a JSON object: ``fn``
     changes the decoded value in place or returns a new one), `edit_history(store, fn)` (``fn``
     gets every history event in order and returns the events to keep), `edit_metadata(store, N,
     fn)` (the ``_metadata`` object of retained checkpoint N), `edit_checkpoint_metadata(store, N, fn)` (N's
     history copy and, while retained, its ``_metadata`` object), read-only look-ups to pick what to
     edit (`history_metadata`, `ref_depths`, `retained_ids`, `state_keys`, `commit_keys`),
     and `failed_rules(result, suite)`.

Use: a module's builder emulates the base runs once, builds one copy per case and tampers it; the
session's pooled pass (tests/judge_pool.py) judges all copies plus the untampered bases in ONE
validation pass with the other modules' runs; a parametrised test per rule then reads its case's
result (see tests/test_tamper.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from regionchaos import history
from regionchaos.storage import ObjectStore


_BASE_OBJECTS: dict[tuple[str, str, str], dict[str, bytes]] = {}


def _objects(base: ObjectStore) -> dict[str, bytes]:
    """Every object of an (untampered, never edited) base run, read once."""
    key = (base.config.endpoint_url or "", base.config.bucket, base.run_prefix)
    if key not in _BASE_OBJECTS:
        _BASE_OBJECTS[key] = base.get_many(base.list_keys(""))
    return _BASE_OBJECTS[key]


def copy_run(base: ObjectStore, run_id: str) -> ObjectStore:
    """Every object of ``base`` under ``run_id``'s prefix (same bucket and endpoint)."""
    target = ObjectStore.for_run(base.config, run_id)
    bodies = dict(_objects(base))
    doc = json.loads(bodies["scenario.json"])
    doc["run_id"] = run_id
    bodies["scenario.json"] = json.dumps(doc, sort_keys=True).encode()
    target.put_many(bodies.items())
    return target


def tamper(store: ObjectStore, key: str, edit: Callable[[bytes], bytes | None]) -> None:
    """Replace object ``key`` by ``edit(its bytes)``; ``None`` deletes it."""
    body = edit(store.get(key))
    if body is None:
        store.delete_many([key])
    else:
        store.put(key, body)


def edit_json(fn: Callable[[Any], Any]) -> Callable[[bytes], bytes]:
    """An edit of a JSON object: ``fn(value)`` edits in place (returns None) or returns the new value."""
    def edit(body: bytes) -> bytes:
        value = json.loads(body)
        new = fn(value)
        return json.dumps(value if new is None else new, sort_keys=True).encode()
    return edit


def history_keys(store: ObjectStore) -> list[str]:
    return sorted(k for k in store.list_keys(history.PREFIX) if history.is_history_key(k))


def read_history(store: ObjectStore) -> list[dict]:
    return [json.loads(line) for key in history_keys(store) for line in store.get(key).decode().splitlines() if line]


def edit_history(store: ObjectStore, fn: Callable[[list[dict]], list[dict]]) -> None:
    """Rewrite the history: ``fn(all events in order) -> events``; written back into the first
    history file (the others are deleted), in the same JSON-lines form."""
    keys = history_keys(store)
    events = fn(read_history(store))
    store.put(keys[0], history.encode(events, {}))
    store.delete_many(keys[1:])


def retained_metadata_keys(store: ObjectStore) -> list[str]:
    return sorted(k for k in store.list_keys("checkpoints/") if k.endswith("/_metadata"))


def retained_ids(store: ObjectStore) -> list[int]:
    """Checkpoints whose ``_metadata`` is on storage, ascending."""
    return sorted(int(k.split("/")[1].removeprefix("chk-")) for k in retained_metadata_keys(store))


def edit_metadata(store: ObjectStore, checkpoint_id: int, fn: Callable[[dict], Any]) -> None:
    """Edit the ``_metadata`` object of a retained checkpoint on storage (not the history's copy)."""
    tamper(store, f"checkpoints/chk-{checkpoint_id}/_metadata", edit_json(fn))


def edit_checkpoint_metadata(store: ObjectStore, checkpoint_id: int, fn: Callable[[dict], None]) -> None:
    """Edit checkpoint N's metadata wherever the rules read it: the history's copy (its ``checkpoint_completed``
    event), and its ``_metadata`` object too while N is retained. ``fn`` changes the metadata in place."""
    def in_history(events):
        fn(next(e for e in events if e["kind"] == "checkpoint_completed" and e["checkpoint_id"] == checkpoint_id)
           ["metadata"])
        return events
    edit_history(store, in_history)
    if checkpoint_id in retained_ids(store):
        edit_metadata(store, checkpoint_id, fn)


def history_metadata(store: ObjectStore) -> dict[int, dict]:
    """Checkpoint id -> the metadata copy in its ``checkpoint_completed`` event (read only)."""
    return {e["checkpoint_id"]: e["metadata"] for e in read_history(store) if e["kind"] == "checkpoint_completed"}


def ref_depths(metadata: dict[int, dict]) -> dict[int, int]:
    """Ref-chain depth of each completed checkpoint from its entries' refCheckpointIds (to pick a tamper)."""
    depth: dict[int, int] = {}
    for cid in sorted(metadata):
        refs = {en["refCheckpointId"] for en in metadata[cid]["operatorSubtaskStates"]} - {None}
        depth[cid] = 1 + max(depth.get(r, 0) for r in refs) if refs else 0
    return depth


def state_keys(store: ObjectStore, checkpoint_id: int) -> list[str]:
    return sorted(k for k in store.list_keys(f"checkpoints/chk-{checkpoint_id}/") if k.endswith(".state"))


def commit_keys(store: ObjectStore) -> list[str]:
    return sorted(k for k in store.list_keys("sink/commits/") if k.endswith(".json"))


def failed_rules(result: dict, suite: str) -> list[str]:
    check = next(c for c in result.checks if c["name"] == suite)
    return list(check.get("failed_rules") or ())


def acks_in_time(store: ObjectStore, checkpoint_id: int) -> None:
    """The history's task record of ``checkpoint_id``: every task's response arrived within 5 ms of the trigger (no
    late ack), so nothing says a region's entries were grafted while a late ack was on its way (F13's evidence)."""
    def fn(events):
        record = next(e for e in events if e["kind"] == "task_responses" and e["checkpoint_id"] == checkpoint_id)
        for task in record["tasks"]:
            task[3] = min(task[3], 5)
        return events
    edit_history(store, fn)


def refusal_as_global(store) -> None:
    """The history's store failures (``store_failed``) name a GLOBAL checkpoint, which completePendingCheckpoint
    removes from the pending ones in its finally (F17's mechanisms read the type)."""
    def fn(events):
        for e in events:
            if e["kind"] == "store_failed":
                e["type"] = "GLOBAL"
        return events
    edit_history(store, fn)
