"""Data Docs render anywhere: rewritten as they are written to ask no other host, and served by the
plugin as stored, their scripts sandboxed off Airflow's origin.

In:  tests/data/datadocs-tiny/: the Data Docs GX 1.24 builds for one failing validation (a pandas
     batch ``checkpoints`` of 8 checkpoints, suite ``flip_bounds`` expecting ref_depth within
     [0, 3]; depths 4, 5 and 7 are unexpected; run name ``tiny-run``), committed as GX wrote them
     (CDN addresses and all) so that no test pays for GX and Spark to build them; the installed GX
     package's templates; `regionchaos.datadocs.make_offline`; the plugin's app
     (plugins/regionchaos_airflow/app.py, datadocs.py) on the session's embedded S3.
Out: pass/fail, and ``artifacts/screenshots/datadocs-offline.png``, ``datadocs-index.png`` and
     ``datadocs-validation.png`` from headless Chromium: the site rewritten by `make_offline` opened by
     file:// with every other request refused (its validation table filled by its scripts); the
     index's validation table filled by its scripts and the failing validation page with its
     unexpected values, inside a frame as Airflow's UI frames the plugin, with every request the
     page made going to 127.0.0.1; and the page GX's own renderer and view make of a failed
     ``ExpectRuleHolds`` result (no Spark): the run id as GX's run name, the data asset ``run``, the
     rule's violating rows (checkpoint, region, ..., detail) under a count.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import tests.airflow_env  # noqa: F401  (sets up Airflow before it is imported)

from fastapi.testclient import TestClient  # noqa: E402

from regionchaos_airflow import app as plugin  # noqa: E402

from regionchaos import datadocs as offline  # noqa: E402
from regionchaos_airflow import datadocs  # noqa: E402

from .plugin_setup import plugin_storage, simple_auth  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = Path(__file__).resolve().parent / "data" / "datadocs-tiny"
PREFIX = f"datadocs-test-{uuid.uuid4().hex[:8]}"
RUN_ID = "tiny-run"
VALIDATION = "validations/flip_bounds/tiny-run/20261125T011217.411894Z/regionchaos-checkpoints.html"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
_SUBRESOURCE = re.compile(r"<(?:script|img|link)\b[^>]*\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)


def external_subresources(page: str) -> list[str]:
    return [url for url in _SUBRESOURCE.findall(page) if re.match(r"(https?:)?//", url)]


# -- pure: the rewrite, the assets, the capability --------------------------------------------

def test_the_installed_gx_asks_cdns_only_for_assets_the_package_has():
    """Every script, stylesheet and image URL in GX's Data Docs templates is one the rewrite
    knows, and each maps to a vendored file (a GX upgrade that adds one fails here)."""
    import great_expectations

    templates = Path(great_expectations.__file__).resolve().parent / "render" / "view" / "templates"
    urls = {url for path in templates.rglob("*.j2") for url in external_subresources(path.read_text())}
    assert urls, "no CDN address found in GX's templates: the pattern is stale"
    logos = {url for url in urls if url.startswith("https://great-expectations-web-assets.")}
    assert urls - logos <= set(offline.CDN_ASSETS), sorted(urls - logos - set(offline.CDN_ASSETS))
    for url, local in offline.CDN_ASSETS.items():
        assert local is None or (offline.ASSETS_DIR / local).is_file(), (url, local)


@pytest.mark.parametrize("page, static", [("index.html", "static"), (VALIDATION, "../../../../static"),
                                          ("expectations/flip_bounds.html", "../static")])
def test_a_rewritten_page_asks_no_other_host_and_loads_its_own_copies(page, static):
    original = (TINY / page).read_text()
    assert external_subresources(original)  # GX's page does ask CDNs
    assert "Stay current on everything GX" in original  # and carries its newsletter footer
    rewritten, used = offline.rewrite_page(original, static)
    assert external_subresources(rewritten) == []
    assert "integrity=" not in rewritten and "crossorigin=" not in rewritten
    assert "Stay current on everything GX" not in rewritten and offline.SITE_STYLE in rewritten
    local = _SUBRESOURCE.findall(rewritten)
    assert f"{static}/vendor/jquery.min.js" in local and f"{static}/vendor/bootstrap-table.min.js" in local
    assert f"{static}/images/favicon.ico" in local  # GX's favicon path, one folder short on validation pages
    assert not any("vega" in url for url in local)  # no page of these draws a chart
    assert {url for url in local if "/vendor/" in url} == {f"{static}/vendor/{name}" for name in used}
    assert "bootstrap-prefers-dark" not in rewritten and "about:blank" not in rewritten.split("<body")[0]


def test_make_offline_copies_the_assets_the_site_loads(tmp_path):
    site = tmp_path / "datadocs"
    shutil.copytree(TINY, site)
    offline.make_offline(site)
    copied = {p.relative_to(site / "static" / "vendor").as_posix() for p in (site / "static" / "vendor").rglob("*")
              if p.is_file()}
    assert "jquery.min.js" in copied and "fontawesome/css/all.min.css" in copied
    assert "fontawesome/webfonts/fa-solid-900.woff2" in copied  # what the stylesheet loads
    assert not any(name.startswith("vega") for name in copied)
    for name in copied:
        assert (site / "static" / "vendor" / name).read_bytes() == (offline.ASSETS_DIR / name).read_bytes()
    assert all(external_subresources(p.read_text()) == [] for p in site.rglob("*.html"))


@pytest.mark.browser
def test_a_site_written_offline_renders_by_file_url_with_the_network_off(tmp_path):
    """The rewrite's point: the Data Docs folder opened from disk, every http(s) request refused."""
    from tests.offline_page import open_offline

    site = tmp_path / "datadocs"
    shutil.copytree(TINY, site)
    offline.make_offline(site)

    def read(page):
        page.locator("text=Unexpected Value").first.wait_for(timeout=30_000)
        return page.locator(".bootstrap-table").count(), page.locator("body").inner_text()  # drawn: its scripts ran

    (filled, text), requested = open_offline(site / VALIDATION, SCREENSHOTS / "datadocs-offline.png", read,
                                             network=False)
    assert filled > 0 and "Status: Failed" in re.sub(r"\s+", " ", text)
    assert all(url.startswith("file://") for url in requested), [u for u in requested if not u.startswith("file:")]


def test_a_capability_is_for_one_run_and_expires():
    token = datadocs.sign("run-a", now=1000.0, ttl_s=60)
    assert datadocs.check(token, "run-a", now=1059.0)
    assert not datadocs.check(token, "run-b", now=1059.0)
    assert not datadocs.check(token, "run-a", now=1061.0)
    expires, mac = token.split(".")
    assert not datadocs.check(f"{int(expires) + 3600}.{mac}", "run-a", now=1059.0)  # a longer life is not signed
    assert not datadocs.check("", "run-a") and not datadocs.check("x.y", "run-a")


# -- what GX's validation page says of our rules (GX's own renderer, no Spark) ----------------

FAILED_RUN = "smoke-s1-failed-region-commits-manual-2026-11-25T00-51-14-038626-00-00"
VIOLATIONS = [  # the notifications suite's rows of that run, as the suite's metric returns them
    {"run_id": FAILED_RUN, "checkpoint_id": 7, "region": 2, "subtask": 2, "operator": "sink", "split": 6,
     "detail": "region 2 failed checkpoint 7 (REGIONAL) but committed [106, 124) upon its notification"},
    {"run_id": FAILED_RUN, "checkpoint_id": 8, "region": 0, "subtask": 0, "operator": "sink", "split": 0,
     "detail": "region 0 failed checkpoint 8 (REGIONAL) but committed [100, 110) <upon> its notification"},
]


def _page_text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def validation_page(by_run: dict[str, dict]) -> str:
    """GX 1.24's Data Docs page (its site builder's renderer and view) of one failed ``ExpectRuleHolds``
    whose result ``_validate`` made from the suite metric's value ``by_run``, with the meta GX's Spark
    dataframe asset writes (no ``data_asset_name`` in ``batch_spec``) as `regionchaos.judge.engine.name_data_assets`
    leaves it, the run name `regionchaos.judge.engine.gx_run_name` gives."""
    from types import SimpleNamespace

    from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.render.renderer import ValidationResultsPageRenderer
    from great_expectations.render.view import DefaultJinjaPageView

    from regionchaos.judge import engine as E
    from regionchaos.judge import suites as S

    rule = S.load_custom().ExpectRuleHolds(
        suite="notifications", rule="failed_region_did_not_commit", unexpected_rows_query="SELECT * FROM {batch}",
        description="A region that failed checkpoint N commits nothing upon N's notification.")
    result = rule._validate({"regionchaos.suite_violations": {"failed_region_did_not_commit": by_run}})
    evr = ExpectationValidationResult(success=result["success"], expectation_config=rule.configuration,
                                      result=result["result"])
    vr = ExpectationSuiteValidationResult(
        success=False, results=[evr], suite_name="notifications",
        statistics={"evaluated_expectations": 1, "successful_expectations": 0, "unsuccessful_expectations": 1,
                    "success_percent": 0.0},
        meta={"run_id": RunIdentifier(run_name=E.gx_run_name(sorted(by_run))), "great_expectations_version": "1.24.1",
              "batch_spec": {"batch_data": "SparkDataFrame"},
              "active_batch_definition": {"datasource_name": "regionchaos", "data_connector_name": "fluent",
                                          "data_asset_name": "run", "batch_identifiers": {"dataframe": "<DATAFRAME>"}}})
    E.name_data_assets(SimpleNamespace(run_results={"notifications": vr}))
    return DefaultJinjaPageView().render(ValidationResultsPageRenderer().render(vr))


def test_a_failed_rule_s_page_names_run_and_asset_and_shows_its_rows():
    page = validation_page({FAILED_RUN: {"count": 4, "examples": VIOLATIONS, "explained": {}}})
    text = _page_text(page)
    assert f"Run Name {FAILED_RUN}" in text
    assert "Data asset: run" in text and "Data asset: None" not in text
    assert "4 violating rows; the first 2:" in text
    rows = text.split("the first 2:", 1)[1]
    assert "checkpoint_id region subtask operator split detail" in rows  # one run: its id is the run name
    assert "7 2 2 sink 6 region 2 failed checkpoint 7 (REGIONAL) but committed [106, 124)" in rows
    assert "8 0 0 sink 0 region 0 failed checkpoint 8" in rows
    assert "&lt;upon&gt;" in page and "<upon>" not in page  # a detail is text, never markup


def test_a_pass_over_several_runs_counts_per_run_and_names_each_row_s_run():
    other = "smoke-s2-failed-region-commits"
    page = validation_page({FAILED_RUN: {"count": 1, "examples": VIOLATIONS[:1], "explained": {}},
                            other: {"count": 1, "examples": [dict(VIOLATIONS[1], run_id=other)], "explained": {}},
                            "smoke-s3": {"count": 0, "examples": [], "explained": {}}})
    text = _page_text(page)
    assert "Run Name 3 runs" in text
    assert f"2 violating rows ({FAILED_RUN}: 1, {other}: 1):" in text
    assert "run_id checkpoint_id region" in text and f"{other} 8 0 0 sink" in text


# -- through the plugin -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def stored_docs(s3_server, tmp_path_factory):
    """The tiny Data Docs as a run stores them: rewritten by `make_offline` (as `validate` writes them)."""
    site = tmp_path_factory.mktemp("stored-docs") / "datadocs"
    shutil.copytree(TINY, site)
    offline.make_offline(site)
    config = s3_server.config.model_copy(update={"prefix": PREFIX})
    client = config.client()
    for path in (p for p in site.rglob("*") if p.is_file()):
        client.put_object(Bucket=config.bucket, Key=f"{PREFIX}/{RUN_ID}/datadocs/{path.relative_to(site).as_posix()}",
                          Body=path.read_bytes())
    client.put_object(Bucket=config.bucket, Key=f"{PREFIX}/{RUN_ID}/checkpoints/chk-1/_metadata", Body=b"{}")
    client.close()
    return config


@pytest.fixture
def configured(stored_docs, monkeypatch):
    with plugin_storage(monkeypatch, stored_docs, PREFIX) as config:
        yield config


@pytest.fixture(scope="module")
def metadata_db():
    from airflow.utils.db import initdb

    initdb()


@pytest.fixture
def auth(metadata_db, monkeypatch, tmp_path):
    """Airflow auth on (SimpleAuthManager, a viewer); returns a JWT for the viewer."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    with simple_auth(monkeypatch, tmp_path, "viewer:viewer") as manager:
        yield manager.generate_jwt(SimpleAuthManagerUser(username="viewer", role="viewer"))


def csp(response) -> dict[str, list[str]]:
    policy = {}
    for part in response.headers["content-security-policy"].split(";"):
        if part.strip():
            name, *sources = part.split()
            policy[name] = sources
    return policy


def test_data_docs_open_through_a_capability_with_scripts_sandboxed(configured, auth):
    with TestClient(plugin.app) as client:
        assert client.get(f"/runs/{RUN_ID}/datadocs", follow_redirects=False).status_code == 401  # login first
        own = client.get(f"/runs/{RUN_ID}/datadocs", headers={"Authorization": f"Bearer {auth}"})
        assert own.status_code == 200  # the Data Docs' own page: the run's facts above the docs, framed
        assert f'value="http://testserver/plugin/chaos/regionchaos/runs/{RUN_ID}/datadocs"' in own.text  # to share
        target = re.search(r'<iframe id="docs"[^>]* src="([^"]+)"', own.text)[1]
        assert re.fullmatch(rf"/public/dd/\d+\.[A-Za-z0-9_-]+/{RUN_ID}/datadocs/index\.html", target), target
        page = client.get(target)  # no login: the token is the capability
        assert page.status_code == 200 and "Validation Results" in page.text
        stored = client.get(target.replace("index.html", "static/vendor/jquery.min.js"))  # the site's own copy
        assert stored.status_code == 200 and stored.content == (offline.ASSETS_DIR / "jquery.min.js").read_bytes()
        moved = client.get(f"/runs/{RUN_ID}/datadocs/index.html", headers={"Authorization": f"Bearer {auth}"},
                           follow_redirects=False)  # what the stored report links: the capability address
        assert moved.status_code == 303
        assert re.fullmatch(rf"/public/dd/\d+\.[A-Za-z0-9_-]+/{RUN_ID}/datadocs/index\.html", moved.headers["location"])
        policy = csp(page)
        assert policy["sandbox"] == ["allow-scripts"]  # scripts, but never with allow-same-origin
        assert policy["default-src"] == ["'none'"] and policy["connect-src"] == ["'none'"]
        assert policy["script-src"] == ["'self'", "'unsafe-inline'"] and policy["frame-ancestors"] == ["'self'"]
        assert external_subresources(page.text) == []
        token = target.split("/")[3]
        for refused in [target.replace(token, token[:-2] + "AA"), target.replace(RUN_ID, "other-run"),
                        f"/public/dd/{token}/{RUN_ID}/checkpoints/chk-1/_metadata",
                        f"/public/dd/{token}/{RUN_ID}/datadocs/../checkpoints/chk-1/_metadata"]:
            assert client.get(refused).status_code == 404, refused
        suite = client.get(f"/runs/{RUN_ID}/datadocs?suite=flip_bounds", headers={"Authorization": f"Bearer {auth}"})
        framed = re.search(r'<iframe id="docs"[^>]* src="([^"]+)"', suite.text)[1]
        assert suite.status_code == 200 and framed.endswith(f"/{RUN_ID}/datadocs/{VALIDATION}")


@pytest.fixture
def served_plugin(configured, auth):
    """The plugin's app mounted at /regionchaos as the api-server mounts it, on 127.0.0.1."""
    uvicorn = pytest.importorskip("uvicorn")
    from starlette.applications import Starlette
    from starlette.routing import Mount

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Mount("/regionchaos", app=plugin.app)]),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}", auth
    server.should_exit = True
    thread.join(timeout=10)


@pytest.mark.browser
def test_data_docs_render_inside_a_frame_with_no_request_leaving_loopback(served_plugin):
    from tests.offline_page import CHROMIUM, wait_for_ready_handlers

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    origin, token = served_plugin
    # Airflow's UI frames a plugin's view like this (its sandbox attribute as in Airflow 3.3's UI)
    shell = ("<!doctype html><title>Airflow</title><iframe id='view' style='width:1250px;height:1400px;border:0' "
             "sandbox='allow-scripts allow-same-origin allow-forms allow-downloads' "
             f"src='/regionchaos/runs/{RUN_ID}/datadocs'></iframe>")
    requested: list[str] = []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 1450})
            context.add_cookies([{"name": "_token", "value": token, "url": origin, "sameSite": "Lax"}])
            page = context.new_page()
            page.on("request", lambda r: requested.append(r.url))
            page.route(f"{origin}/airflow-shell", lambda route: route.fulfill(body=shell, content_type="text/html"))
            page.goto(f"{origin}/airflow-shell")
            frame = page.frame_locator("#view").frame_locator("#docs")  # the plugin's page, the docs in it
            first_row = frame.locator("table.ge-index-page-validation-results-table tbody tr").first
            first_row.wait_for(timeout=60_000)  # filled by bootstrap-table: the page's scripts ran
            index_text = frame.locator("body").inner_text()
            title_colour = frame.locator("table.ge-index-page-validation-results-table thead th").first.evaluate(
                "e => getComputedStyle(e).fontWeight")  # bootstrap's table styles applied
            origin_seen = frame.locator("body").evaluate("() => self.origin")
            page.screenshot(path=str(SCREENSHOTS / "datadocs-index.png"), full_page=True)
            wait_for_ready_handlers(frame)  # the rows' click handler is bound when the document is ready
            first_row.click()  # a clickable row: its script goes to the validation page
            frame.locator("text=Unexpected Value").first.wait_for(timeout=60_000)
            validation_text = frame.locator("body").inner_text()
            page.screenshot(path=str(SCREENSHOTS / "datadocs-validation.png"), full_page=True)
        finally:
            browser.close()
    assert "flip_bounds" in index_text and "tiny-run" in index_text
    assert title_colour in ("700", "bold")
    assert origin_seen == "null"  # an opaque origin: the docs' scripts cannot act as Airflow's
    assert "Failed" in validation_text or "failed" in validation_text
    for value in ("4", "5", "7"):
        assert re.search(rf"(^|\s){value}(\s|$)", validation_text.split("Unexpected Value", 1)[1]), value
    hosts = {urlsplit(url).hostname for url in requested if not url.startswith(("data:", "about:"))}
    assert hosts == {"127.0.0.1"}, sorted(set(requested))
    assert any(re.search(r"/public/dd/[^/]+/tiny-run/datadocs/static/vendor/bootstrap-table\.min\.js$", url)
               for url in requested)  # the stored site's own copy
    assert (SCREENSHOTS / "datadocs-validation.png").stat().st_size > 10_000
