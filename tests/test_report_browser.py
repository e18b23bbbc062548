"""The run report renders offline in headless Chromium.

In:  one run through `regionchaos.runner.run` (smoke, seed 1, mutant ignore-failure-ratio: a
     failed invariant to show), its ``report/index.html`` fetched from the embedded S3 server.
Out: ``artifacts/screenshots/report.png``; the verdict and the failed invariant are at the top,
     the checkpoint timeline and the other plots are images that decoded, and the page asked
     for nothing over the network.

Needs Chromium at /usr/bin/chromium (``apt-get install -y chromium``; scripts/setup.sh --browser)
and playwright's Python package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from regionchaos import runner
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests.offline_page import open_offline

pytestmark = [pytest.mark.browser, pytest.mark.spark]

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "artifacts" / "screenshots" / "report.png"


@pytest.fixture(scope="module")
def report_file(s3_server, spark) -> Path:
    run_id = "browser-smoke-s1-ignore-failure-ratio"
    summary = runner.run(load("smoke", seed=1), mutant="ignore-failure-ratio", storage=s3_server.config,
                         run_id=run_id, spark=spark)
    assert summary["verdict"] == "invalid" and "report_error" not in summary
    page = ObjectStore.for_run(s3_server.config, run_id).get("report/index.html")
    target = ROOT / "artifacts" / "report" / "index.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(page)
    return target


def test_report_renders_with_verdict_and_timeline(report_file):
    def read(page):
        return (page.inner_text("#verdict"), page.inner_text("#failed"), page.inner_text("#timeline-title"),
                page.eval_on_selector_all(
                    "img", "els => els.map(e => [e.id, e.complete && e.naturalWidth > 0, e.getBoundingClientRect().top])"),
                page.eval_on_selector("#verdict", "e => e.getBoundingClientRect().top"))

    (verdict, failed, title, images, verdict_top), requested = open_offline(report_file, SCREENSHOT, read)
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
