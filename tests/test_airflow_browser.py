"""The Airflow UI in headless Chromium against the local UI of scripts/ui.sh, started here.

In:  `scripts/ui.sh --port P --s3-port Q` itself (the README's one local-UI command), its
     writable state (AIRFLOW_HOME and the local S3's folder) in a scratch folder that starts
     empty, as on a fresh clone after scripts/setup.sh: a local S3 server, api-server,
     scheduler, dag-processor, triggerer and log server on 127.0.0.1, the admin password as
     ui.sh prints it; stopped with SIGTERM at the end, as Ctrl-C stops it.
Out: pass/fail, and a screenshot per step under artifacts/screenshots/ (kept as the
     test's artifacts): login, trigger form with scenario, seed and mutant changed, the run
     finished, the plugin's view with the run and its verdict, the run's report, refused
     triggers (a malformed rescale plan; one the whole-form check refuses) with the error in the
     form, the runs view with several nightly runs: its trend chart and its verdict filter; the
     same run (one DAG run in this module: a caught mutant, failed-region-commits): failed in
     red, its note, its task's "Chaos report" link and the report it opens, then its Data Docs
     from the runs view inside Airflow's page (index, the failing notifications page with its
     unexpected rows), with every request the page made going to 127.0.0.1; and ui.sh leaving
     no process behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.airflow_server import Airflow, free_port, wait_for
from tests.offline_page import wait_for_ready_handlers

pytestmark = [pytest.mark.browser, pytest.mark.airflow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "plugins") not in sys.path:
    sys.path.insert(0, str(ROOT / "plugins"))

from regionchaos_airflow.runs import run_key  # noqa: E402
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("REGIONCHAOS_CHROMIUM", "/usr/bin/chromium")
DAG_ID = "regionchaos_manual"
SCENARIO, SEED = "regional-basic", 7  # changed in the form from smoke / empty
MUTANT = "failed-region-commits"  # caught on SCENARIO's SEED (notifications among the failed suites): an invalid run
RUN_TIMEOUT_S = 600  # emulate + validate + report of a small scenario, with margin
# ~60 s on an idle machine; 420 s were not enough at a load of 20+ (ui.sh gives up on its own after
# 300 probes of the api-server)
UI_START_TIMEOUT_S = 900
# Stopping takes ~20 s on an idle machine; under a load of 20-36 on two cores, at nice 10, Airflow's
# processes took minutes to exit, most of it in Python's final garbage collection (seen with gdb)
UI_STOP_TIMEOUT_S = 300
UI_BUCKET, UI_PREFIX = "regionchaos", "runs"  # ui.sh's regionchaos_s3 connection
UI_CREDENTIALS = {"aws_access_key_id": "regionchaos", "aws_secret_access_key": "regionchaos-local"}
DROPPED_ENV = ("AIRFLOW", "REGIONCHAOS_", "AWS_ENDPOINT_URL")  # this process's own settings
_BANNER = re.compile(r"^Airflow UI: +(http://127\.0\.0\.1:\d+) +\(user admin, password: (\S+)\)$.*"
                     r"^local S3: +(http://127\.0\.0\.1:\d+),", re.M | re.S)


@dataclass
class LocalUI:
    proc: subprocess.Popen  # bash scripts/ui.sh, leader of its own session
    airflow: Airflow
    s3_endpoint: str
    output: Path


def session_members(sid: int) -> list[str]:
    """The processes of session `sid` ("pid command"): ui.sh's and every descendant's, task
    processes in their own process groups included (none of them starts a session)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(f"{stat.parent.name} {(stat.parent / 'cmdline').read_bytes()[:120]!r}")
        except (OSError, IndexError, ValueError):
            continue  # ended while read
    return found


def stop_ui(ui: LocalUI, timeout_s: float = UI_STOP_TIMEOUT_S) -> int | None:
    """SIGTERM to ui.sh (its trap stops what it started); its exit status, None if it did not end."""
    if ui.proc.poll() is None:
        ui.proc.send_signal(signal.SIGTERM)
    try:
        return ui.proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


@pytest.fixture(scope="module")
def local_ui(tmp_path_factory):
    """`scripts/ui.sh` on free ports, its AIRFLOW_HOME and S3 folder new and empty."""
    scratch = tmp_path_factory.mktemp("local-ui")
    home, runs = scratch / "airflow-home", scratch / "runs"  # neither exists: nothing from an earlier start
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED_ENV)}
    env.update({"REGIONCHAOS_AIRFLOW_HOME": str(home), "REGIONCHAOS_UI_RUNS_DIR": str(runs),
                "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),  # ui.sh's default may be taken
                "AIRFLOW__API__WORKERS": "1"})  # one api-server worker: this machine is small
    output = scratch / "ui.out"
    with open(output, "w") as out:
        proc = subprocess.Popen(["bash", "scripts/ui.sh", "--port", str(free_port()), "--s3-port", str(free_port())],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    af = Airflow(base="", password="", home=home, log_glob="ui/*.log")
    ui = LocalUI(proc, af, "", output)

    def banner():
        if proc.poll() is not None:
            pytest.fail(f"ui.sh ended ({proc.returncode}) before it was ready:\n{output.read_text()[-4000:]}")
        return _BANNER.search(output.read_text())

    try:
        found = wait_for("ui.sh to print the UI's address and password", banner, UI_START_TIMEOUT_S, every_s=2)
        af.base, af.password, ui.s3_endpoint = found.group(1), found.group(2), found.group(3)
        wait_for(f"{DAG_ID} to be parsed", lambda: af.call("GET", f"/api/v2/dags/{DAG_ID}")[0] == 200,
                 UI_START_TIMEOUT_S, af)
        yield ui
    finally:
        stop_ui(ui)
        for member in session_members(proc.pid):  # only if ui.sh left some: the last test says so
            try:
                os.kill(int(member.split()[0]), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="module")
def airflow(local_ui):
    return local_ui.airflow


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


def test_trigger_from_the_form_and_find_the_run_with_its_verdict_in_the_plugin_view(page, airflow, invalid_run):
    """On the local UI as scripts/ui.sh starts it from nothing (a fresh clone's state): the run
    triggered from the form (`invalid_run`), unpausing the DAG as the form does by default, is
    listed in the runs view with its verdict once it ends, its Data Docs and report linked."""
    page.goto(f"{airflow.base}/dags/{DAG_ID}/runs/{urllib.parse.quote(invalid_run.dag_run_id, safe='')}")
    page.get_by_text("publish_report").first.wait_for()
    page.get_by_text(invalid_run.state.capitalize(), exact=True).first.wait_for()
    page.screenshot(path=SHOTS / "05-run-finished.png")

    page.get_by_role("button", name="Browse").click()
    page.get_by_role("menuitem", name="Chaos runs").click()
    frame = page.frame_locator("iframe")
    row = frame.locator(f'tr[data-run-id="{invalid_run.key}"]')  # the manual DAG's id
    row.wait_for()
    page.screenshot(path=SHOTS / "06-plugin-view.png")
    cells = row.locator("td").all_inner_texts()
    # run id, started, duration, then scenario, seed, mutant, verdict
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", cells[1]) and re.search(r"\d+ s$", cells[2]), cells
    assert cells[3:7] == [SCENARIO, str(SEED), MUTANT, "invalid"], cells

    status, docs = airflow.call("GET", f"/regionchaos/runs/{invalid_run.key}/datadocs/index.html")
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


def test_the_runs_view_shows_the_nightly_trend_and_filters_by_verdict(page, airflow, local_ui):
    """Four nightly DAG runs' summaries (two scenarios each, the third run failing flip_bounds)
    in the view's storage (ui.sh's local S3), a second apart; the view draws their trend and
    filters by verdict."""
    import boto3

    client = boto3.client("s3", endpoint_url=local_ui.s3_endpoint, region_name="us-east-1", **UI_CREDENTIALS)
    for day, failed in ((19, ()), (20, ()), (21, ("flip_bounds",)), (22, ())):
        for scenario in ("smoke", "storage-faults"):
            bad = failed and scenario == "smoke"
            run_id = run_key("nightly", f"scheduled__2026-11-{day}T00:00:00+00:00", scenario)
            checks = [{"name": name, "success": not (bad and name in failed)}
                      for name in ("flip_bounds", "storage_safety", "exactly_once_output")]
            doc = {"run_id": run_id, "scenario": scenario, "seed": 1, "mutant": None,
                   "verdict": "invalid" if bad else "valid", "checks": checks,
                   "stats": {"history_counts": {"triggered": 12, "global": 6, "regional": 5 - day % 3}}}
            client.put_object(Bucket=UI_BUCKET, Key=f"{UI_PREFIX}/{run_id}/summary.json",
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


# -- a caught mutant's run: red, with its note, link, report and Data Docs inside Airflow --------

@dataclass
class InvalidRun:
    dag_run_id: str  # Airflow's
    key: str  # the plugin's run id (storage folder)
    state: str
    report_url: str


def wait_for_state(airflow, dag_run_id: str) -> str:
    quoted = urllib.parse.quote(dag_run_id, safe="")
    return wait_for(
        "the DAG run to finish",
        lambda: (lambda s: s if s in ("success", "failed") else None)(
            airflow.call("GET", f"/api/v2/dags/{DAG_ID}/dagRuns/{quoted}")[1]["state"]),
        RUN_TIMEOUT_S, airflow, every_s=2,
    )


@pytest.fixture(scope="module")
def invalid_run(page, airflow) -> InvalidRun:
    """The module's one DAG run (each costs a Spark driver and three task processes), triggered from
    the form as a person would: the scenario typed over the default smoke, the seed set, the mutant
    chosen; the mutant is caught on that seed, so the run is invalid."""
    dialog = open_trigger_form(page, airflow)
    dialog.get_by_role("button", name="Scenario").click()
    assert dialog.locator("input[name=element_scenario]").input_value() == "smoke"  # the default
    dialog.locator("input[name=element_scenario]").fill(SCENARIO)  # text, the catalogue as suggestions
    seed_id = dialog.locator('[id="number-input:element_seed:inc"]').get_attribute("aria-controls")
    seed = dialog.locator(f'[id="{seed_id}"]')
    seed.fill(str(SEED))
    seed.press("Tab")
    dialog.get_by_role("button", name="Mutant").click()
    choice = dialog.locator("#element_mutant input[role=combobox]")  # a select with typeahead
    choice.fill(MUTANT)
    choice.press("Enter")
    assert dialog.locator("input[name=element_scenario]").input_value() == SCENARIO
    page.screenshot(path=SHOTS / "03-trigger-form.png")
    with page.expect_response(is_trigger_post) as posted:
        dialog.get_by_test_id("trigger-dag-submit").click()
    assert posted.value.status == 200, posted.value.text()
    created = posted.value.json()
    assert (created["conf"]["scenario"], created["conf"]["seed"], created["conf"]["mutant"]) == (SCENARIO, SEED, MUTANT)
    page.screenshot(path=SHOTS / "04-triggered.png")
    run_id = created["dag_run_id"]
    key = run_key(SCENARIO, f"s{SEED}", MUTANT, run_id)
    return InvalidRun(run_id, key, wait_for_state(airflow, run_id), f"{airflow.base}/regionchaos/runs/{key}/report")


def stored_summary(airflow, key: str) -> dict:
    status, summary = airflow.call("GET", f"/regionchaos/runs/{key}/summary.json")
    assert status == 200 and isinstance(summary, dict), (status, str(summary)[:300])
    return summary


def test_an_invalid_manual_run_is_red_with_its_note_and_its_chaos_report_link(page, airflow, invalid_run):
    run_page = f"{airflow.base}/dags/{DAG_ID}/runs/{urllib.parse.quote(invalid_run.dag_run_id, safe='')}"
    page.goto(run_page)
    page.get_by_role("row").filter(has_text="publish_report").wait_for()
    badge = page.get_by_test_id("state-badge").first  # the run's, in the page's header
    state_text = badge.inner_text().strip()
    # the badge's colour as sRGB bytes: Airflow 3 writes colours as oklch(), a 1-pixel canvas converts
    badge_colour = badge.evaluate("""e => { const c = document.createElement('canvas').getContext('2d');
        c.fillStyle = getComputedStyle(e).backgroundColor; c.fillRect(0, 0, 1, 1);
        return Array.from(c.getImageData(0, 0, 1, 1).data.slice(0, 3)); }""")
    page.screenshot(path=SHOTS / "12-invalid-run-failed.png")
    assert invalid_run.state == "failed", airflow.logs()
    assert state_text == "Failed"
    red, green, blue = badge_colour
    assert red > 150 and green < 100 and blue < 100, badge_colour  # Airflow's red of failed

    failed = [c["name"] for c in stored_summary(airflow, invalid_run.key)["checks"] if not c["success"]]
    assert "notifications" in failed, failed  # the suite this mutant breaks
    page.get_by_role("button", name="Edit note").click()  # opens the note, rendered, before any edit
    note = page.get_by_role("dialog").filter(has_text="Dag Run Note")
    note.get_by_role("link", name="Chaos report").wait_for()
    note_text = note.inner_text()
    note_link = note.get_by_role("link", name="Chaos report").get_attribute("href")
    page.screenshot(path=SHOTS / "13-invalid-run-note.png")
    assert (f"invalid: the checks caught mutant {MUTANT}; failed invariants: {', '.join(failed)}"
            in note_text), note_text
    assert f"run {invalid_run.key}" in note_text, note_text
    assert note_link == invalid_run.report_url
    page.keyboard.press("Escape")

    page.goto(f"{run_page}/tasks/publish_report/details")  # the task instance's extra links
    link = page.get_by_role("link", name="Chaos report")
    link.wait_for()
    page.screenshot(path=SHOTS / "14-invalid-run-chaos-report-link.png")
    assert link.get_attribute("href") == invalid_run.report_url
    link.click()
    page.wait_for_url(invalid_run.report_url)
    report = wait_for_frame(page, f"/runs/{invalid_run.key}/report/index.html")
    report.get_by_text("failed invariants:").first.wait_for()
    page.screenshot(path=SHOTS / "15-invalid-run-report.png")
    heading = page.locator("h1").first.inner_text()
    assert invalid_run.key in heading and "invalid" in heading, heading
    assert f"mutant {MUTANT}" in report.locator("body").inner_text()


def test_the_invalid_run_s_data_docs_render_inside_airflow_asking_only_loopback(page, airflow, invalid_run):
    requested: list[str] = []
    record = lambda request: requested.append(request.url)  # noqa: E731 - every frame's, every page's
    page.context.on("request", record)
    try:
        page.goto(airflow.base + "/")
        page.get_by_role("button", name="Browse").click()
        page.get_by_role("menuitem", name="Chaos runs").click()
        view = page.frame_locator("iframe")
        view.locator(f'tr[data-run-id="{invalid_run.key}"]').get_by_role("link", name="Data Docs").click()
        docs = view  # the link opens in the view's frame, inside Airflow's page
        rows = docs.locator("table.ge-index-page-validation-results-table tbody tr")
        rows.first.wait_for()  # filled by bootstrap-table from the page's data: its scripts ran
        filters = docs.locator("table.ge-index-page-validation-results-table .filter-control select").count()
        header_weight = docs.locator("table.ge-index-page-validation-results-table thead th").first.evaluate(
            "e => getComputedStyle(e).fontWeight")  # bootstrap's table styles
        docs_origin = docs.locator("body").evaluate("() => self.origin")
        index_text = docs.locator("body").inner_text()
        in_airflow = page.get_by_role("button", name="Browse").is_visible()
        page.screenshot(path=SHOTS / "16-datadocs-index-in-airflow.png")
        assert in_airflow and docs_origin == "null"  # inside Airflow's page, off its origin (sandboxed)
        assert filters > 0 and header_weight in ("700", "bold"), (filters, header_weight)
        assert invalid_run.key in index_text and "notifications" in index_text

        wait_for_ready_handlers(docs)  # the rows' click handler is bound when the document is ready
        rows.filter(has_text="notifications").click()  # a row's script opens its validation page
        # the failed rule's own table of unexpected rows (nested in GX's results table: the innermost one)
        unexpected = docs.locator("table:not(:has(table))").filter(has=docs.locator("th", has_text="checkpoint_id"))
        unexpected.first.wait_for()
        page.screenshot(path=SHOTS / "17-datadocs-notifications-unexpected-rows.png")
        page_text = docs.locator("body").inner_text()
        details = unexpected.first.locator("tbody tr td:last-child").all_inner_texts()
    finally:
        page.context.remove_listener("request", record)
    check = next(c for c in stored_summary(airflow, invalid_run.key)["checks"] if c["name"] == "notifications")
    assert "Expectation Suite: notifications" in page_text and "Status: Failed" in re.sub(r"\s+", " ", page_text)
    assert f"{check['unexpected_count']} violating rows" in page_text, page_text[:3000]
    assert details and details == [e["detail"] for e in check["examples"]][:len(details)], details
    assert any("/regionchaos/public/dd/" in url for url in requested), requested  # the docs' own requests seen
    assert any(url.endswith("/public/assets/vendor/bootstrap-table.min.js") for url in requested)
    hosts = {urlsplit(url).hostname for url in requested if not url.startswith(("data:", "about:", "blob:"))}
    assert hosts == {"127.0.0.1"}, sorted(u for u in requested if urlsplit(u).hostname != "127.0.0.1")


def test_ui_sh_stops_everything_it_started_on_sigterm(local_ui):
    """Last in this module: stops the local UI the tests above used, as Ctrl-C (or a kill) does."""
    running = session_members(local_ui.proc.pid)
    assert len(running) >= 7, running  # ui.sh, S3, api-server, scheduler, dag-processor, triggerer, log server
    status = stop_ui(local_ui)
    assert status == 130, (status, local_ui.output.read_text()[-2000:])  # its trap: stopped by a signal
    deadline = time.monotonic() + UI_STOP_TIMEOUT_S  # grandchildren (executor workers, tasks) end after their parents
    while session_members(local_ui.proc.pid) and time.monotonic() < deadline:
        time.sleep(1)
    assert session_members(local_ui.proc.pid) == []
