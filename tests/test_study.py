"""The global-vs-regional study (`regionchaos study`, regionchaos.study).

The study's numbers come from emulated runs' artifacts; the closed form for global
checkpoints, (1 - p) ** tasks, is independent of the emulator, so the measured success rate
must land within a stated binomial tolerance of it. The page renders in headless Chromium.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from regionchaos.cli import main
from regionchaos.storage import ObjectStore
from regionchaos.study import STUDIES_PREFIX, StudyPlan, measure, run_study
from regionchaos.tables import SCHEMAS
from tests.offline_page import open_offline

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "artifacts" / "screenshots" / "study.png"
TOLERANCE_SIGMAS = 4  # |measured - closed form| <= 4 binomial standard errors of the closed form


def _checkpoint_row(cid: int, status: str, staleness: int | None, healing: bool = False) -> tuple:
    columns = [c.split()[0] for c in SCHEMAS["checkpoints"].split(", ")]
    values = dict.fromkeys(columns)
    values.update(run_id="r", checkpoint_id=cid, status=status, completed=status in ("GLOBAL", "REGIONAL"),
                   staleness=staleness, healing=healing)
    return tuple(values[c] for c in columns)


def _inventory_row(key: str, area: str, size: int) -> tuple:
    columns = [c.split()[0] for c in SCHEMAS["inventory"].split(", ")]
    values = dict.fromkeys(columns)
    values.update(run_id="r", key=key, area=area, size_bytes=size)
    return tuple(values[c] for c in columns)


def test_staleness_counts_from_the_oldest_state_a_failover_would_restore():
    """Attempts 1 aborted (nothing completed: 1 old), 2 global (0), 3 regional with a handle
    from checkpoint 2 (3 - 2 = 1), 4 aborted (still restoring 3's oldest state, 2: 2 old);
    the heal checkpoint 5 is not an attempt of the fault phase. Retained: checkpoints/ only."""
    rows = {
        "checkpoints": [_checkpoint_row(3, "REGIONAL", 1), _checkpoint_row(1, "ABORTED", None),
                        _checkpoint_row(5, "GLOBAL", 0, healing=True), _checkpoint_row(2, "GLOBAL", 0),
                        _checkpoint_row(4, "ABORTED", None)],
        "inventory": [_inventory_row("checkpoints/chk-2/a", "checkpoints", 100),
                      _inventory_row("checkpoints/chk-3/b", "checkpoints", 20),
                      _inventory_row("history/0001.jsonl", "history", 5000)],
    }
    got = measure(rows, first_checkpoint_id=1)
    assert got == {"attempts": 4, "completed": 2, "staleness_sum": 1 + 0 + 1 + 2, "staleness_max": 2,
                   "retained_bytes": 120}


def test_bad_study_options_exit_2_and_write_nothing(tmp_path, capsys):
    local = tmp_path / "runs"
    code = main(["study", "--probabilities", "0.01,1.5", "--local-dir", str(local)])
    out = capsys.readouterr().out
    assert code == 2
    assert "--probabilities" in out and "1.5" in out
    assert not local.exists()
    code = main(["study", "--policies", "global,tier3", "--local-dir", str(local)])
    out = capsys.readouterr().out
    assert code == 2 and "--policies" in out and "tier3" in out
    assert not local.exists()


@pytest.fixture(scope="module")
def study(s3_server, spark, tmp_path_factory):
    plan = StudyPlan(policies=("global", "regional"), probabilities=(0.003, 0.01), parallelism=(16,), seeds=8,
                     checkpoints=40, crash=0.0)
    local = tmp_path_factory.mktemp("study")
    return run_study(plan, storage=s3_server.config, spark=spark, local_dir=str(local))


@pytest.mark.spark
def test_global_success_rate_matches_the_closed_form(study):
    """Global checkpoints, declines only: an attempt completes iff none of the 32 tasks declines,
    so the rate is (1 - p)^32 (p = 0.01: 0.725; p = 0.003: 0.908). Counting p per subtask
    instead of per task (16 draws: 0.851 and 0.953) would be off by more than the tolerance."""
    assert study["errors"] == 0, study
    rows = {(r["policy"], r["probability"]): r for r in study["rows"]}
    assert set(rows) == {(policy, p) for policy in ("global", "regional") for p in (0.003, 0.01)}
    for p in (0.003, 0.01):
        row = rows[("global", p)]
        assert row["attempts"] == 8 * 40
        expected = (1 - p) ** 32
        sigma = math.sqrt(expected * (1 - expected) / row["attempts"])
        assert abs(row["success_rate"] - expected) <= TOLERANCE_SIGMAS * sigma, (p, row, expected, sigma)
        # on the same seeds, every attempt global completes also completes with regional checkpoints on
        assert rows[("regional", p)]["success_rate"] >= row["success_rate"]
    # and regional checkpoints complete the attempts where some task declined: clearly more of them
    assert rows[("regional", 0.01)]["success_rate"] - rows[("global", 0.01)]["success_rate"] > 0.1


@pytest.mark.spark
@pytest.mark.browser
def test_the_study_page_renders_its_plots_and_table(study, s3_server):
    page_bytes = ObjectStore(s3_server.config, f"{STUDIES_PREFIX}/{study['study_id']}").get("index.html")
    target = ROOT / "artifacts" / "study" / "index.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(page_bytes)
    assert Path(study["local"]).read_bytes() == page_bytes

    def read(page):
        seen = (page.eval_on_selector_all("img", "els => els.map(e => [e.id, e.complete && e.naturalWidth > 0])"),
                page.eval_on_selector_all(
                    "#study-table tbody tr", "els => els.map(e => [e.dataset.policy, e.dataset.p, "
                                             "e.querySelector('.rate') && e.querySelector('.rate').innerText])"),
                page.inner_text("#conclusion"))
        page.click("#study-table thead a[href='#sort-success_rate']")  # sorting: a link, no script
        shown = page.eval_on_selector_all("table[id^=study-table]", "els => els.filter(e => e.offsetParent).map(e => e.id)")
        rates = page.eval_on_selector_all("#study-table-by-success_rate .rate", "els => els.map(e => +e.innerText)")
        return (*seen, shown, rates)

    (images, table, headline, shown_tables, sorted_rates), requested = open_offline(target, SCREENSHOT, read)
    assert headline.startswith("Conclusion") and "parallelism 16" in headline and "p = 0.01" in headline
    assert shown_tables == ["study-table-by-success_rate"] and sorted_rates == sorted(sorted_rates, reverse=True)
    shown = dict(images)
    assert {"success", "staleness", "replayed", "retained", "requests"} <= set(shown)
    assert all(shown.values()), shown
    rates = {(policy, float(p)): float(rate) for policy, p, rate in table}
    for row in study["rows"]:
        assert rates[(row["policy"], row["probability"])] == pytest.approx(row["success_rate"], abs=5e-4)
    assert all(url.startswith(("file:", "data:")) for url in requested), requested
    assert SCREENSHOT.stat().st_size > 10_000


def test_a_restart_from_scratch_counts_its_records_as_replayed():
    """A region crash before any checkpoint completes restarts the whole job from scratch: every
    record consumed before it is consumed again, so it is replayed (the study's "records
    replayed" once missed these; with no restore from a checkpoint it stayed 0)."""
    from regionchaos.runner import emulate_in_memory
    from regionchaos.scenario import load

    quiet = {f"faults.{k}": 0.0 for k in ("decline", "timeout", "subtask_crash", "taskmanager_loss", "put_failure",
                                          "recovery_failure", "jobmanager_failover", "crash_before_metadata", "slow_put")}
    scenario = load("smoke", {**quiet, "faults.schedule": [{"checkpoint": 0, "kind": "subtask_crash", "region": 0}]})
    result, rows = emulate_in_memory(scenario, None)
    kinds = [e["kind"] for e in result.events]
    assert "global_restart_from_scratch" in kinds, kinds[:20]
    assert kinds.count("global_restore") == 0  # nothing restored from a checkpoint
    assert result.stats["global_failovers"] == 1
    assert result.stats["records_replayed"] > 0


# -- the page: a conclusion from the numbers, lines that coincide, a table sortable without script --

def _row(policy: str, par: int, p: float, rate: float, staleness: float = 1.0) -> dict:
    row = {"policy": policy, "parallelism": par, "probability": p, "seeds": 2, "tasks": 2 * par, "attempts": 40,
           "completed": round(40 * rate), "success_rate": rate, "success_rate_se": 0.01, "staleness_mean": staleness,
           "staleness_max": 3, "records_replayed": 10.0, "region_failovers": 1.0, "global_failovers": 0.0,
           "retained_bytes": 1e6, "s3_requests": 100.0}
    if policy == "global":
        row["closed_form"] = (1 - p) ** (2 * par)
    return row


def test_the_conclusion_is_computed_from_the_numbers():
    from regionchaos.study import conclusion

    rows = [_row("global", 16, 0.01, 0.70, 2.5), _row("regional", 16, 0.01, 0.95, 1.2), _row("pr", 16, 0.01, 0.95, 1.2),
            _row("global", 16, 0.001, 0.97), _row("regional", 16, 0.001, 0.96), _row("pr", 16, 0.001, 0.99),
            _row("global", 64, 0.001, 0.88), {"policy": "regional", "parallelism": 64, "probability": 0.001,
                                               "error": "RuntimeError: boom"}]
    lines = conclusion(rows)
    assert lines[0].startswith("At the hardest setting measured (parallelism 16, 32 tasks, p = 0.01)")  # 64 has no comparison
    assert "global checkpoints completed 70.0% of attempts" in lines[0] and "regional 95.0%, pr 95.0%" in lines[0]
    assert "global 2.50, regional 1.20, pr 1.20 checkpoints" in lines[0]
    assert "regional and pr give the same numbers there" in lines[1]
    assert "25.0 percentage points more" in lines[2]
    assert lines[3:] == ["regional completed at least as many attempts as global in 1 of 2 settings.",
                         "pr completed at least as many attempts as global in 2 of 2 settings."]
    assert conclusion([_row("regional", 16, 0.01, 0.9)]) == []  # nothing to compare with


def test_coinciding_lines_are_found_per_panel_and_said_on_the_page():
    from regionchaos.study import coincidences, coinciding, render_page

    series = {"global": ([0.1, 0.2], [0.5, 0.4]), "regional": ([0.1, 0.2], [0.9, 0.8]),
              "pr": ([0.1, 0.2], [0.9, 0.8 + 1e-15]), "keep-forcing": ([0.1, 0.2], [0.9, 0.7])}
    assert coinciding(series) == [["regional", "pr"]]
    rows = [_row("global", 16, 0.01, 0.7), _row("regional", 16, 0.01, 0.95), _row("pr", 16, 0.01, 0.95),
            _row("global", 16, 0.001, 0.97), _row("regional", 16, 0.001, 0.96), _row("pr", 16, 0.001, 0.93)]
    assert coincidences(rows, "success_rate") == []  # they part at p = 0.001
    same = [r for r in rows if r["probability"] == 0.01]
    assert coincidences(same, "success_rate") == [(16, ["regional", "pr"])]
    page = render_page({"study_id": "study-t", "plan": {"seeds": 2, "checkpoints": 20, "crash": 0.0,
                                                        "policies": ["global", "regional", "pr"]},
                        "base_scenario": "global-vs-regional", "rows": same, "cells": [], "errors": 0,
                        "wall_seconds": 1.0, "git_commit": None, "command": "regionchaos study"})
    assert 'id="success-coincide"' in page and "regional = pr at parallelism 16" in page
    assert '<div id="conclusion">' in page and "<script" not in page


def test_the_table_is_pre_sorted_by_every_column_with_errors_last():
    from regionchaos.study import TABLE_COLUMNS, sorted_tables

    rows = [_row("pr", 16, 0.01, 0.5), _row("global", 64, 0.001, 0.9),
            {"policy": "regional", "parallelism": 256, "probability": 0.01, "tasks": 512, "error": "boom"},
            _row("regional", 16, 0.05, 0.7)]
    tables = {key: [(r["policy"], r["parallelism"]) for r in ordered] for key, _, ordered in sorted_tables(rows)}
    assert set(tables) == {key for key, _, _ in TABLE_COLUMNS}
    assert tables["success_rate"] == [("global", 64), ("regional", 16), ("pr", 16), ("regional", 256)]
    assert tables["parallelism"][0] == ("regional", 256)  # an error row still has its settings
    assert [p for p, _ in tables["policy"]] == ["global", "regional", "regional", "pr"]
