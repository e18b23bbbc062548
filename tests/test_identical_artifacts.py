"""The same scenario and seed leave the same bytes; record values depend on every bit of the seed.

In:  two deep runs (`runner.run`: Spark data plane, GX, report) of smoke seed 7 (declines, timeouts,
     a region crash) into the shared embedded S3 server, under two run ids (module fixture).
Out: every object under the two run prefixes has the same key and the same bytes (the run id, where
     an artifact names it, read as one placeholder), except the declared wall-clock artifacts
     (`runner.WALL_CLOCK_PREFIXES`), whose keys match and whose GX results differ only in GX's
     timestamps; the stats that count requests and bytes are equal; ``summary.json`` plus
     ``timing/wall_seconds.json`` is the summary the run returned. Seeds that differ only above
     bit 32 have different records.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from regionchaos import runner
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from regionchaos.workload import record_values

RUN_IDS = ("ident-smoke-s7-first", "ident-smoke-s7-again")
PLACEHOLDER = b"<RUN_ID>"
GX_TIME = re.compile(rb"\d{8}T\d{6}\.\d{6}Z|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")


@pytest.fixture(scope="module")
def two_runs(s3_server, spark) -> list[tuple[dict, dict[str, bytes]]]:
    """(returned summary, key -> bytes with the run id replaced) of each run."""
    out = []
    for run_id in RUN_IDS:
        summary = runner.run(load("smoke", seed=7), storage=s3_server.config, run_id=run_id, spark=spark)
        store = ObjectStore.for_run(s3_server.config, run_id)
        objects = {key: store.get(key).replace(run_id.encode(), PLACEHOLDER) for key in store.list_keys("")}
        out.append((summary, objects))
    return out


def _wall_clock(key: str) -> bool:
    return key.startswith(runner.WALL_CLOCK_PREFIXES)


@pytest.mark.spark
def test_the_same_seed_writes_the_same_bytes(two_runs):
    (first, a), (second, b) = two_runs
    assert first["verdict"] == second["verdict"] == "valid"
    assert first["stats"]["aborted"] > 0 and first["stats"]["region_failovers"] > 0  # a run with faults
    protocol_a = {k for k in a if not _wall_clock(k)}
    protocol_b = {k for k in b if not _wall_clock(k)}
    assert protocol_a == protocol_b, f"keys of one run only: {sorted(protocol_a ^ protocol_b)}"
    assert {"summary.json", "scenario.json", "report/index.html", "ha/checkpoint-id-counter"} <= protocol_a
    assert any(k.startswith("checkpoints/") for k in protocol_a) and any(k.startswith("sink/") for k in protocol_a)
    differing = sorted(k for k in protocol_a if a[k] != b[k])
    assert differing == [], f"{len(differing)} of {len(protocol_a)} objects differ: {differing}"


@pytest.mark.spark
def test_wall_clock_artifacts_are_declared_and_differ_only_in_time(two_runs):
    (_, a), (_, b) = two_runs
    assert runner.TIMING_KEY in a and runner.TIMING_KEY in b
    for prefix in ("validation/", "datadocs/"):
        assert sum(k.startswith(prefix) for k in a) == sum(k.startswith(prefix) for k in b) > 0
    suites = sorted(k for k in a if k.startswith("validation/") and k != "validation/results.json")
    assert len(suites) == 12 and suites == sorted(k for k in b if k.startswith("validation/") and k != "validation/results.json")
    for key in suites:  # GX's results: the run time, the load time; nothing else
        assert GX_TIME.sub(b"T", a[key]) == GX_TIME.sub(b"T", b[key]), key


@pytest.mark.spark
def test_the_stats_that_count_requests_and_bytes_are_equal(two_runs):
    (first, _), (second, _) = two_runs
    s3_a, s3_b = first["stats"]["s3"], second["stats"]["s3"]
    assert s3_a["bytes_written"] > 0 and s3_a["bytes_read"] > 0 and s3_a["requests_by_op"]["PutObject"] > 0
    for field in ("bytes_written", "bytes_read", "requests", "requests_by_op"):
        assert s3_a[field] == s3_b[field], field
    dataplane = ("s3_bytes_written", "s3_bytes_read", "s3_requests", "s3_requests_by_op", "state_files", "txn_files")
    for field in dataplane:
        assert s3_a["dataplane"][field] == s3_b["dataplane"][field], field
    for field in ("retained_bytes_end", "validation_s3_requests", "records_committed"):
        assert first["stats"][field] == second["stats"][field], field
    # the lease's PUTs and validation's wall-clock artifacts are counted apart, never in stats.s3
    assert first["stats"]["s3_apart"]["requests_by_op"]["PutObject"] > 0


@pytest.mark.spark
def test_summary_and_timing_make_up_the_returned_summary(two_runs, s3_server):
    first, _ = two_runs[0]
    store = ObjectStore.for_run(s3_server.config, RUN_IDS[0])
    written = json.loads(store.get("summary.json"))
    timing = json.loads(store.get(runner.TIMING_KEY))
    assert not any(k.startswith("wall_seconds") for k in written["stats"]) and "s3_apart" not in written["stats"]
    assert not any(k.startswith("wall_seconds") for k in written["stats"]["s3"]["dataplane"])
    assert timing["run_id"] == RUN_IDS[0] and timing["stats"]["wall_seconds"]["emulate"] > 0
    merged = dict(written, stats={**written["stats"], **timing["stats"],
                                  "s3": {**written["stats"]["s3"], "dataplane": {
                                      **written["stats"]["s3"]["dataplane"], **timing["stats"]["s3"]["dataplane"]}}})
    assert json.loads(json.dumps(first, default=str)) == merged


def test_records_depend_on_every_bit_of_the_seed():
    low = 7
    for high_bit in (32, 40, 62):
        other = low | (1 << high_bit)
        assert not np.array_equal(record_values(low, 0, 0, 64), record_values(other, 0, 0, 64)), high_bit
    assert not np.array_equal(record_values(2**63 - 1, 3, 0, 64), record_values(2**31 - 1, 3, 0, 64))
    # one function of (seed, split, position): any window of a split reads the same values
    assert np.array_equal(record_values(2**63 - 1, 5, 10, 20), record_values(2**63 - 1, 5, 0, 30)[10:20])
