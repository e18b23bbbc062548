"""The Spark data plane against a real (moto) S3 server over HTTP.

Run alone with ``-p tests.conftest_storage -p tests.conftest_spark``. Scenarios run
through `S3Persistence` with the shared Spark session where the Spark path is the
point (layout, determinism, storage faults injected inside Spark tasks); the rest use
the in-process path of the same partition function (``spark=None``), which the
determinism test proves byte-identical to the Spark path.
"""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest

from regionchaos.dataplane import COUNTER_KEY, MetadataExists, PrefixSums, S3Persistence
from regionchaos.emulator import Emulation
from regionchaos.protocol.checkpoint import CompletedCheckpoint
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore, create_bucket
from regionchaos.workload import range_count_sum
from tests import memrun

pytestmark = pytest.mark.spark


# -- helpers -------------------------------------------------------------------------------


def snapshot(store: ObjectStore) -> dict[str, bytes]:
    """Every object of the run: relative key -> bytes."""
    return store.get_many(store.list_keys(""))


def dangling(store: ObjectStore) -> list[tuple[str, str]]:
    """(metadata key, object it names that does not exist) for every _metadata on storage."""
    keys = set(store.list_keys("checkpoints/"))
    out = []
    for key in sorted(k for k in keys if k.endswith("/_metadata")):
        checkpoint = CompletedCheckpoint.from_bytes(store.get(key))
        out += [(key, obj) for obj in sorted(checkpoint.object_keys()) if obj not in keys]
    return out


def verify_state_files(objects: dict[str, bytes], seed: int) -> dict[str, int]:
    """Check every handle of every _metadata against its state file, recomputing the
    counters and channels from the records; returns what was checked (never vacuous)."""
    seen = {"handles": 0, "empty_handles": 0, "counters": 0, "lost": 0, "channels": 0}
    for key in (k for k in objects if k.endswith("/_metadata")):
        for entry in json.loads(objects[key])["operatorSubtaskStates"]:
            refs = [(h[0], h[1], h[2], h[3]) for h in entry["handles"]] + \
                   [(c[0], c[1], c[2], None) for c in entry["channelState"]]
            for obj, segment, cid, elements in refs:
                state = json.loads(objects[obj])
                assert state["checkpoint_id"] == cid and segment in state["segments"], (key, obj, segment)
                seen["handles"] += 1
                seen["empty_handles"] += elements == []
                value = state["segments"][segment]
                if "/channel/" in segment:
                    want = range_count_sum(seed, value["split"], value["start"], value["end"])
                    assert (value["count"], value["sum"]) == want, (obj, segment)
                    seen["channels"] += 1
                elif segment.startswith("counter/"):
                    for c in value:
                        lost = [tuple(r) for r in c["lost"]]
                        assert (c["count"], c["sum"]) == range_count_sum(seed, c["split"], 0, c["consumed"], lost)
                        seen["counters"] += 1
                        seen["lost"] += bool(lost)
    return seen


def history(store: ObjectStore) -> list[dict]:
    lines = []
    for key in store.list_keys("history/"):
        lines += [json.loads(line) for line in store.get(key).decode().splitlines()]
    return lines


class Observed:
    """A Persistence wrapper that runs `probe(store, batch)` after every flush and
    records what recover() and delete_orphans() returned."""

    def __init__(self, inner: S3Persistence, probe=None):
        self.inner, self.probe = inner, probe
        self.after_flush: list = []
        self.recovered: list[tuple[list[CompletedCheckpoint], int]] = []
        self.after_orphans: list[set[str]] = []  # state objects left unreferenced after the clean-up
        self.orphans: list[set[str]] = []  # what delete_orphans deleted

    def flush(self, batch):
        self.inner.flush(batch)
        if self.probe:
            self.after_flush.append(self.probe(self.inner.store, batch))

    def list_objects(self, prefix=""):
        return self.inner.list_objects(prefix)

    def recover(self):
        result = self.inner.recover()
        self.recovered.append(result)
        return result

    def delete_orphans(self, live):
        orphans = self.inner.delete_orphans(live)
        self.orphans.append(set(orphans))
        self.after_orphans.append({k for k in self.inner.store.list_keys("checkpoints/")
                                   if not k.endswith("/_metadata")} - live)
        return orphans


def run(store, name, *, seed=None, spark=None, mutant=None, probe=None):
    scenario = load(name, seed=seed)
    persistence = Observed(S3Persistence(store, scenario, mutant=mutant, spark=spark), probe)
    result = Emulation(scenario, persistence, mutant=mutant).run()
    return result, persistence


@pytest.fixture(scope="module")
def bucket_config(s3_server):
    """A bucket for smoke-a alone, so the whole bucket can be listed."""
    config = s3_server.config.model_copy(update={"bucket": f"dataplane-{uuid.uuid4().hex[:8]}"})
    create_bucket(config)
    return config


@pytest.fixture(scope="module")
def smoke_a(bucket_config, spark):
    store = ObjectStore.for_run(bucket_config, "smoke-a")
    result, persistence = run(store, "smoke", spark=spark)
    return store, result, persistence


# -- tests -----------------------------------------------------------------------------------


def test_prefix_sums_match_the_workload():
    rng = np.random.default_rng(7)
    sums = PrefixSums(42, {3: 500})
    for _ in range(200):
        a, b = sorted(int(x) for x in rng.integers(0, 501, size=2))
        skipped = [tuple(sorted(int(x) for x in rng.integers(0, 501, size=2))) for _ in range(rng.integers(0, 4))]
        assert sums.count_sum(3, a, b, skipped) == range_count_sum(42, 3, a, b, skipped)


def test_smoke_layout_and_contents(smoke_a, bucket_config):
    store, result, persistence = smoke_a
    objects = snapshot(store)
    events = result.events
    assert persistence.inner.stats["spark_jobs"] >= 1

    # the same run into an in-memory store (the swarm's fast path, no Spark): the same objects,
    # byte for byte (scenario.json aside: the fast path writes it, this fixture does not)
    _, memory = memrun.emulate(load("smoke"))
    assert {k: v for k, v in snapshot(memory).items() if k != "scenario.json"} == objects
    commits = [t for k in sorted(k for k in objects if k.startswith("sink/commits/")) for t in json.loads(objects[k])]
    assert commits

    # history and HA counter
    assert [json.loads(line) for line in objects["history/events-00000.jsonl"].decode().splitlines()] == json.loads(json.dumps(events))
    triggered = [e["checkpoint_id"] for e in events if e["kind"] == "checkpoint_triggered"]
    assert json.loads(objects[COUNTER_KEY]) == max(triggered) + 1

    # every handle names an existing object and segment, with the counts recomputed from the records
    seed, tms = load("smoke").seed, load("smoke").topology.taskmanagers
    assert dangling(store) == []
    assert verify_state_files(objects, seed)["counters"] > 0

    # sink transactions: every committed transaction was pre-committed with the right counts
    for t in commits:
        txns = json.loads(objects[f"sink/txn/chk-{t['txn_checkpoint_id']}/tm-{t['subtask'] % tms}.json"])
        match = [x for x in txns if (x["split"], x["start"], x["end"]) == (t["split"], t["start"], t["end"])]
        assert len(match) == 1
        assert (match[0]["count"], match[0]["sum"]) == range_count_sum(seed, t["split"], t["start"], t["end"])

    # nothing outside the run's prefix: smoke-a is the only run in its bucket
    client = bucket_config.client()
    listed = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket_config.bucket)
              for o in page.get("Contents", [])]
    assert sorted(listed) == sorted(f"runs/smoke-a/{k}" for k in objects)


def test_lost_ranges_channels_and_subtasks_without_splits(object_store):
    """Unaligned checkpoints, more subtasks than splits, and (mutant) records lost in recovery."""
    overrides = {"topology.parallelism": 6, "workload.splits": 4, "faults.subtask_crash": 0.3,
                 "execution.checkpointing.unaligned.enabled": True}
    scenario = load("smoke", overrides)
    persistence = S3Persistence(object_store, scenario, mutant="drop-recovered-inflight")
    Emulation(scenario, persistence, mutant="drop-recovered-inflight").run()
    assert dangling(object_store) == []
    seen = verify_state_files(snapshot(object_store), scenario.seed)
    assert seen["lost"] > 0 and seen["channels"] > 0 and seen["empty_handles"] > 0, seen


def test_same_seed_same_bytes_other_seed_differs(smoke_a, s3_server, spark):
    store_a, _, _ = smoke_a
    first = snapshot(store_a)
    tag = uuid.uuid4().hex[:8]
    again = ObjectStore.for_run(s3_server.config, f"smoke-b-{tag}")
    run(again, "smoke", spark=spark)
    assert snapshot(again) == first
    in_process = ObjectStore.for_run(s3_server.config, f"smoke-c-{tag}")
    run(in_process, "smoke")  # no Spark: the same partition function in the driver
    assert snapshot(in_process) == first
    other = ObjectStore.for_run(s3_server.config, f"smoke-d-{tag}")
    run(other, "smoke", seed=2)
    differing = snapshot(other)
    assert differing != first
    assert any(differing.get(k) != v for k, v in first.items() if k.endswith(".state"))


def test_rerun_of_a_run_id_needs_a_cleared_prefix(object_store):
    run(object_store, "smoke")
    first = snapshot(object_store)
    with pytest.raises(MetadataExists, match="already exists"):
        run(object_store, "smoke")  # the prefix still holds the first run's _metadata
    object_store.delete_many(object_store.list_keys(""))  # what the runner does before a run
    run(object_store, "smoke")
    second = snapshot(object_store)
    assert set(second) == set(first)
    assert second == first


def _fault_probe(store, batch):
    """After a flush: dangling references, and where the planned faults left objects."""
    keys = set(store.list_keys("checkpoints/"))
    failed = {f"checkpoints/chk-{c}/tm-{t}.state" for c, t in batch.put_failures}
    slow = {f"checkpoints/chk-{c}/tm-{t}.state" for c, t in batch.slow_puts}
    crash = batch.crash_before_metadata
    cleaned = {k for s in batch.steps if s["op"] == "delete" for k in s["keys"]}  # e.g. late acks discarded
    return {"dangling": dangling(store), "failed_present": failed & keys, "failed": failed,
            "slow_missing": slow - keys - cleaned, "slow": slow, "crash": crash,
            "crash_metadata": crash is not None and f"checkpoints/chk-{crash}/_metadata" in keys,
            "crash_states": {k for k in keys if crash is not None and k.startswith(f"checkpoints/chk-{crash}/")
                             and k.endswith(".state")}}


def test_storage_faults_never_expose_dangling_metadata(object_store, spark):
    result, persistence = run(object_store, "storage-faults", spark=spark, probe=_fault_probe)
    probes = persistence.after_flush
    crashes = [p for p in probes if p["crash"] is not None]
    assert len(crashes) >= 1 and sum(len(p["failed"]) for p in probes) >= 1 and any(p["slow"] for p in probes)
    assert [p["dangling"] for p in probes] == [[]] * len(probes)
    for p in crashes:  # state uploaded, metadata never written
        assert not p["crash_metadata"] and p["crash_states"]
    # the new JobManager deleted every state object no recovered checkpoint references
    assert len(persistence.after_orphans) == len(crashes) and not any(persistence.after_orphans)
    assert all(p["crash_states"] <= deleted for p, deleted in zip(crashes, persistence.orphans))
    assert all(not p["failed_present"] and not p["slow_missing"] for p in probes)
    faults = [e for e in history(object_store) if e["kind"] == "storage_fault"]
    assert {e["key"] for e in faults if e["fault"] == "put_failure"} == set().union(*(p["failed"] for p in probes))
    assert {e["key"] for e in faults if e["fault"] == "slow_put"} == set().union(*(p["slow"] for p in probes))
    seqs = [e["seq"] for e in history(object_store)]
    assert seqs == list(range(len(seqs))) and [e["seq"] for e in result.events] == seqs


def test_metadata_before_state_mutant_exposes_dangling_metadata(object_store):
    _, persistence = run(object_store, "storage-faults", mutant="metadata-before-state", probe=_fault_probe)
    crashes = [p for p in persistence.after_flush if p["crash_metadata"]]
    assert crashes, "no crash checkpoint had its metadata committed"
    for p in crashes:  # the crash checkpoint's own metadata names objects never uploaded
        assert f"checkpoints/chk-{p['crash']}/_metadata" in {m for m, _ in p["dangling"]}


def test_jobmanager_failover_rebuilds_from_storage(object_store):
    result, persistence = run(object_store, "jm-failover")
    events = result.events
    failovers = [e for e in events if e["kind"] == "jobmanager_failover"]
    assert len(failovers) >= 2 and len(persistence.recovered) == len(failovers)
    triggered = [(e["seq"], e["checkpoint_id"]) for e in events if e["kind"] == "checkpoint_triggered"]
    ids = [cid for _, cid in triggered]
    assert ids == sorted(set(ids)), "checkpoint ids reused or out of order"
    completed = {e["checkpoint_id"]: e["metadata"] for e in events if e["kind"] == "checkpoint_completed"}
    nontrivial = 0
    for event, (checkpoints, next_id) in zip(failovers, persistence.recovered):
        before = [cid for seq, cid in triggered if seq < event["seq"]]
        after = [cid for seq, cid in triggered if seq > event["seq"]]
        assert next_id == event["next_checkpoint_id"] and next_id > max(before)
        assert not after or after[0] == next_id
        assert [c.checkpoint_id for c in checkpoints] == event["recovered"]
        assert all(c.to_json() == completed[c.checkpoint_id] for c in checkpoints)  # what was committed
        latest = max(checkpoints, key=lambda c: c.checkpoint_id)
        assert event["counter"] == latest.consecutive_regional
        nontrivial += latest.consecutive_regional > 0
    assert nontrivial >= 1, "no failover recovered a non-zero consecutive-regional counter"
    assert persistence.after_orphans and all(not left for left in persistence.after_orphans)
    assert dangling(object_store) == []
