"""Open a saved HTML page (a run report, a study, a swarm report) in headless Chromium.

`open_offline(path, screenshot, evaluate)` loads ``path`` from disk, saves a full-page
screenshot, and returns (``evaluate(page)``, every URL the page requested); with ``network=False``
every http(s) request is refused, as with the network off. Skips the test when
Chromium (/usr/bin/chromium) or playwright is missing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest

CHROMIUM = "/usr/bin/chromium"


def open_offline(path: Path, screenshot: Path, evaluate: Callable[[Any], Any], *,
                 network: bool = True) -> tuple[Any, list[str]]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    requested: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            if not network:
                page.route(re.compile(r"^https?://"), lambda route: route.abort())
            page.on("request", lambda r: requested.append(r.url))
            page.goto(Path(path).as_uri())
            page.wait_for_load_state("load")
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
            seen = evaluate(page)
        finally:
            browser.close()
    return seen, requested


# Run by `$.fn.ready` after the jQuery ready callbacks queued before it (jQuery 3 runs them in order).
_AFTER_READY = "() => new Promise(done => jQuery(() => setTimeout(() => done(true), 0)))"


def wait_for_ready_handlers(frame) -> None:
    """Wait until a GX Data Docs page (in ``frame``, a page or frame locator) has run its
    ``$(document).ready`` callbacks: its table rows exist as soon as bootstrap-table's inline
    script ran, but their click handler (``click-row.bs.table``) is bound in a ready callback,
    so a click before then is lost."""
    frame.locator("body").evaluate(_AFTER_READY)
