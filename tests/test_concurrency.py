"""Two runs of one run id at once on one bucket; what a run writes and deletes.

In:  the shared embedded S3 server and Spark session; `smoke` seed 3 (a valid run), twice at
     once under one run id (two threads, started together), beside another run's objects and
     objects outside ``runs/``; then the refused run again, after the first finished.
Out: exactly one run holds the run id (the lease, `regionchaos.storage.RunLease`) and judges it
     `valid`; the other is refused with `RunIdBusy` (exit 3) naming the run id, having written
     and deleted nothing: never a false `invalid`, never artifacts of two runs in one prefix.
     Nothing outside ``runs/RUN_ID/`` is written or deleted by a run. The lease is released at
     the end, and a re-run of the run id afterwards takes it and is idempotent (the same
     emulation artifacts, byte for byte).
"""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from regionchaos import runner
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore, RunIdBusy, RunLease

RUN_ID = "concurrent-smoke-s3"
NEIGHBOURS = {  # another run's objects (one under a sibling prefix), a swarm's, and a top-level one
    f"runs/{RUN_ID}-other/summary.json": b'{"verdict": "valid"}',
    f"runs/{RUN_ID}x/checkpoints/1/_metadata": b"other",
    "swarms/neighbour/summary.json": b"{}",
    "outside.txt": b"top level",
}
EMULATION = ("checkpoints/", "history/", "sink/", "scenario.json")  # what a re-run must reproduce exactly


def _bucket(config) -> dict[str, str]:
    """Every key of the whole bucket with its ETag."""
    client = config.client()
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=config.bucket):
        out.update({item["Key"]: item["ETag"] for item in page.get("Contents", [])})
    client.close()
    return out


@pytest.fixture(scope="module")
def own_bucket(s3_server):
    """A bucket of this module's own on the shared server: the other test files (on the other
    xdist worker) write into the shared bucket while these runs go, and the whole-bucket listing
    before and after must see only what these runs did."""
    config = s3_server.config.model_copy(update={"bucket": f"concurrency-{uuid.uuid4().hex[:8]}"})
    client = config.client()
    client.create_bucket(Bucket=config.bucket)
    client.close()
    return config


@pytest.fixture(scope="module")
def two_at_once(own_bucket, spark, tmp_path_factory):
    """Two runs of one run id started together; their outcomes and the bucket before and after."""
    config = own_bucket
    client = config.client()
    for key, body in NEIGHBOURS.items():
        client.put_object(Bucket=config.bucket, Key=key, Body=body)
    client.close()
    before = _bucket(config)
    local = tmp_path_factory.mktemp("runs")
    start = threading.Barrier(2)
    outcomes: list = [None, None]

    def one(i: int) -> None:
        scenario = load("smoke", seed=3)
        start.wait()
        try:
            outcomes[i] = runner.run(scenario, storage=config, run_id=RUN_ID, spark=spark, local_dir=local)
        except Exception as exc:  # noqa: BLE001 - the refusal is what is looked for
            outcomes[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"outcomes": outcomes, "before": before, "after": _bucket(config), "local": local}


@pytest.mark.spark
def test_one_run_holds_the_run_id_the_other_is_refused(two_at_once):
    summaries = [o for o in two_at_once["outcomes"] if isinstance(o, dict)]
    refusals = [o for o in two_at_once["outcomes"] if isinstance(o, RunIdBusy)]
    assert (len(summaries), len(refusals)) == (1, 1), two_at_once["outcomes"]
    message = str(refusals[0])
    assert f"run id {RUN_ID} is held by another run" in message and "--run-id" in message
    assert summaries[0]["verdict"] == "valid", summaries[0].get("error")  # never a false invalid


@pytest.mark.spark
def test_the_stored_artifacts_are_the_one_run_s(two_at_once, own_bucket):
    summary = next(o for o in two_at_once["outcomes"] if isinstance(o, dict))
    store = ObjectStore.for_run(own_bucket, RUN_ID)
    stored = json.loads(store.get("summary.json"))
    written = runner.wall_clock_part(summary)[0]  # summary.json: the summary without its wall-clock values
    assert stored["verdict"] == "valid" and stored["stats"] == json.loads(json.dumps(written["stats"], default=str))
    results = store.list_keys("validation/")
    assert len(results) == 13  # results.json and one GX result per suite: one validation, not two
    assert store.get_or_none("_lease.json") is None  # released at the end
    assert "_lease.json" not in {p.name for p in (two_at_once["local"] / RUN_ID).iterdir()}


@pytest.mark.spark
def test_nothing_outside_the_run_prefix_is_written_or_deleted(two_at_once):
    prefix = f"runs/{RUN_ID}/"
    before = {k: v for k, v in two_at_once["before"].items() if not k.startswith(prefix)}
    after = {k: v for k, v in two_at_once["after"].items() if not k.startswith(prefix)}
    assert after == before  # the same keys with the same contents
    assert set(NEIGHBOURS) <= set(after)
    assert any(k.startswith(prefix) for k in two_at_once["after"])  # the run did write, under its prefix


@pytest.mark.spark
def test_a_re_run_of_the_run_id_after_the_first_finished_is_idempotent(two_at_once, own_bucket):
    """The first run released the run id: a re-run takes it, clears the prefix and writes the same
    emulation artifacts byte for byte (emulated in this process: the data plane's Spark path is
    the first run's)."""
    first = two_at_once["after"]
    prefix = f"runs/{RUN_ID}/"
    store = ObjectStore.for_run(own_bucket, RUN_ID)
    scenario = load("smoke", seed=3)
    with RunLease(store, RUN_ID):
        runner.start(store, scenario, run_id=RUN_ID, mutant=None, replay=runner.replay_line("smoke", 3, None, None))
        now = _bucket(own_bucket)
    emulation = tuple(prefix + p for p in EMULATION)
    reproduced = {k: v for k, v in now.items() if k.startswith(emulation)}
    assert reproduced == {k: v for k, v in first.items() if k.startswith(emulation)}
    assert len(reproduced) > 10
    assert {k: v for k, v in now.items() if not k.startswith(prefix)} == \
        {k: v for k, v in first.items() if not k.startswith(prefix)}
    assert store.get_or_none("_lease.json") is None
