"""The Spark driver's class archive (regionchaos/jvmcds.py) reaches the driver only when it exists.

Pure logic (no JVM): which options `java_options` gives for a present, a missing and a switched-off
archive, and that `spark.spark_conf` passes them to the driver beside its log4j option. The archive's
effect on start-up is measured in bench/results/judge_profile/, never asserted here.
"""

from __future__ import annotations

from regionchaos import jvmcds, spark


def test_no_archive_no_options(tmp_path, monkeypatch):
    monkeypatch.setenv(jvmcds.ARCHIVE_ENV, str(tmp_path / "missing.jsa"))
    assert jvmcds.java_options() == [] and jvmcds.in_use() is None
    options = spark.spark_conf("t", "local[2]")["spark.driver.extraJavaOptions"]
    assert "SharedArchiveFile" not in options and "-Dlog4j2.configurationFile=file:" in options


def test_a_present_archive_is_mapped_and_the_jvm_kept_quiet_about_it(tmp_path, monkeypatch):
    archive = tmp_path / "spark.jsa"
    archive.write_bytes(b"not really an archive: a JVM that cannot map it ignores it")
    monkeypatch.setenv(jvmcds.ARCHIVE_ENV, str(archive))
    assert jvmcds.java_options() == [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    assert jvmcds.in_use() == archive
    options = spark.spark_conf("t", "local[2]")["spark.driver.extraJavaOptions"].split()
    assert options[0].startswith("-Dlog4j2.configurationFile=file:") and f"-XX:SharedArchiveFile={archive}" in options


def test_off_switches_it_off_even_when_the_default_archive_exists(monkeypatch):
    monkeypatch.setenv(jvmcds.ARCHIVE_ENV, "off")
    assert jvmcds.java_options() == [] and jvmcds.in_use() is None
    monkeypatch.delenv(jvmcds.ARCHIVE_ENV)
    assert jvmcds.archive_path().name.startswith("spark-") and jvmcds.archive_path().suffix == ".jsa"
