"""The Airflow UI in headless Chromium against a real Airflow started here.

In:  api-server, scheduler and dag-processor started from scripts/airflow-env.sh in a
     scratch AIRFLOW_HOME on SQLite, bound to 127.0.0.1, SimpleAuthManager with a known
     admin password (tests/airflow_server.py); runs stored in the session's embedded S3
     (fixture `s3_server`, under a prefix of this module), which the tasks and the plugin
     both reach over HTTP.
Out: pass/fail, and a screenshot per step under artifacts/screenshots/ (kept as the
     test's artifacts): login, trigger form with seed and scenario changed, run succeeded,
     the plugin's view with the run and its verdict, the run's report, refused triggers (a
     malformed rescale plan; one the whole-form check refuses) with the error in the form,
     and the runs view with several nightly runs: its trend chart and its verdict filter.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
import urllib.parse
import uuid
from pathlib import Path

import pytest

from tests.airflow_server import start_airflow, wait_for

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "plugins") not in sys.path:
    sys.path.insert(0, str(ROOT / "plugins"))

from regionchaos_airflow.runs import run_key  # noqa: E402
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("REGIONCHAOS_CHROMIUM", "/usr/bin/chromium")
DAG_ID = "regionchaos_manual"
SCENARIO, SEED = "rescale-4-2-1", 7  # changed in the form from smoke / empty
RUN_TIMEOUT_S = 600  # emulate + validate + report of a small scenario, with margin
PREFIX = f"browser-{uuid.uuid4().hex[:8]}"  # this module's runs in the session's S3


@pytest.fixture(scope="module")
def airflow(tmp_path_factory, s3_server):
    """A real Airflow on 127.0.0.1 (api-server, scheduler, dag-processor), the manual DAG unpaused."""
    env = {
        "REGIONCHAOS_S3_ENDPOINT": s3_server.config.endpoint_url,
        "REGIONCHAOS_BUCKET": s3_server.config.bucket,
        "REGIONCHAOS_PREFIX": PREFIX,
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
    }
    with start_airflow(tmp_path_factory.mktemp("airflow-browser"), (DAG_ID,), unpause=(DAG_ID,),
                       env=env) as af:
        yield af


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set REGIONCHAOS_CHROMIUM)")
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(browser, airflow):
    """A page logged in through Airflow's login form."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(30_000)
    page.goto(airflow.base + "/")
    page.locator("input[name=username]").fill(airflow.user)
    page.locator("input[name=password]").fill(airflow.password)
    page.screenshot(path=SHOTS / "01-login.png")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Browse").wait_for()
    page.screenshot(path=SHOTS / "02-logged-in.png")
    yield page
    page.close()


def wait_for_frame(page, url_suffix: str, timeout_s: float = 30):
    """The iframe whose URL ends with `url_suffix`, once it has navigated there."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        frame = next((f for f in page.frames if f is not page.main_frame and f.url.endswith(url_suffix)), None)
        if frame is not None:
            return frame
        page.wait_for_timeout(250)
    pytest.fail(f"no frame navigated to *{url_suffix}: {[f.url for f in page.frames]}")


def is_trigger_post(response) -> bool:
    return response.url.endswith(f"/dags/{DAG_ID}/dagRuns") and response.request.method == "POST"


def open_trigger_form(page, airflow):
    page.goto(f"{airflow.base}/dags/{DAG_ID}")
    page.get_by_test_id("trigger-dag-button").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text(f"Trigger Dag - {DAG_ID}").wait_for()
    return dialog


def test_trigger_from_the_form_and_find_the_run_with_its_verdict_in_the_plugin_view(page, airflow):
    dialog = open_trigger_form(page, airflow)
    dialog.get_by_role("button", name="Scenario").click()
    assert dialog.locator("input[name=element_scenario]").input_value() == "smoke"  # the default
    dialog.locator("input[name=element_scenario]").fill(SCENARIO)  # text, the catalogue as suggestions
    seed_id = dialog.locator('[id="number-input:element_seed:inc"]').get_attribute("aria-controls")
    seed = dialog.locator(f'[id="{seed_id}"]')
    seed.fill(str(SEED))
    seed.press("Tab")
    assert dialog.locator("input[name=element_scenario]").input_value() == SCENARIO
    page.screenshot(path=SHOTS / "03-trigger-form.png")

    with page.expect_response(is_trigger_post) as posted:
        dialog.get_by_test_id("trigger-dag-submit").click()
    assert posted.value.status == 200, posted.value.text()
    created = posted.value.json()
    assert (created["conf"]["scenario"], created["conf"]["seed"]) == (SCENARIO, SEED)
    run_id = created["dag_run_id"]
    page.screenshot(path=SHOTS / "04-triggered.png")

    quoted = urllib.parse.quote(run_id, safe="")
    state = wait_for(
        "the DAG run to finish",
        lambda: (lambda s: s if s in ("success", "failed") else None)(
            airflow.call("GET", f"/api/v2/dags/{DAG_ID}/dagRuns/{quoted}")[1]["state"]),
        RUN_TIMEOUT_S, airflow, every_s=2,
    )
    page.goto(f"{airflow.base}/dags/{DAG_ID}/runs/{quoted}")
    page.get_by_text("publish_report").first.wait_for()
    page.get_by_text(state.capitalize(), exact=True).first.wait_for()
    page.screenshot(path=SHOTS / "05-run-finished.png")
    assert state == "success", airflow.logs()

    page.get_by_role("button", name="Browse").click()
    page.get_by_role("menuitem", name="Chaos runs").click()
    frame = page.frame_locator("iframe")
    row = frame.locator(f'tr[data-run-id="{run_key(SCENARIO, f"s{SEED}", run_id)}"]')  # the manual DAG's id
    row.wait_for()
    page.screenshot(path=SHOTS / "06-plugin-view.png")
    cells = row.locator("td").all_inner_texts()
    # run id, started, duration, then scenario, seed, mutant, verdict
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", cells[1]) and re.search(r"\d+ s$", cells[2]), cells
    assert cells[3:7] == [SCENARIO, str(SEED), "none", "valid"], cells

    plugin_run_id = run_key(SCENARIO, f"s{SEED}", run_id)
    status, docs = airflow.call("GET", f"/regionchaos/runs/{plugin_run_id}/datadocs/index.html")
    assert status == 200 and "<html" in docs.lower(), (status, str(docs)[:300])  # the Data Docs link works

    row.get_by_role("link", name="report").click()
    report = wait_for_frame(page, "/report/index.html")
    report.wait_for_load_state()
    page.screenshot(path=SHOTS / "07-report.png")
    assert SCENARIO in report.locator("body").inner_text()


@pytest.mark.parametrize(
    "plan, error, shot",
    [("3-2", "Rescale plan (rescale): '3-2' is not a plan like '3:2,7:1' or 'none'", "08-malformed-plan-refused"),
     ("99:1", "Rescale plan (rescale): '99:1' rescales after checkpoint 99, but scenario smoke has 12 "
              "checkpoints (indices 0 to 11)", "09-plan-beyond-the-scenario-refused")],
)
def test_an_invalid_value_in_the_form_is_refused_and_starts_no_run(page, airflow, plan, error, shot):
    before = [r["dag_run_id"] for r in airflow.runs(DAG_ID)]
    dialog = open_trigger_form(page, airflow)
    dialog.get_by_role("button", name="Rescale").click()
    field = dialog.locator("#element_rescale")
    field.fill(plan)
    field.press("Tab")
    with page.expect_response(is_trigger_post) as posted:
        dialog.get_by_test_id("trigger-dag-submit").click()
    assert posted.value.status == 400
    assert posted.value.json()["detail"] == error
    message = dialog.get_by_test_id("error-alert")
    message.get_by_text(error).wait_for()  # the form shows the detail, naming the field
    page.screenshot(path=SHOTS / f"{shot}.png")
    assert dialog.is_visible()  # still in the form, to correct the field
    assert [r["dag_run_id"] for r in airflow.runs(DAG_ID)] == before


def test_the_plugin_refuses_unauthenticated_requests_on_the_real_server(airflow):
    for path in ("/regionchaos/", "/regionchaos/api/runs"):
        assert airflow.call("GET", path, auth=False)[0] == 401
        assert airflow.call("GET", path, auth=False, cookie="_token=forged.jwt.value")[0] in (401, 403)
    status, body = airflow.call("GET", "/regionchaos/api/runs")
    assert status == 200 and isinstance(body["runs"], list)
    assert airflow.call("GET", "/regionchaos/runs/x/..%2F..%2Fsecret", auth=True)[0] == 404


def test_the_runs_view_shows_the_nightly_trend_and_filters_by_verdict(page, airflow, s3_server):
    """Four nightly DAG runs' summaries (two scenarios each, the third run failing flip_bounds)
    in the view's storage, a second apart; the view draws their trend and filters by verdict."""
    import json

    client = s3_server.config.client()
    for day, failed in ((19, ()), (20, ()), (21, ("flip_bounds",)), (22, ())):
        for scenario in ("smoke", "storage-faults"):
            bad = failed and scenario == "smoke"
            run_id = run_key("nightly", f"scheduled__2026-11-{day}T00:00:00+00:00", scenario)
            checks = [{"name": name, "success": not (bad and name in failed)}
                      for name in ("flip_bounds", "storage_safety", "exactly_once_output")]
            doc = {"run_id": run_id, "scenario": scenario, "seed": 1, "mutant": None,
                   "verdict": "invalid" if bad else "valid", "checks": checks,
                   "stats": {"history_counts": {"triggered": 12, "global": 6, "regional": 5 - day % 3}}}
            client.put_object(Bucket=s3_server.config.bucket, Key=f"{PREFIX}/{run_id}/summary.json",
                              Body=json.dumps(doc).encode())
        time.sleep(1.1)  # S3 LastModified has one-second resolution
    client.close()
    page.goto(airflow.base + "/")
    page.get_by_role("button", name="Browse").click()
    page.get_by_role("menuitem", name="Chaos runs").click()
    frame = page.frame_locator("iframe")
    frame.locator("#trend").wait_for()
    loaded = frame.locator("#trend").evaluate("e => e.complete && e.naturalWidth > 0")
    page.screenshot(path=SHOTS / "10-runs-view-trend.png", full_page=True)
    assert loaded
    assert "4 nightly DAG runs" in frame.locator("body").inner_text()
    frame.locator("#filter-verdict").select_option("invalid")
    frame.get_by_role("button", name="Filter").click()
    frame.locator('#filter-verdict option[value="invalid"][selected]').wait_for(state="attached")  # the reloaded view
    verdicts = frame.locator("#runs tbody .verdict").all_inner_texts()
    page.screenshot(path=SHOTS / "11-runs-view-invalid-only.png", full_page=True)
    assert verdicts and set(verdicts) == {"invalid"}, verdicts
    bad = frame.locator('tr[data-run-id="nightly-scheduled-2026-11-21T00-00-00-00-00-smoke"] td[data-invariant="flip_bounds"]')
    assert bad.inner_text() == "\u2717" and "fail" in bad.get_attribute("class")
