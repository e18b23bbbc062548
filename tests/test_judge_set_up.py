"""The judge's set-up in the background (regionchaos/judge/engine.py `GXValidator.build_in_background`,
`judging_session`; regionchaos/tables/spark.py `warm_up`), and the report's imports (regionchaos/report.py
`import_in_background`).

A caller about to start Spark and judge builds GX on another thread while the JVM starts, then converts one
all-null row of every table there while it emulates. The thread's logic is tested with stand-ins for GX and
the session (pure logic: what is called, in which order, what a failure leaves); `warm_up` on the real
session. Their effect on a deep run's time is measured in bench/results/probes/README.md, never asserted here.
"""

from __future__ import annotations

import threading

import pytest

from regionchaos import report
from regionchaos import tables as tables_mod
from regionchaos.judge import engine as E


@pytest.fixture
def no_validator(monkeypatch):
    """A process whose GX validator is not built yet (restored afterwards: other tests share the real one)."""
    monkeypatch.setattr(E.GXValidator, "_instance", None)


def test_the_thread_builds_the_validator_then_warms_the_tables(no_validator, monkeypatch):
    calls: list[str] = []
    session = object()
    monkeypatch.setattr(E.GXValidator, "__init__", lambda self: calls.append("gx"))
    monkeypatch.setattr(E, "get_spark", lambda *a, **k: session)
    monkeypatch.setattr(tables_mod, "warm_up", lambda spark: calls.append(("warm", spark)))
    thread = E.GXValidator.build_in_background()
    assert isinstance(thread, threading.Thread) and thread.daemon
    thread.join(10)
    assert calls == ["gx", ("warm", session)]
    assert E.GXValidator._instance is not None  # the judge's own `get` finds it built


def test_nothing_starts_when_the_validator_exists(monkeypatch):
    monkeypatch.setattr(E.GXValidator, "_instance", object())
    assert E.GXValidator.build_in_background() is None


def test_a_failed_build_leaves_nothing_and_the_judges_get_raises_it_again(no_validator, monkeypatch):
    def broken(self):
        raise RuntimeError("suite file missing")

    monkeypatch.setattr(E.GXValidator, "__init__", broken)
    warmed = []
    monkeypatch.setattr(tables_mod, "warm_up", warmed.append)
    E.GXValidator.build_in_background().join(10)
    assert E.GXValidator._instance is None and warmed == []
    with pytest.raises(RuntimeError, match="suite file missing"):  # where the judge turns it into unknown
        E.GXValidator.get()


def test_judging_session_starts_the_set_up_before_the_session(no_validator, monkeypatch):
    order: list[str] = []
    monkeypatch.setattr(E.GXValidator, "build_in_background", classmethod(lambda cls: order.append("set-up")))
    monkeypatch.setattr(E, "get_spark", lambda app_name: order.append(f"spark {app_name}") or "S")
    assert E.judging_session("regionchaos-validate-x") == "S"
    assert order == ["set-up", "spark regionchaos-validate-x"]


@pytest.mark.spark
def test_warm_up_converts_every_table_and_leaves_no_view(spark, monkeypatch):
    views = {t.name for t in spark.catalog.listTables()}
    seen: list[str] = []
    original = tables_mod.spark.to_spark

    def counted(session, name, frame, **kwargs):
        seen.append(name)
        df = original(session, name, frame, **kwargs)
        assert df.count() == 1 and all(v is None for v in df.first())  # the all-null row, in the table's schema
        return df

    monkeypatch.setattr(tables_mod.spark, "to_spark", counted)
    tables_mod.warm_up(spark)
    assert seen == list(tables_mod.TABLES)
    assert {t.name for t in spark.catalog.listTables()} == views


def test_the_reports_imports_run_on_a_daemon_thread_of_their_own(monkeypatch):
    """`report.import_in_background` (a small deep run starts it before its Spark driver): matplotlib's import
    (`report._plt`) on another thread, which the caller does not wait for."""
    ran_on: list[str] = []
    monkeypatch.setattr(report, "_plt", lambda: ran_on.append(threading.current_thread().name))
    thread = report.import_in_background()
    assert isinstance(thread, threading.Thread) and thread.daemon
    thread.join(10)
    assert ran_on == [thread.name] and thread.name != threading.current_thread().name
