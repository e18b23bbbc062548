"""Emulations on the real data plane held in memory, for the tests (test code, not an oracle).

In:  a Scenario (and a mutant).
Out: `persistence`: the `S3Persistence` a deep run uses, on a fresh `MemoryStore` (a dict
     behind the boto3 calls, no PUT threads); `emulate`: the `RunResult` of the whole run
     and its store, through `regionchaos.runner.emulate_in_memory` (the swarm's fast
     path: the run's prefix prepared as `regionchaos.runner` does, then `runner.emulate`);
     readers of the facts the tests check, taken from the artifacts on the store
     (docs/ARTIFACTS.md), never from the emulator's own account: the sink's committed
     transactions, the ``_metadata`` objects left.

No Spark and no S3 server: what runs is the code of a deep run, with a dict as the bucket.
"""

from __future__ import annotations

import json

from regionchaos.dataplane import S3Persistence
from regionchaos.emulator import RunResult
from regionchaos.runner import emulate_in_memory
from regionchaos.runner import default_run_id
from regionchaos.scenario import Scenario
from regionchaos.storage.memory import MemoryStore


def persistence(scenario: Scenario, mutant: str | None = None) -> S3Persistence:
    """The real persistence of `scenario` on an empty in-memory store (one thread)."""
    store = MemoryStore.for_run(None, default_run_id(scenario, mutant))
    return S3Persistence(store, scenario, mutant=mutant, threads=1)


def emulate(scenario: Scenario, mutant: str | None = None, *,
            record_schedule: bool = False) -> tuple[RunResult, MemoryStore]:
    """Run `scenario` into a fresh in-memory store: (its result, the store)."""
    store = MemoryStore.for_run(None, default_run_id(scenario, mutant))
    result, _ = emulate_in_memory(scenario, mutant, store=store, record_schedule=record_schedule, rows=False)
    return result, store


def commits(store: MemoryStore) -> list[dict]:
    """The sink's committed transactions, in commit order (``sink/commits/B-K.json`` by key)."""
    return [txn for key in store.list_keys("sink/commits/") for txn in json.loads(store.get(key))]


def metadata(store: MemoryStore) -> dict[int, bytes]:
    """Checkpoint id -> the ``_metadata`` object on the store (the retained checkpoints)."""
    keys = [k for k in store.list_keys("checkpoints/") if k.endswith("/_metadata")]
    return {int(k.split("/")[1].removeprefix("chk-")): body for k, body in store.get_many(keys).items()}

