"""The JIT options of a Spark driver (regionchaos/spark.py `LOCAL_JIT_OPTIONS`): C1 only, with the code cache
tiered compilation reserves, on a local master; nothing on a cluster master (its executors are other JVMs);
``REGIONCHAOS_SPARK_JIT=tiered`` keeps the JVM's default. Pure logic (no JVM): what `spark_conf` passes. Their
effect is measured in bench/results/probes/README.md, never asserted here."""

from __future__ import annotations

import pytest

from regionchaos import spark


def java_options(master: str) -> list[str]:
    return spark.spark_conf("t", master)["spark.driver.extraJavaOptions"].split()


@pytest.mark.parametrize("master", ["local[2]", "local[*]", "local"])
def test_a_local_driver_compiles_with_c1_only_and_a_full_code_cache(master, monkeypatch):
    monkeypatch.delenv(spark.JIT_ENV, raising=False)
    options = java_options(master)
    assert "-XX:TieredStopAtLevel=1" in options and "-XX:ReservedCodeCacheSize=256m" in options
    assert options[0].startswith("-Dlog4j2.configurationFile=file:")  # the log profile is still first


def test_a_cluster_driver_keeps_the_default_jit(monkeypatch):
    monkeypatch.delenv(spark.JIT_ENV, raising=False)
    options = java_options("spark://127.0.0.1:7077")
    assert not any(o.startswith(("-XX:TieredStopAtLevel", "-XX:ReservedCodeCacheSize")) for o in options)


def test_tiered_keeps_the_default_jit_on_a_local_master(monkeypatch):
    monkeypatch.setenv(spark.JIT_ENV, "tiered")
    assert not any(o.startswith("-XX:TieredStopAtLevel") for o in java_options("local[2]"))
