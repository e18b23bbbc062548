"""Reading a run's artifacts: what a run left on storage, parsed (no Spark, no tables yet).

In:  a run's prefix on S3 (``regionchaos.storage.s3.ObjectStore`` of ``runs/RUN_ID/``):
     ``scenario.json``, ``history/*.jsonl``, ``checkpoints/`` (the ``_metadata`` left at
     the end and the state files they name), ``sink/commits/*.json``, ``sink/txn/``.
Out: `read_run(store, run_id) -> RunArtifacts` (`rows.build_rows` makes the tables of it).

Requests: one paginated LIST of the prefix, then GETs (thread pool) of the history,
the scenario, the ``_metadata`` objects, the state files named by completed checkpoints
that are still on storage, the sink commits and the sink transactions. Nothing is
written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import history
from ..gcpause import paused
from ..history import Kind
from ..jsonform import loads
from ..storage.s3 import RESERVED_KEYS
from .schemas import _CHK, _TXN


@dataclass
class RunArtifacts:
    """What a run left on storage, parsed (no Spark)."""

    run_id: str
    scenario_doc: dict
    events: list[dict]
    inventory: list[tuple[str, int]]  # (key, size)
    metadata_at_end: dict[int, dict]  # checkpoint id (of its chk-N/ key) -> _metadata JSON still on storage
    state_files: dict[str, dict]  # key -> parsed state file (only those read)
    commits: list[tuple[str, list[dict]]]  # (file, txns) in key order
    transactions: list[tuple[str, list[dict]]]
    history_files: int = 0
    requests: dict = field(default_factory=dict)


def _list_with_sizes(store) -> list[tuple[str, int]]:
    """One paginated LIST of the whole run prefix (keys relative to it, with sizes)."""
    out = []
    pages = store.client.get_paginator("list_objects_v2").paginate(Bucket=store.config.bucket,
                                                                    Prefix=store.run_prefix)
    for page in pages:
        store.stats.record("ListObjectsV2")
        out.extend((item["Key"][len(store.run_prefix):], int(item.get("Size", 0))) for item in page.get("Contents", []))
    return sorted(item for item in out if item[0] not in RESERVED_KEYS)  # the run-id lease is no artifact


@paused()
def read_run(store, run_id: str, *, threads: int = 16) -> RunArtifacts:
    """Read a run's artifacts: LIST once, then GET what the tables need."""
    before = store.stats.as_dict()
    listing = _list_with_sizes(store)
    keys = [k for k, _ in listing]
    history_keys = sorted(k for k in keys if history.is_history_key(k))
    metadata_keys = [k for k in keys if k.startswith("checkpoints/") and k.endswith("/_metadata")]
    commit_keys = sorted(k for k in keys if k.startswith("sink/commits/") and k.endswith(".json"))
    txn_keys = sorted(k for k in keys if _TXN.match(k))
    first = ["scenario.json"] if "scenario.json" in keys else []
    bodies = store.get_many(first + history_keys + metadata_keys + commit_keys + txn_keys, threads=threads)
    scenario_doc = loads(bodies["scenario.json"]) if first else {}
    events = history.decode(bodies[k] for k in history_keys)
    metadata_at_end = {}
    for k in metadata_keys:  # keyed by where it lies (chk-N/), not by what it says
        metadata_at_end[int(_CHK.match(k).group(1))] = loads(bodies[k])
    # state files: every object named by a completed checkpoint that is still on storage
    present = set(keys)
    wanted: set[str] = set()
    named = wanted.add  # a loop, not set.update of a generator per entry: large names 1.2 M entries' handles
    docs = [e["metadata"] for e in events if e["kind"] == Kind.CHECKPOINT_COMPLETED] + list(metadata_at_end.values())
    for doc in docs:
        for entry in doc["operatorSubtaskStates"]:
            for h in entry["handles"]:
                named(h[0])
            for c in entry["channelState"]:
                named(c[0])
    state_keys = sorted(wanted & present)
    state_bodies = store.get_many(state_keys, threads=threads)
    state_files = {k: loads(v) for k, v in state_bodies.items()}
    after = store.stats.as_dict()
    requests = {op: n - before["requests_by_op"].get(op, 0) for op, n in after["requests_by_op"].items()}
    return RunArtifacts(
        run_id=run_id,
        scenario_doc=scenario_doc,
        events=events,
        inventory=listing,
        metadata_at_end=metadata_at_end,
        state_files=state_files,
        commits=[(k, loads(bodies[k])) for k in commit_keys],
        transactions=[(k, loads(bodies[k])) for k in txn_keys],
        history_files=len(history_keys),
        requests={op: n for op, n in requests.items() if n},
    )
