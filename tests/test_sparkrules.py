"""The judge's plan rule: one-partition shuffles dropped in a small pass (regionchaos/sparkrules.py,
regionchaos/java/SinglePartitionShuffles.java), the same results, and only where it is safe."""

from __future__ import annotations

import zipfile

import pytest

from regionchaos import sparkrules
from regionchaos.judge import engine as E
from regionchaos.judge import runs as J
from regionchaos.javabuild import find_tool
from regionchaos.storage import ObjectStore

# A union's two children, each an aggregate over a join of joins, so both end in a shuffle by key k; then a
# window by k over their union. With Spark's union output partitioning on, the union reports the children's
# partitioning and the window is planned without a shuffle above it: there the rule must not act (dropping the
# shuffles below would make the union two partitions at run time, and each k's two rows would be counted apart).
QUERY = """
WITH x AS (SELECT a.k, sum(b.w) AS s FROM rt_a a JOIN rt_b b ON a.k = b.k JOIN rt_c c ON c.k = b.k GROUP BY a.k),
     y AS (SELECT c.k, max(c.z) AS s FROM rt_c c JOIN rt_a a ON a.k = c.k JOIN rt_b b ON b.k = a.k GROUP BY c.k),
     u AS (SELECT * FROM x UNION ALL SELECT * FROM y)
SELECT k, s, row_number() OVER (PARTITION BY k ORDER BY s) AS rn, count(*) OVER (PARTITION BY k) AS n FROM u
"""


@pytest.fixture
def rule_views(spark):
    if not sparkrules.loaded(spark):
        pytest.skip(f"the session has no plan rule: {sparkrules.last_error or 'switched off'}")
    spark.range(0, 40).selectExpr("id % 7 AS k", "id AS v").coalesce(1).createOrReplaceTempView("rt_a")
    spark.range(0, 30).selectExpr("id % 5 AS k", "id AS w").coalesce(1).createOrReplaceTempView("rt_b")
    spark.range(0, 20).selectExpr("id % 3 AS k", "id AS z").coalesce(1).createOrReplaceTempView("rt_c")
    yield spark
    for name in ("rt_a", "rt_b", "rt_c"):
        spark.catalog.dropTempView(name)


settings = E.session_settings


def plan_and_rows(spark) -> tuple[int, list[tuple]]:
    df = spark.sql(QUERY)
    shuffles = df._jdf.queryExecution().executedPlan().toString().count("Exchange")
    return shuffles, sorted(tuple(row) for row in df.collect())


@pytest.mark.spark
def test_a_small_pass_drops_one_partition_shuffles_and_gets_the_same_rows(rule_views):
    spark = rule_views
    with E.tuned_session(spark, 100):  # a small pass: the rule on
        on_shuffles, on_rows = plan_and_rows(spark)
        with settings(spark, {sparkrules.ENABLED_KEY: "false"}):
            off_shuffles, off_rows = plan_and_rows(spark)
    assert off_shuffles >= 5  # the joins of joins, as Spark plans them
    assert on_shuffles < off_shuffles
    assert on_rows == off_rows
    # keys 0, 1 and 2 are in all three tables: one row each from x and from y, numbered 1 and 2 within k
    assert sorted((k, rn, n) for k, _, rn, n in on_rows) == [(k, rn, 2) for k in (0, 1, 2) for rn in (1, 2)]


@pytest.mark.spark
def test_the_rule_does_not_act_with_union_output_partitioning_on(rule_views):
    spark = rule_views
    with E.tuned_session(spark, 100):
        with settings(spark, {"spark.sql.unionOutputPartitioning": "true", sparkrules.ENABLED_KEY: "false"}):
            planned, expected = plan_and_rows(spark)
        with settings(spark, {"spark.sql.unionOutputPartitioning": "true"}):
            shuffles, rows = plan_and_rows(spark)
    assert shuffles == planned  # the class's own guard: nothing dropped
    assert rows == expected


@pytest.mark.spark
def test_the_rule_is_off_outside_a_small_pass(rule_views):
    spark = rule_views
    with E.tuned_session(spark, 100):
        small, _ = plan_and_rows(spark)
    shuffles, _ = plan_and_rows(spark)  # the session's own settings: no pass_conf
    with E.tuned_session(spark, sparkrules.MAX_ROWS):  # still a small pass, but too many rows for the rule
        many, _ = plan_and_rows(spark)
    assert small < shuffles
    assert many > small


@pytest.mark.spark
def test_a_judged_run_has_the_same_checks_with_and_without_the_rule(rule_views, s3_server, mutant_deep_run,
                                                                    monkeypatch):
    run_id, summary = mutant_deep_run  # judged with the rule (the session has it; a small pass)
    monkeypatch.setenv(sparkrules.SWITCH_ENV, "off")
    again = J.judge_stores(rule_views, [ObjectStore.for_run(s3_server.config, run_id)])[run_id]

    def seen(checks):
        return [(c["name"], c.get("state"), c.get("success"), c.get("rules")) for c in checks]

    assert summary["verdict"] == "invalid"  # the mutant's rules fail: counts and examples are compared below
    assert seen(again.checks) == seen(summary["checks"])


REUSED = """
WITH j AS (SELECT a.k, b.w, c.z FROM rt_a a JOIN rt_b b ON a.k = b.k JOIN rt_c c ON c.k = b.k)
SELECT x.k, count(*) AS n FROM j x JOIN j y ON x.k = y.k AND x.w = y.w AND x.z = y.z GROUP BY x.k
"""


@pytest.mark.spark
def test_a_shuffle_spark_reuses_is_kept(rule_views):
    spark = rule_views

    def plan_and_rows():
        df = spark.sql(REUSED)
        plan = df._jdf.queryExecution().executedPlan().toString()
        return plan.count("ReusedExchange"), plan.count("Exchange"), sorted(tuple(r) for r in df.collect())

    with E.tuned_session(spark, 100):
        reused, shuffles, rows = plan_and_rows()
        with settings(spark, {sparkrules.ENABLED_KEY: "false"}):
            reused_off, shuffles_off, rows_off = plan_and_rows()
    assert reused_off >= 1  # both sides of the self-join shuffle j the same way: computed once, read twice
    assert reused == reused_off
    assert shuffles < shuffles_off  # the others are dropped
    assert rows == rows_off


@pytest.mark.spark
def test_the_rule_is_on_only_below_max_rows_in_a_session_that_has_it(rule_views):
    assert sparkrules.pass_conf(rule_views, sparkrules.MAX_ROWS - 1) == {
        sparkrules.ENABLED_KEY: "true", "spark.sql.unionOutputPartitioning": "false"}
    assert sparkrules.pass_conf(rule_views, sparkrules.MAX_ROWS) == {}

    class Without:  # a session started without the extension: Spark's settings left as they are
        class conf:
            @staticmethod
            def get(key, default=None):
                return default

    assert sparkrules.pass_conf(Without, 10) == {}


def test_switched_off_nothing_is_loaded_or_set(monkeypatch):
    monkeypatch.setenv(sparkrules.SWITCH_ENV, "off")
    assert sparkrules.built() is None
    assert sparkrules.ensure() is None and sparkrules.last_error is None
    assert sparkrules.pass_conf(None, 0) == {}  # off: the session is not even asked
    assert "spark.sql.extensions" not in spark_conf_keys()


def spark_conf_keys() -> set[str]:
    from regionchaos.spark import spark_conf

    return set(spark_conf("t", "local[2]"))


def test_a_built_jar_is_loaded_by_the_session_conf(monkeypatch, tmp_path):
    jar = tmp_path / "rules.jar"
    jar.write_bytes(b"")
    monkeypatch.setattr(sparkrules, "jar_path", lambda: jar)
    from regionchaos.spark import spark_conf

    conf = spark_conf("t", "local[2]")
    assert conf["spark.jars"] == str(jar)
    assert conf["spark.sql.extensions"] == sparkrules.EXTENSION_CLASS
    jar.unlink()
    assert "spark.sql.extensions" not in spark_conf("t", "local[2]")


def test_without_a_jdk_nothing_is_built_and_the_reason_is_kept(monkeypatch, tmp_path):
    monkeypatch.setattr(sparkrules, "jar_path", lambda: tmp_path / "share" / "rules.jar")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no javac, no jar
    assert sparkrules.ensure() is None
    assert "javac" in sparkrules.last_error
    assert not (tmp_path / "share").exists() or not any((tmp_path / "share").iterdir())


@pytest.mark.slow
def test_ensure_compiles_the_extension_into_place(monkeypatch, tmp_path):
    if find_tool("javac") is None:
        pytest.skip("no javac here")
    target = tmp_path / "share" / "spark-rules-4.1.3-new.jar"
    target.parent.mkdir()
    (target.parent / "spark-rules-4.1.3-old.jar").write_bytes(b"earlier sources")
    (target.parent / "spark-4.1.3.jsa").write_bytes(b"the class archive")
    monkeypatch.setattr(sparkrules, "jar_path", lambda: target)
    assert sparkrules.ensure() == target
    names = zipfile.ZipFile(target).namelist()
    assert "regionchaos/spark/SinglePartitionShuffles.class" in names
    # the earlier build gone, the archive kept, no work folder left behind
    assert sorted(p.name for p in target.parent.iterdir()) == ["spark-4.1.3.jsa", "spark-rules-4.1.3-new.jar"]


def test_a_compile_error_is_reported_not_raised(monkeypatch, tmp_path):
    if find_tool("javac") is None:
        pytest.skip("no javac here")
    source = tmp_path / "src"
    source.mkdir()
    (source / "Broken.java").write_text("class Broken { int x = ; }\n")
    monkeypatch.setattr(sparkrules, "SOURCES", source)
    monkeypatch.setattr(sparkrules, "jar_path", lambda: tmp_path / "share" / "rules.jar")
    assert sparkrules.ensure() is None
    assert sparkrules.last_error.startswith("javac failed (exit")
    assert not (tmp_path / "share" / "rules.jar").exists()


def test_a_folder_that_cannot_be_written_is_reported_not_raised(monkeypatch, tmp_path):
    if find_tool("javac") is None:
        pytest.skip("no javac here")
    blocker = tmp_path / "share"
    blocker.write_text("a file where the folder should be")
    monkeypatch.setattr(sparkrules, "jar_path", lambda: blocker / "rules.jar")
    assert sparkrules.ensure() is None
    assert sparkrules.last_error.startswith(f"cannot build {blocker / 'rules.jar'}")


def test_the_set_up_command_exits_unknown_not_invalid_when_it_cannot_build(monkeypatch, capsys):
    monkeypatch.setenv(sparkrules.SWITCH_ENV, "off")
    assert sparkrules.main([]) == 3  # an infrastructure error, never "invariant violated"
    assert "no Spark plan rule" in capsys.readouterr().err
