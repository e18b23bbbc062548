"""Shared fixtures: one embedded S3 server and one Spark session per test session.

scripts/test.sh runs the suite on two pytest-xdist workers (``-n 2 --dist loadfile``):
- the controller starts the one S3 server and hands it to the workers
  (tests/conftest_storage.py);
- the scheduler below keeps each test file on one worker (its module fixtures set up once)
  and puts every file that uses the `spark` fixture on the SAME worker, so there is still one
  Spark session, started once; that group is handed out first (it is the largest), the few
  minute-long files of the other worker right after it (`LONG_FILES`), and in the group the short
  real-Flink run first (`FIRST_IN_SPARK_GROUP`).
A plain ``pytest`` (no ``-n``) runs everything in one process, as before.

Every JVM the tests start (the Spark sessions of this process and of the subprocesses, the
standalone cluster's daemons and executors) lives for seconds to minutes and handles small
data, so it runs with the C1 compiler only (``JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1``,
unless JAVA_TOOL_OPTIONS is set): measured on a cold `regionchaos run --scenario smoke`,
64.5 -> 43.0 CPU seconds and 40 -> 34 s wall. Real runs keep the JVM's default (C2 pays off
on `large` and long swarms). C1 alone reserves 48 MB for compiled code, which a test worker's
long-lived driver fills (the JVM then says "CodeCache is full. Compiler has been disabled" and
interprets everything from there on): 256 MB, as tiered compilation reserves. The tests do not
build the drivers' class archive (`regionchaos.jvmcds`): the suite starts about nine drivers of
its own, fewer than the archive's build costs (bench/results/judge_profile/README.md).
"""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

import pytest

pytest_plugins = ["tests.conftest_storage", "tests.conftest_spark", "tests.judge_pool", "tests.conftest_heavy", "pytester"]

os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m")  # the docstring

SPARK_GROUP = "spark-session"


# The `spark` fixture and the session fixtures built on it (tests/conftest_spark.py, tests/judge_pool.py)
SPARK_FIXTURES = frozenset({"spark", "judge_pool", "mutant_deep_run"})


@cache
def uses_spark(path: Path) -> bool:
    """Does a test file define a test or fixture that takes the `spark` fixture, or one built on it?"""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and any(arg.arg in SPARK_FIXTURES for arg in node.args.args + node.args.kwonlyargs)
               for node in ast.walk(tree))


def file_group(rootpath: Path, nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return SPARK_GROUP if uses_spark(rootpath / path) else path


# Files that each take minutes of wall time outside the Spark group (a fresh clone's run: 272,
# 134 and 122 s; the Spark group 447 s, everything else 93 s): handed out right after the Spark group,
# longest first, so that they run beside it. xdist's own order (most tests first) handed them out last,
# after dozens of small files, and the Spark worker, done first, then took test_cluster.py on its own.
LONG_FILES = ("tests/test_airflow_e2e.py", "tests/test_airflow_browser.py", "tests/test_cluster.py")


def schedule_rank(group: str, tests: int) -> tuple[int, int]:
    """The order groups are handed out in: the Spark group, `LONG_FILES` in their order, then the others,
    most tests first (as xdist does)."""
    if group == SPARK_GROUP:
        return (0, 0)
    if group in LONG_FILES:
        return (1, LONG_FILES.index(group))
    return (2, -tests)


# First in the Spark group: the short real-Flink run spends most of its minute waiting on its cluster (start,
# recovery, stop); first, that wait overlaps the other worker's tests instead of ending the run.
FIRST_IN_SPARK_GROUP = "tests/test_real_flink_ci.py"


def ranked(groups: dict[str, dict]) -> list[tuple[str, dict]]:
    """The groups (group -> its tests) in `schedule_rank` order, equal ranks in their order; in the Spark
    group, the tests of `FIRST_IN_SPARK_GROUP` first."""
    out = sorted(groups.items(), key=lambda item: schedule_rank(item[0], len(item[1])))
    return [(group, dict(sorted(tests.items(), key=lambda kv: not kv[0].startswith(FIRST_IN_SPARK_GROUP + "::")))
             if group == SPARK_GROUP else tests) for group, tests in out]


def pytest_configure(config: pytest.Config) -> None:
    """Workers need the Spark group: ``pytest -n N`` without ``--dist`` runs with ``--dist loadfile``, as
    scripts/test.sh does (xdist's own default, ``load``, is replaced here; not in pyproject's ``addopts``, which
    would break ``-p no:xdist``). Another mode asked for would put Spark files on several workers, each with its
    own Spark session and its own judge pool building the same run ids in the one shared S3 server (the second
    pool stops at MetadataExists): refused before anything starts."""
    if not getattr(config.option, "numprocesses", None):
        return
    asked = any(arg.startswith("--dist") for arg in config.invocation_params.args)
    dist = config.getoption("dist", "no")
    if not asked:
        config.option.dist = "loadfile"
    elif dist != "loadfile":
        raise pytest.UsageError(f"--dist {dist}: the suite runs on pytest-xdist workers with --dist loadfile only "
                                "(the default here): the Spark files share one worker, its Spark session and its "
                                "judge pool")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SparkFilesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return file_group(config.rootpath, nodeid)

        def _assign_work_unit(self, node) -> None:
            if not getattr(self, "_ranked", False):  # the queue is complete by the first hand-out: order it
                order = ranked(self.workqueue)
                self.workqueue.clear()
                self.workqueue.update(order)
                self._ranked = True
            super()._assign_work_unit(node)

    return SparkFilesTogether(config, log)


def flink_tests(config: pytest.Config) -> str:
    """Which real-Flink tests run (each starts a real cluster): ``all`` (``REGIONCHAOS_FLINK_TESTS=all``, or
    a ``-m`` that names flink: 12 tests, 9-10 minutes here), ``ci`` (the default: the short one, marked
    ``flink_ci``, tests/test_real_flink_ci.py), or ``none`` (``REGIONCHAOS_FLINK_TESTS=none``)."""
    wanted = os.environ.get("REGIONCHAOS_FLINK_TESTS", "")
    if wanted == "all" or "flink" in (config.option.markexpr or ""):
        return "all"
    return "none" if wanted == "none" else "ci"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The real-Flink tests that `flink_tests` leaves out are skipped, with the way to run them. (The order
    the workers get files in is the scheduler's, `ranked`, not the collection's.)"""
    which = flink_tests(config)
    if which != "all":
        skip = pytest.mark.skip(reason="a real-Flink cluster test: the short one (flink_ci) runs unless "
                                       "REGIONCHAOS_FLINK_TESTS=none, REGIONCHAOS_FLINK_TESTS=all (or -m flink) "
                                       "runs all of them")
        for item in items:
            if item.get_closest_marker("flink") and not (which == "ci" and item.get_closest_marker("flink_ci")):
                item.add_marker(skip)
