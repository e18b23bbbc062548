"""The heavy markers hold: a test that starts Spark, Airflow, a Spark cluster, Flink or Chromium says so.

Load with ``-p tests.conftest_heavy`` or ``pytest_plugins`` in tests/conftest.py.
In:  the collected tests, their fixtures and markers; while each test runs, the processes it starts.
Out: two checks, so that the fast lane (``scripts/test.sh --fast``, `FAST_LANE`) leaves out every test
     that starts one of those:
- at collection: a test whose fixtures (directly or through other fixtures) include one of
  `HEAVY_FIXTURES` must carry that fixture's markers, else its module fails to collect, naming the
  test, the fixture and the marker (before ``-m`` deselects anything). This is what sees a test that
  uses the session's Spark, which starts no new process once it runs.
- while it runs (set-up, call, tear-down): every new process below this one is classified by its
  command line (`heavy_kind`: a Spark driver or ``spark-submit``, a standalone master or worker, a
  Flink JVM, Chromium, an Airflow command); a kind whose marker the test lacks fails the test at
  tear-down, naming the process. This is what sees a `regionchaos` command or a spark_jobs script
  started in a subprocess. Processes that live shorter than `POLL_S` can slip through; nothing of
  these kinds starts that fast. A pytest that a test runs checks its own tests: what it starts is
  left to it.
An Airflow imported in-process (a DagBag, the plugin's app, a metadata DB) starts no Airflow process and
needs no marker; `slow` is a judgement, not a detection.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest

HEAVY_MARKERS = ("spark", "airflow", "browser", "cluster", "flink")
# The fast lane (``pytest --fast``, scripts/test.sh --fast): everything but what these markers carry.
FAST_LANE = "not (spark or airflow or browser or cluster or flink or slow)"

# "module.fixture" -> the markers a test that takes it must carry: each fixture starts what its
# markers name (or takes a session that did). Fixtures built on these inherit them through the closure.
HEAVY_FIXTURES: dict[str, tuple[str, ...]] = {
    "tests.conftest_spark.spark": ("spark",),
    "tests.test_airflow_e2e.demo": ("airflow", "spark"),
    "tests.test_airflow_browser.local_ui": ("airflow",),
    "tests.test_airflow_browser.browser": ("browser",),
    "tests.test_cluster.cluster": ("cluster",),
}

POLL_S = 0.2
# A process's command line -> the marker it calls for (the first that matches).
_CLASSES = (
    ("cluster", ("org.apache.spark.deploy.master.Master", "org.apache.spark.deploy.worker.Worker")),
    ("flink", ("org.apache.flink.",)),
    ("spark", ("org.apache.spark.", "pyspark/bin/spark-submit", "pyspark/bin/spark-class")),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast", action="store_true",
                     help=f"the fast lane: -m '{FAST_LANE}' (with any -m given: both)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("fast"):
        asked = config.option.markexpr
        config.option.markexpr = f"({FAST_LANE}) and ({asked})" if asked else FAST_LANE


def heavy_kind(cmdline: list[str]) -> str | None:
    """The marker a process with this command line calls for, or None for any other process."""
    if not cmdline:
        return None
    text = " ".join(cmdline)
    for kind, needles in _CLASSES:
        if any(needle in text for needle in needles):
            return kind
    if "chrom" in Path(cmdline[0]).name or "headless_shell" in Path(cmdline[0]).name:
        return "browser"
    head = cmdline[:3]
    if any(Path(arg).name == "airflow" for arg in head) or " -m airflow" in " ".join(head):
        return "airflow"
    return None


def is_pytest(cmdline: list[str]) -> bool:
    """A pytest process (``pytest``, ``python -m pytest``, pytester's ``python -mpytest``): the tests it runs are
    its own to check."""
    return any(Path(arg).name in ("pytest", "py.test", "-mpytest") for arg in cmdline[:3])


def marker_names(item: pytest.Item) -> set[str]:
    return {mark.name for mark in item.iter_markers()}


def fixture_key(fixturedef) -> str:
    return f"{fixturedef.func.__module__}.{fixturedef.argname}"


def missing_fixture_markers(item: pytest.Item) -> list[tuple[str, str]]:
    """(fixture, marker) for each heavy fixture in the test's closure whose marker it lacks."""
    have = marker_names(item)
    out = []
    defs = item._fixtureinfo.name2fixturedefs
    for name in item.fixturenames:
        for fixturedef in defs.get(name, ()):
            for marker in HEAVY_FIXTURES.get(fixture_key(fixturedef), ()):
                if marker not in have:
                    out.append((fixture_key(fixturedef), marker))
    return out


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A module (or class) whose tests take a heavy fixture without its marker fails to collect, naming each."""
    report = yield
    if report.passed:
        wrong = [f"{item.nodeid} takes {fixture}: mark it @pytest.mark.{marker}"
                 for item in report.result if isinstance(item, pytest.Item) and hasattr(item, "_fixtureinfo")
                 for fixture, marker in missing_fixture_markers(item)]
        if wrong:
            report.outcome, report.result = "failed", []
            report.longrepr = ("tests that start something heavy without its marker (tests/conftest_heavy.py):\n  "
                               + "\n  ".join(wrong))
    return report


class Watch:
    """One thread per test process: while a test runs (`begin` .. `end`), the heavy processes started below this
    process since `begin`, polled every `POLL_S`. (A thread per test cost 10 ms a test in hand-offs.)"""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.lock = threading.Lock()
        self.before: set[int] = set()
        self.found: dict[int, tuple[str, str]] | None = None  # pid -> (marker, command line); None between tests
        threading.Thread(target=self._run, name="heavy-watch", daemon=True).start()

    def _children(self) -> list[psutil.Process]:
        try:
            return self.me.children(recursive=True)
        except psutil.Error:
            return []

    def begin(self) -> None:
        before = {p.pid for p in self._children()}
        with self.lock:
            self.before, self.found = before, {}

    def end(self) -> dict[int, tuple[str, str]]:
        self.poll()
        with self.lock:
            found, self.found = self.found or {}, None
        return found

    def poll(self) -> None:
        with self.lock:
            if self.found is None:
                return
            nested: set[int] = set()
            for child in self._children():  # parents before their children
                if child.pid in nested or child.pid in self.found:
                    continue
                try:
                    cmdline = child.cmdline()
                    if is_pytest(cmdline):  # a pytest run by a test watches its own tests
                        nested.update(p.pid for p in child.children(recursive=True))
                        continue
                except psutil.Error:
                    continue
                if child.pid in self.before:
                    continue
                kind = heavy_kind(cmdline)
                if kind is not None:
                    self.found[child.pid] = (kind, " ".join(cmdline)[:160])

    def _run(self) -> None:
        while True:
            time.sleep(POLL_S)
            self.poll()


_WATCH = pytest.StashKey[Watch]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    if _WATCH not in item.config.stash:
        item.config.stash[_WATCH] = Watch()
    item.config.stash[_WATCH].begin()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem):
    result = yield
    watch = item.config.stash.get(_WATCH, None)
    if watch is None:
        return result
    have = marker_names(item)
    wrong = sorted({(kind, cmd) for kind, cmd in watch.end().values() if kind not in have})
    if wrong:
        pytest.fail("started without its marker (tests/conftest_heavy.py):\n"
                    + "\n".join(f"  @pytest.mark.{kind}: {cmd}" for kind, cmd in wrong), pytrace=False)
    return result
