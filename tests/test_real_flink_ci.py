"""The short real-Flink run the README's test command takes: marked ``flink`` and ``flink_ci``.

In:  the catalogue's `real-flink-tm-kills`, cut down (one TaskManager, killed once and replaced, 3,000
     records over 8 s), run by `regionchaos.runner.run` on a loopback cluster on free ports, judged in the
     session's Spark on the session's S3 server.
Out: valid, through the suites that apply to the distribution (exactly-once output and storage safety, each
     passed), the kill applied and the job finished. The run's wall time is printed and recorded as a junit
     property, never asserted.

Its own file so that tests/conftest.py can hand it out first in the Spark group: most of its minute is the
cluster starting, recovering and stopping, which then overlaps the other worker's tests instead of ending
the run. One cluster at a time: the other real-Flink tests are skipped unless asked for (tests/conftest.py).
"""

from __future__ import annotations

import time

import pytest

from regionchaos import runner
from regionchaos.scenario import load
from tests.flink_dist import needs_flink


@pytest.mark.flink
@pytest.mark.flink_ci
@needs_flink
@pytest.mark.spark
def test_ci_one_taskmanager_kill_judged_on_free_ports(s3_server, spark, tmp_path, record_property):
    scenario = load("real-flink-tm-kills", overrides={"real_flink.tm_kills": 1, "real_flink.records": 3000,
                                                      "real_flink.duration_s": 8, "real_flink.taskmanagers": 1})
    started = time.monotonic()
    summary = runner.run(scenario, storage=s3_server.config, spark=spark, local_dir=tmp_path)
    wall = round(time.monotonic() - started, 1)
    record_property("wall_seconds", wall)
    print(f"CI real-Flink run (its one TaskManager killed and replaced, 3000 records over 8 s): {wall} s wall, "
          f"phases {summary['stats'].get('wall_seconds')}")
    assert summary["verdict"] == "valid", {k: summary.get(k) for k in ("checks", "error", "stats")}
    assert sorted(c["name"] for c in summary["checks"] if c.get("success") is True) == [
        "exactly_once_output", "storage_safety"], summary["checks"]
    assert summary["stats"]["taskmanager_kills"] == 1 and summary["stats"]["final_state"] == "FINISHED"
