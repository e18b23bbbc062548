"""The run report renders offline in headless Chromium.

In:  one run through `regionchaos.runner.run` (smoke, seed 1, mutant ignore-failure-ratio: a
     failed invariant to show; the session's `mutant_deep_run`, tests/conftest_spark.py), its
     ``report/index.html`` fetched from the embedded S3 server.
Out: ``artifacts/screenshots/report.png``; the verdict and the failed invariant are at the top,
     the checkpoint timeline (with the checkpoints the failed rule's examples name marked) and
     the other plots are images that decoded, each invariant's row has the anchor the runs view
     links, and the page asked for nothing over the network. Pure tests of what the report and
     the swarm report say (where violations are, which findings are printed, the swarm's badge).

Needs Chromium at /usr/bin/chromium (``apt-get install -y chromium``; scripts/setup.sh --browser)
and playwright's Python package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from regionchaos.storage import ObjectStore
from tests.offline_page import open_offline

pytestmark = [pytest.mark.browser, pytest.mark.spark]

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "artifacts" / "screenshots" / "report.png"


@pytest.fixture(scope="module")
def report_file(s3_server, mutant_deep_run) -> Path:
    run_id, summary = mutant_deep_run
    assert summary["verdict"] == "invalid" and "report_error" not in summary
    page = ObjectStore.for_run(s3_server.config, run_id).get("report/index.html")
    target = ROOT / "artifacts" / "report" / "index.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(page)
    return target, summary


def test_report_renders_with_verdict_and_timeline(report_file):
    from regionchaos.report import violation_checkpoints

    report_file, summary = report_file

    def read(page):
        return (page.inner_text("#verdict"), page.inner_text("#failed"), page.inner_text("#timeline-title"),
                page.eval_on_selector_all(
                    "img", "els => els.map(e => [e.id, e.complete && e.naturalWidth > 0, e.getBoundingClientRect().top])"),
                page.eval_on_selector("#verdict", "e => e.getBoundingClientRect().top"),
                page.eval_on_selector_all("#timeline-violations", "els => els.map(e => e.dataset.checkpoints)"),
                page.eval_on_selector_all("#checks tr[id^=inv-]", "els => els.map(e => e.id)"))

    (verdict, failed, title, images, verdict_top, marked, anchors), requested = open_offline(report_file, SCREENSHOT, read)
    located = violation_checkpoints(summary["checks"])
    assert located, "the failed rule's examples name no checkpoint"
    assert marked == [" ".join(str(c) for c in located)]  # the timeline marks where the violations happened
    assert {f"inv-{c['name']}" for c in summary["checks"]} == set(anchors)  # the runs view links these
    assert verdict == "INVALID"
    assert "decisions_follow_rules" in failed
    assert title == "Checkpoint timeline"
    shown = {image_id: (loaded, top) for image_id, loaded, top in images}
    assert shown["timeline"][0], "the timeline image did not decode"
    assert all(loaded for loaded, _ in shown.values()), shown
    assert {"timeline", "depth", "records", "retained", "requests"} <= set(shown)
    assert verdict_top < shown["timeline"][1]  # the verdict first
    assert all(url.startswith(("file:", "data:")) for url in requested), requested
    assert SCREENSHOT.stat().st_size > 10_000


# -- pure: what the report and the swarm report say (no run needed) ---------------------------------

def _failed_check(name: str, rule: str, checkpoint_ids: list[int]) -> dict:
    return {"name": name, "invariant": 3, "success": False, "unexpected_count": len(checkpoint_ids),
            "failed_rules": [rule], "examples": [{"rule": rule, "checkpoint_id": c, "region": 0} for c in checkpoint_ids]}


def test_violations_are_located_at_the_checkpoints_their_examples_name():
    from regionchaos.report import violation_checkpoints

    checks = [_failed_check("flip_bounds", "chain_bounded", [7, 3]), _failed_check("liveness", "progress", [7]),
              {"name": "exactly_once_output", "success": True, "examples": [{"checkpoint_id": 1}]},
              {"name": "notifications", "success": None, "examples": [{"checkpoint_id": 2}]}]
    assert violation_checkpoints(checks) == {3: ["flip_bounds.chain_bounded"],
                                             7: ["flip_bounds.chain_bounded", "liveness.progress"]}


def test_a_finding_is_printed_only_where_it_showed_and_each_invariant_has_an_anchor():
    from regionchaos.report import build_report

    finding = {"id": "F1", "title": "the ref chain outgrows the bound", "invariants": ["flip_bounds"],
               "rules": ["flip_bounds.chain_bounded"]}
    holds = {"run_id": "r", "verdict": "valid", "findings": [finding],
             "checks": [{"name": "flip_bounds", "success": True, "invariant": 3}]}
    page = build_report(holds, None)
    assert "Finding" not in page and "F1" not in page  # it applies to these settings, but did not show
    assert "<tr id='inv-flip_bounds'>" in page
    showed = {**holds, "verdict": "invalid", "checks": [_failed_check("flip_bounds", "chain_bounded", [4])]}
    page = build_report(showed, None)
    assert "Finding <b>F1</b> showed in this run" in page and "flip_bounds.chain_bounded" in page


def _swarm_result(valid: int, invalid: int, unknown: int, known: int = 0) -> dict:
    runs = ([{"seed": i, "verdict": "valid", "failed": [], "replay": f"regionchaos run --scenario smoke --seed {i}"}
             for i in range(valid)]
            + [{"seed": 100 + i, "verdict": "invalid", "failed": ["flip_bounds"],
                "replay": f"regionchaos run --scenario smoke --seed {100 + i}"} for i in range(invalid)]
            + [{"seed": 200 + i, "verdict": "unknown", "failed": [], "error": "boom",
                "replay": f"regionchaos run --scenario smoke --seed {200 + i}"} for i in range(unknown)])
    return {"swarm_id": "swarm-x", "scenario": "smoke", "mutant": None, "first_seed": 0, "seeds": len(runs),
            "partitions": 2, "rows": 10, "judged": len(runs), "wall_seconds": 3.0, "walls": {},
            "verdicts": {"valid": valid, "invalid": invalid, "unknown": unknown}, "unknown": unknown,
            "failing": [r for r in runs if r["verdict"] == "invalid"][known:],
            "known_findings": [{"seed": r["seed"]} for r in runs if r["verdict"] == "invalid"][:known], "runs": runs}


@pytest.mark.parametrize("counts, colour", [((5, 2, 0, 0), "invalid"), ((5, 2, 0, 2), "invalid"),
                                            ((5, 0, 1, 0), "unknown"), ((5, 0, 0, 0), "valid")])
def test_the_swarm_badge_is_red_whenever_a_seed_is_invalid(counts, colour):
    import re

    from regionchaos.report import VERDICT_COLOURS
    from regionchaos.swarm_report import build_swarm_report

    page = build_swarm_report(_swarm_result(*counts))
    badge = re.search(r'<span class="verdict" id="verdict" style="background:([^"]+)">\s*([^<]+)</span>', page)
    assert badge[1] == VERDICT_COLOURS[colour], badge[2]
    assert f"{counts[1]} invalid" in badge[2]
    assert ('id="verdict-note"' in page) == (counts[1] > 0 and counts[1] == counts[3])
