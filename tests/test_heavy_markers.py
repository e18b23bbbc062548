"""The heavy markers' checks (tests/conftest_heavy.py) fail on a test that starts something heavy unmarked.

In:  small test files run by pytester in a fresh process, with the plugin and the Spark fixture's module
     loaded (collection only where the Spark fixture is involved: no session starts); command lines of
     the processes the suite starts.
Out: collection fails naming a test that takes the `spark` fixture (or a fixture built on it) without the
     marker, and passes once it is marked; a test that starts a process looking like a Spark driver fails
     at tear-down unless marked; every fixture the plugin names exists; the fast lane's expression
     deselects every heavy marker, and ``--fast`` runs the rest (with a given ``-m`` too).
"""

from __future__ import annotations

import sys

import pytest

from tests.conftest_heavy import FAST_LANE, HEAVY_FIXTURES, HEAVY_MARKERS, heavy_kind, is_pytest

PLUGINS = ("-p", "tests.conftest_spark", "-p", "tests.conftest_heavy")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in this process: collection only, so nothing the plugin watches for starts."""
    return pytester.runpytest(*PLUGINS, "-p", "no:cacheprovider", *args)


@pytest.fixture
def on_path(pytester: pytest.Pytester, request, monkeypatch) -> pytest.Pytester:
    pytester.makeini("[pytest]\nmarkers =\n    spark: x\n    airflow: x\n    browser: x\n    cluster: x\n"
                     "    flink: x\n    slow: x\n    named: x\n")
    monkeypatch.setenv("PYTHONPATH", str(request.config.rootpath))  # for the subprocess: this checkout's tests/
    return pytester


def test_a_test_taking_spark_unmarked_fails_collection_naming_it_and_collects_once_marked(on_path):
    on_path.makepyfile(test_unmarked="""
        import pytest

        @pytest.fixture
        def frames(spark):
            return spark

        def test_direct(spark):
            pass

        def test_through_a_fixture(frames):
            pass

        def test_plain():
            pass
        """, test_marked="""
        import pytest

        pytestmark = pytest.mark.spark

        def test_direct(spark):
            pass
        """)
    done = _run(on_path, "--co", "-q", "-k", "test_plain")  # deselecting the heavy ones does not hide them
    assert done.ret == pytest.ExitCode.INTERRUPTED, done.stdout.str()
    out = done.stdout.str()
    assert "ERROR collecting test_unmarked.py" in out
    assert "test_unmarked.py::test_direct takes tests.conftest_spark.spark: mark it @pytest.mark.spark" in out
    assert "test_unmarked.py::test_through_a_fixture takes tests.conftest_spark.spark" in out
    assert "test_plain takes" not in out and "test_marked" not in out

    (on_path.path / "test_unmarked.py").unlink()
    done = _run(on_path, "--co", "-q")
    assert done.ret == pytest.ExitCode.OK, done.stdout.str()
    done.stdout.fnmatch_lines(["*test_marked.py::test_direct*"])


@pytest.mark.slow
def test_a_test_that_starts_a_spark_like_process_unmarked_fails_at_tear_down(on_path):
    child = """
        import subprocess, sys
        import pytest

        {mark}
        def test_starts_a_driver():
            subprocess.run([sys.executable, "-c", "import time; time.sleep(1)",
                            "org.apache.spark.deploy.SparkSubmit"], check=True)
        """
    on_path.makepyfile(test_unmarked=child.format(mark=""), test_marked=child.format(mark="@pytest.mark.spark"))
    # in a process of its own: this one's watch would see the child too
    done = on_path.runpytest_subprocess(*PLUGINS, "-p", "no:cacheprovider", "-q")
    done.assert_outcomes(passed=2, errors=1)
    done.stdout.fnmatch_lines(["*ERROR at teardown of test_starts_a_driver*", "*started without its marker*",
                               "*@pytest.mark.spark: *SparkSubmit*", "*ERROR test_unmarked.py::test_starts_a_driver*"])


@pytest.mark.parametrize("cmdline, kind", [
    (["/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "-cp", "x", "org.apache.spark.deploy.SparkSubmit"], "spark"),
    (["bash", "/v/pyspark/bin/spark-class", "org.apache.spark.deploy.SparkSubmit"], "spark"),
    (["java", "-cp", "x", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"], "cluster"),
    (["java", "-cp", "x", "org.apache.spark.deploy.worker.Worker", "spark://127.0.0.1:7077"], "cluster"),
    (["java", "-cp", "x", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"], "flink"),
    (["/usr/lib/chromium/chromium", "--headless"], "browser"),
    (["/w/.venv/bin/python", "/w/.venv/bin/airflow", "dags", "test", "regionchaos_manual"], "airflow"),
    ([sys.executable, "-m", "airflow", "api-server"], "airflow"),
    (["javac", "-d", "out", "SinglePartitionShuffles.java"], None),
    ([sys.executable, "-m", "regionchaos.storage.s3serve"], None),
    ([], None),
])
def test_processes_are_told_apart_by_their_command_line(cmdline, kind):
    assert heavy_kind(cmdline) == kind


@pytest.mark.parametrize("cmdline, nested", [
    ([sys.executable, "-mpytest", "-q"], True), ([sys.executable, "-m", "pytest"], True),
    (["/w/.venv/bin/pytest", "tests"], True), ([sys.executable, "-c", "import pytest"], False)])
def test_a_nested_pytest_is_told_apart(cmdline, nested):
    assert is_pytest(cmdline) == nested


def test_every_fixture_the_plugin_names_exists(request):
    """A renamed fixture would silently drop out of the collection check."""
    import importlib

    for key, markers in HEAVY_FIXTURES.items():
        module, name = key.rsplit(".", 1)
        assert hasattr(importlib.import_module(module), name), key
        assert set(markers) <= set(HEAVY_MARKERS), key


def test_the_fast_lane_leaves_out_every_heavy_marker_and_slow():
    from _pytest.mark.expression import Expression

    lane = Expression.compile(FAST_LANE)
    for marker in (*HEAVY_MARKERS, "slow"):
        assert not lane.evaluate(lambda name, **kw: name == marker), marker
    assert lane.evaluate(lambda name, **kw: False)


@pytest.mark.parametrize("extra, selected", [((), {"test_plain", "test_named"}), (("-m", "not named"), {"test_plain"})])
def test_fast_runs_what_no_heavy_or_slow_marker_carries_and_keeps_a_given_m(on_path, extra, selected):
    on_path.makepyfile(test_lane="""
        import pytest

        def test_plain():
            pass

        @pytest.mark.named
        def test_named():
            pass

        @pytest.mark.slow
        def test_slow():
            pass

        @pytest.mark.airflow
        def test_airflow():
            pass
        """)
    done = _run(on_path, "--fast", "--co", "-q", *extra)
    names = {line.split("::")[-1] for line in done.stdout.lines if "::" in line}
    assert names == selected, done.stdout.str()
