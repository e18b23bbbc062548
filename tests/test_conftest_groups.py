"""The xdist grouping of tests/conftest.py keeps one Spark session: every test file whose tests
request the `spark` fixture (directly or through another fixture) is in the Spark group, which
one worker runs."""

import pytest

from tests.conftest import SPARK_GROUP, file_group, uses_spark


def test_every_file_whose_tests_use_spark_is_in_the_spark_group(request):
    root = request.config.rootpath
    using = {item.nodeid.split("::")[0] for item in request.session.items if "spark" in item.fixturenames}
    if not using:
        pytest.skip("no collected test uses spark (a subset of the suite)")
    outside = sorted(path for path in using if file_group(root, path) != SPARK_GROUP)
    assert outside == [], f"these files use spark but would run on another worker: {outside}"


def test_a_file_is_grouped_by_the_fixtures_it_takes(tmp_path):
    takes = tmp_path / "test_a.py"
    takes.write_text("import pytest\n\n@pytest.fixture\ndef base(spark):\n    return spark\n")
    plain = tmp_path / "test_b.py"
    plain.write_text("def test_b(tmp_path, sparkle):\n    pass\n")
    assert uses_spark(takes) and not uses_spark(plain)
    assert file_group(tmp_path, "test_a.py::test_x") == SPARK_GROUP
    assert file_group(tmp_path, "test_b.py::test_b") == "test_b.py"


@pytest.mark.parametrize("env, markexpr, runs", [
    (None, "", "ci"),  # the README's test command: the short real-Flink run only
    ("ci", "", "ci"),
    ("none", "", "none"),
    ("all", "", "all"),
    (None, "flink", "all"),  # -m flink: the person asked for them
    ("bogus", "not browser", "ci"),
])
def test_which_real_flink_tests_run(monkeypatch, env, markexpr, runs):
    from types import SimpleNamespace

    from tests.conftest import flink_tests

    if env is None:
        monkeypatch.delenv("REGIONCHAOS_FLINK_TESTS", raising=False)
    else:
        monkeypatch.setenv("REGIONCHAOS_FLINK_TESTS", env)
    assert flink_tests(SimpleNamespace(option=SimpleNamespace(markexpr=markexpr))) == runs


def test_the_cluster_tests_collected_here_are_skipped_unless_asked(request):
    from tests.conftest import flink_tests

    flink = [item for item in request.session.items if item.get_closest_marker("flink")]
    if not flink:
        pytest.skip("no real-Flink test collected (a subset of the suite)")
    which = flink_tests(request.config)
    for item in flink:
        skipped = any(m.name == "skip" for m in item.iter_markers())
        wanted = which == "all" or (which == "ci" and item.get_closest_marker("flink_ci") is not None)
        assert skipped != wanted, item.nodeid


def test_the_spark_group_goes_first_then_the_long_files_then_the_most_tests():
    from tests.conftest import FIRST_IN_SPARK_GROUP, LONG_FILES, ranked

    queue = {"tests/test_small.py": {"tests/test_small.py::a": False},
             "tests/test_many.py": {f"tests/test_many.py::t{i}": False for i in range(5)},
             LONG_FILES[1]: {f"{LONG_FILES[1]}::x": False},
             SPARK_GROUP: {"tests/test_a.py::s": False, f"{FIRST_IN_SPARK_GROUP}::ci": False,
                           "tests/test_b.py::s": False},
             LONG_FILES[0]: {f"{LONG_FILES[0]}::y": False}}
    order = ranked(queue)
    assert [group for group, _ in order] == [SPARK_GROUP, LONG_FILES[0], LONG_FILES[1], "tests/test_many.py",
                                             "tests/test_small.py"]
    assert list(order[0][1]) == [f"{FIRST_IN_SPARK_GROUP}::ci", "tests/test_a.py::s", "tests/test_b.py::s"]


def test_the_files_the_order_names_exist(request):
    from tests.conftest import FIRST_IN_SPARK_GROUP, LONG_FILES

    root = request.config.rootpath
    assert [f for f in (*LONG_FILES, FIRST_IN_SPARK_GROUP) if not (root / f).is_file()] == []
    assert uses_spark(root / FIRST_IN_SPARK_GROUP)  # else it would not be in the Spark group at all
    assert not any(uses_spark(root / f) for f in LONG_FILES)


def _collect(request, *options: str):
    """``pytest --co tests/test_verdict.py`` with ``options`` in a fresh process from the project root."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, "--co", "tests/test_verdict.py"]
    return subprocess.run(args, cwd=request.config.rootpath, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("dist, refused", [("load", True), ("loadscope", True), (None, False)])
@pytest.mark.slow
def test_workers_run_with_the_spark_group_or_not_at_all(request, dist, refused):
    """``pytest -n 2`` runs with ``--dist loadfile`` (tests/conftest.py); another mode would split the Spark
    files over workers, each building the judge pool's runs into the one S3 server: refused up front."""
    done = _collect(request, "-n", "2", *(["--dist", dist] if dist else []))
    if refused:
        assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
        assert f"--dist {dist}" in done.stderr and "loadfile" in done.stderr, done.stderr
    else:
        assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
        assert "test_verdict.py" in done.stdout


@pytest.mark.slow
def test_the_suite_runs_without_xdist_too(request):
    """The loadfile default lives in tests/conftest.py, not in pyproject's ``addopts``: ``-p no:xdist`` (one
    process, as bench/cpu_by_test.py runs the suite) would not know ``--dist``."""
    done = _collect(request, "-p", "no:xdist")
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
