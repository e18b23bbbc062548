"""The Spark session of one big deep run (regionchaos/spark.py `spark_conf(bulk=True)`, asked for by
`runner._run_one` for a run of `runner.BULK_SUBTASK_CHECKPOINTS` or more): a 1 GB heap and Python workers that
exit after their tasks; a session shared by many runs keeps the 1.5 GB heap and its reused workers;
``REGIONCHAOS_SPARK_DRIVER_MEMORY`` decides the heap of either. Pure logic (no JVM): what `spark_conf` passes.
The effect on memory is measured in bench/results/probes/README.md, never asserted here."""

from __future__ import annotations

from regionchaos import spark


def test_a_bulk_session_has_a_smaller_heap_and_workers_that_are_not_kept(monkeypatch):
    monkeypatch.delenv(spark.DRIVER_MEMORY_ENV, raising=False)
    bulk = spark.spark_conf("t", "local[2]", bulk=True)
    shared = spark.spark_conf("t", "local[2]")
    assert (bulk["spark.driver.memory"], bulk["spark.python.worker.reuse"]) == ("1g", "false")
    assert (shared["spark.driver.memory"], shared["spark.python.worker.reuse"]) == ("1536m", "true")
    assert {k: v for k, v in bulk.items() if k not in ("spark.driver.memory", "spark.python.worker.reuse")} == \
        {k: v for k, v in shared.items() if k not in ("spark.driver.memory", "spark.python.worker.reuse")}


def test_the_environment_decides_the_heap_of_either(monkeypatch):
    monkeypatch.setenv(spark.DRIVER_MEMORY_ENV, "3g")
    assert spark.spark_conf("t", "local[2]", bulk=True)["spark.driver.memory"] == "3g"
    assert spark.spark_conf("t", "local[2]")["spark.driver.memory"] == "3g"
