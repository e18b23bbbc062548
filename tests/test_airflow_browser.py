"""The Airflow UI in headless Chromium against the local UI of scripts/ui.sh, started here.

In:  `scripts/ui.sh --port P --s3-port Q` itself (the README's one local-UI command), its
     writable state (AIRFLOW_HOME and the local S3's folder) in a scratch folder that starts
     empty, as on a fresh clone after scripts/setup.sh: a local S3 server, api-server,
     scheduler, dag-processor, triggerer and log server on 127.0.0.1, the admin password as
     ui.sh prints it; stopped with SIGTERM at the end, as Ctrl-C stops it.
Out: pass/fail of triggers over REST first, on the DAG still paused (a bad rescale plan refused naming the form
     field and creating no run, authentication before any answer, a good form's runs created, then deleted),
     then of the browser, with a screenshot per step under artifacts/screenshots/ (kept as the
     test's artifacts): login, trigger form with scenario, seed and mutant changed, the run
     finished, the plugin's view with the run and its verdict, the run's report at its one address
     inside Airflow, refused triggers (a malformed rescale plan; one the whole-form check refuses; a
     typed -1 seed, which the field keeps) with the error in the form and no run, the runs view with
     several nightly runs: its trend chart (hovered) and its verdict filter; the same run (one DAG
     run in this module: a caught mutant, failed-region-commits): its run-id link opening the DAG run
     in Airflow's top window, failed in red, its note, its task's "Chaos report" link and the report
     it opens (the note's, the link's and the runs view's address one and the same), its task logs
     (publish_report ending with one failure line and no traceback, chaos_run with no ERROR line and
     the report's address, a link, last; no map-index label), then its Data Docs from the runs view
     inside Airflow's page (index, the failing notifications page with its unexpected rows, separated
     headers, the "Failed Only" filter), with every request the page made going to 127.0.0.1, and the
     stored copy opened by file:// with the network off; and ui.sh leaving no process behind.
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


def in_airflow(airflow, path: str) -> str:
    """A plugin page's one address inside Airflow's UI (`regionchaos_airflow.runs.in_airflow`)."""
    return f"{airflow.base}/plugin/chaos/regionchaos{path}"


def plugin_frame(page):
    """The plugin's page in Airflow's frame (Airflow titles the frame with the view's name)."""
    return page.frame_locator('iframe[title="Chaos runs"]')


def open_trigger_form(page, airflow):
    page.goto(f"{airflow.base}/dags/{DAG_ID}")
    page.get_by_test_id("trigger-dag-button").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text(f"Trigger Dag - {DAG_ID}").wait_for()
    return dialog


# -- triggers over REST, first in this module: on the DAG still paused, so a created run never starts ------------

def trigger(airflow, conf, dag_id=DAG_ID, auth=True):
    body = json.dumps({"logical_date": None, "conf": conf}).encode()
    return airflow.call("POST", f"/api/v2/dags/{dag_id}/dagRuns", body=body, auth=auth)


@pytest.mark.parametrize(
    "rescale, reason",
    [("3:0", "'3:0': parallelism 0 is out of range, it must be 1 to 8192"),
     ("3:9999", "'3:9999': parallelism 9999 is out of range, it must be 1 to 8192"),
     ("99:1", "'99:1' rescales after checkpoint 99, but scenario smoke has 12 checkpoints (indices 0 to 11)"),
     ("3:2,3:1", "'3:1' does not come after '3:2': each pair's checkpoint must be later than the one before")],
)
def test_the_api_server_refuses_a_bad_rescale_plan_and_creates_no_run(airflow, rescale, reason):
    before = airflow.runs(DAG_ID)
    status, body = trigger(airflow, {"scenario": "smoke", "seed": 3, "rescale": rescale})
    assert status == 400, body
    assert body["detail"] == f"No chaos run was started: correct this field and trigger again.\nRescale plan (rescale): {reason}"
    assert airflow.runs(DAG_ID) == before


def test_the_api_server_names_form_fields_not_scenario_keys(airflow):
    before = airflow.runs(DAG_ID)
    status, body = trigger(airflow, {"scenario": "smoke", "parallelism": 1, "seed": -1})
    assert (status, body["detail"].split("\n")[1]) == (400, "Seed (seed): must be at least 0, got -1")
    status, body = trigger(airflow, {"scenario": "smoke", "parallelism": 1, "seed": "-1"})  # as the form types it
    assert (status, body["detail"].split("\n")[1]) == (400, "Seed (seed): must be at least 0, got -1")
    status, body = trigger(airflow, {"scenario": "smoke", "parallelism": 1})
    assert status == 400
    assert body["detail"] == ("No chaos run was started: correct this field and trigger again.\n"
                              "Parallelism (regions) (parallelism): 1 is fewer than the 2 TaskManagers of "
                              "scenario smoke (at most one TaskManager per subtask): at least 2")
    assert "topology." not in json.dumps(body)
    status, body = trigger(airflow, {"seeds": 0, "first_seed": 5}, dag_id="regionchaos_swarm")
    assert (status, body["detail"]) == (400, "No swarm was started: correct this field and trigger again.\n"
                                             "Seeds (seeds): must be at least 1, got 0")
    assert airflow.runs(DAG_ID) == before
    assert airflow.runs("regionchaos_swarm") == []


def test_the_api_server_still_authenticates_before_it_answers(airflow):
    status, body = trigger(airflow, {"scenario": "smoke", "rescale": "99:1"}, auth=False)
    assert status == 401, body


def test_the_api_server_creates_a_run_for_a_good_form(airflow):
    """The runs are created on the DAG as ui.sh leaves it, paused (queued, never started), then deleted."""
    status, dag = airflow.call("GET", f"/api/v2/dags/{DAG_ID}")
    assert status == 200 and dag["is_paused"], dag  # else the scheduler would run them
    created = []
    try:
        typed = {"scenario": "smoke", "seed": "12", "decline": "0.1"}  # number fields as the form sends them: text
        status, body = trigger(airflow, typed)
        assert status == 200 and body["conf"] == typed, body
        created.append(body["dag_run_id"])
        conf = {"scenario": "rescale-4-2-1", "seed": 7, "rescale": "3:2,7:1", "parallelism": 6, "mutant": "none"}
        status, body = trigger(airflow, conf)
        assert status == 200, body
        created.append(body["dag_run_id"])
        assert body["conf"] == conf
        assert set(created) <= {r["dag_run_id"] for r in airflow.runs(DAG_ID)}
    finally:
        for run_id in created:
            status, body = airflow.call("DELETE", f"/api/v2/dags/{DAG_ID}/dagRuns/{urllib.parse.quote(run_id, safe='')}")
            assert status == 204, body
    assert not {r["dag_run_id"] for r in airflow.runs(DAG_ID)} & set(created)


# -- the browser -------------------------------------------------------------------------------------------------

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
    page.wait_for_url(invalid_run.report_url)  # Airflow's address of the report: the note's and the link's too


REFUSED = "No chaos run was started: correct this field and trigger again."  # the refusal's sentence, then the field


@pytest.mark.parametrize(
    "section, field, typed, error, shot",
    [("Rescale", "rescale", "3-2", "Rescale plan (rescale): '3-2' is not a plan like '3:2,7:1' or 'none'",
      "08-malformed-plan-refused"),
     ("Rescale", "rescale", "99:1", "Rescale plan (rescale): '99:1' rescales after checkpoint 99, but scenario smoke "
                                    "has 12 checkpoints (indices 0 to 11)", "09-plan-beyond-the-scenario-refused"),
     # typed key by key: Airflow's number input turned the "-" into NaN, then emptied itself, and the run
     # started with the scenario's seed; the seed is a text field that keeps what was typed
     ("Scenario", "seed", "-1", "Seed (seed): must be at least 0, got -1", "09b-negative-seed-refused")],
)
def test_an_invalid_value_in_the_form_is_refused_and_starts_no_run(page, airflow, section, field, typed, error, shot):
    before = [r["dag_run_id"] for r in airflow.runs(DAG_ID)]
    dialog = open_trigger_form(page, airflow)
    dialog.get_by_role("button", name=section).click()
    box = dialog.locator(f"#element_{field}")
    box.press_sequentially(typed)
    box.press("Tab")
    kept = box.input_value()
    with page.expect_response(is_trigger_post) as posted:
        dialog.get_by_test_id("trigger-dag-submit").click()
    assert kept == typed  # the field holds what was typed
    assert posted.value.status == 400
    assert posted.value.json()["detail"] == f"{REFUSED}\n{error}"
    message = dialog.get_by_test_id("error-alert")
    message.get_by_text(error).wait_for()  # the form shows the detail, naming the field
    shown = message.inner_text()
    page.screenshot(path=SHOTS / f"{shot}.png")
    assert REFUSED in shown  # a sentence about the run (Airflow heads the banner "400 Bad Request" itself)
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
    chart = frame.locator("#trend")
    chart.wait_for()
    # the canvas is in the page before the parser has run Chart.js and the chart's script: wait for the chart
    drawn_chart = chart.element_handle()
    drawn_chart.owner_frame().wait_for_function("c => window.Chart && Chart.getChart(c)", arg=drawn_chart)
    drawn = chart.evaluate("""c => { const ch = Chart.getChart(c);
        return {labels: ch.data.labels, sets: ch.data.datasets.map(d => [d.label, d.data]), width: c.width}; }""")
    bar = chart.evaluate("""c => { const b = Chart.getChart(c).getDatasetMeta(0).data[2];
        return {x: b.x, y: (b.y + b.base) / 2}; }""")  # the third night's flip_bounds bar, in the canvas
    chart.hover(position=bar)  # Chart.js's tooltip, as Airflow's own charts show one
    frame.locator("body").evaluate("() => new Promise(done => requestAnimationFrame(() => done(true)))")
    tooltip = chart.evaluate("""c => { const t = Chart.getChart(c).tooltip;
        return {shown: t.opacity > 0, title: t.title, body: t.body.flatMap(b => b.lines)}; }""")
    page.screenshot(path=SHOTS / "10-runs-view-trend.png", full_page=True)
    assert drawn["labels"] == [f"2026-11-{day} 00:00" for day in (19, 20, 21, 22)] and drawn["width"] > 300
    assert drawn["sets"][0] == ["flip_bounds", [0, 0, 1, 0]]  # one series per invariant that failed
    assert drawn["sets"][-1][0] == "checkpoint success (mean)"
    assert tooltip["shown"] and tooltip["title"] == ["nightly DAG run of 2026-11-21 00:00"], tooltip
    assert " flip_bounds: failed in 1 run" in tooltip["body"], tooltip
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
    seed = dialog.locator("#element_seed")  # a text field: the number as typed
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
    conf = created["conf"]
    assert (conf["scenario"], conf["seed"], conf["mutant"]) == (SCENARIO, str(SEED), MUTANT)  # the seed as typed
    page.screenshot(path=SHOTS / "04-triggered.png")
    run_id = created["dag_run_id"]
    key = run_key(SCENARIO, f"s{SEED}", MUTANT, run_id)
    return InvalidRun(run_id, key, wait_for_state(airflow, run_id), in_airflow(airflow, f"/runs/{key}/report"))


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
    page.wait_for_url(invalid_run.report_url)  # the note's address: the report inside Airflow's page
    report = wait_for_frame(page, f"/runs/{invalid_run.key}/report/index.html")
    report.get_by_text("failed invariants:").first.wait_for()
    page.screenshot(path=SHOTS / "15-invalid-run-report.png")
    heading = plugin_frame(page).locator("h1").inner_text()
    assert page.get_by_role("button", name="Browse").is_visible()  # in Airflow's page, its sidebar
    assert invalid_run.key in heading and "invalid" in heading, heading
    assert f"mutant {MUTANT}" in report.locator("body").inner_text()


def test_the_run_id_link_opens_the_dag_run_in_airflow_s_top_window(page, airflow, invalid_run):
    """Airflow frames the plugin's view in a sandbox without allow-top-navigation: the link to the DAG
    run replaces Airflow's page itself, never nesting a second Airflow (two sidebars) in the frame."""
    page.goto(in_airflow(airflow, "/"))
    plugin_frame(page).locator(f'tr[data-run-id="{invalid_run.key}"] a.dag-run').click()
    dag_run_page = f"{airflow.base}/dags/{DAG_ID}/runs/{urllib.parse.quote(invalid_run.dag_run_id, safe='')}"
    page.wait_for_url(dag_run_page)
    page.get_by_text("publish_report").first.wait_for()
    page.screenshot(path=SHOTS / "11b-run-id-link-opens-the-dag-run.png")
    assert [f.url for f in page.frames] == [dag_run_page]  # Airflow's own page, no frame in it
    assert page.get_by_role("button", name="Browse").count() == 1  # one sidebar


def task_log(airflow, invalid_run, task_id: str, try_number: int = 1) -> list[dict]:
    """The task's log records of one try, as Airflow serves them (what its log view shows)."""
    quoted = urllib.parse.quote(invalid_run.dag_run_id, safe="")
    status, body = airflow.call("GET", f"/api/v2/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances/{task_id}/logs/{try_number}")
    assert status == 200, body
    return [e for e in body["content"] if isinstance(e, dict)]


def own_lines(records: list[dict]) -> list[dict]:
    """The records a task's own code wrote: between Airflow's Pre Execute and Post Execute groups."""
    events = [str(e.get("event")) for e in records]
    start = events.index("::endgroup::", events.index("::group::Pre Execute"))
    end = events.index("::group::Post Execute", start)
    return records[start + 1:end]


def test_the_invalid_run_s_logs_end_with_one_failure_line_and_the_report_s_address(page, airflow, invalid_run):
    failed = [c["name"] for c in stored_summary(airflow, invalid_run.key)["checks"] if not c["success"]]
    quoted = urllib.parse.quote(invalid_run.dag_run_id, safe="")
    status, body = airflow.call("GET", f"/api/v2/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances")
    assert status == 200 and {ti["task_id"]: ti["rendered_map_index"] for ti in body["task_instances"]} == {
        "resolve_scenario": None, "chaos_run": None, "publish_report": None}  # unmapped: no map-index label
    # the verdict fails publish_report once, never retried (its retries=0, `RunFailed`); the tasks before it may take
    # a second try only for what their retries are for (their infrastructure), and chaos_run ended with the verdict
    tries = {ti["task_id"]: (ti["try_number"], ti["state"]) for ti in body["task_instances"]}
    assert tries["publish_report"] == (1, "failed") and tries["chaos_run"][1] == "success", tries
    publish = task_log(airflow, invalid_run, "publish_report")
    errors = [e for e in publish if e.get("level") in ("error", "critical")]
    last = own_lines(publish)[-1]
    # one line: the verdict, the failed invariants, the report's address; no traceback, no second try
    assert errors == [last] and last["event"] == "Task exited", errors
    assert last["exit_code"] == (f"run {invalid_run.key} invalid: the checks caught mutant {MUTANT}; failed "
                                 f"invariants: {', '.join(failed)}; report: {invalid_run.report_url}")
    assert not any("error_detail" in e for e in publish)
    chaos_run = task_log(airflow, invalid_run, "chaos_run", tries["chaos_run"][0])  # the try that succeeded
    assert [e for e in chaos_run if e.get("level") in ("error", "critical")] == []  # it did not fail: no ERROR line
    assert own_lines(chaos_run)[-1]["event"] == f"regionchaos report in Airflow: {invalid_run.report_url}"
    jvm = [e for e in chaos_run if str(e.get("event")).startswith(("WARNING: Using incubator", "Picked up JAVA_"))]
    assert jvm and {e["level"] for e in jvm} == {"warning"}, jvm  # the JVM's stderr, at WARNING
    texts = " ".join(str(e.get("event")) for e in chaos_run)
    assert "Returned value was" not in texts and "Skipping masking" not in texts
    # progress while it works: the emulation, then each suite with its result; GX's INFO lines stay out
    events = [str(e.get("event")) for e in chaos_run]
    assert any(e.startswith(f"regionchaos: emulate {SCENARIO} seed={SEED} mutant={MUTANT}") for e in events), events
    suites = [m.groups() for e in events
              if (m := re.fullmatch(r"regionchaos: suite (\d+)/(\d+) (\w+): (passed|FAILED) \([\d.]+ s\)", e))]
    assert suites and len(suites) == int(suites[0][1]), events
    assert {name for _, _, name, result in suites if result == "FAILED"} == set(failed)
    assert len([e for e in chaos_run if str(e.get("logger", "")).startswith("great_expectations")]) < 5
    for task in ("chaos_run", "publish_report"):  # both tasks' "Chaos report" extra link: the report in Airflow
        status, body = airflow.call("GET", f"/api/v2/dags/{DAG_ID}/dagRuns/{quoted}/taskInstances/{task}/links")
        assert (status, body.get("extra_links")) == (200, {"Chaos report": invalid_run.report_url}), (task, body)

    run_page = f"{airflow.base}/dags/{DAG_ID}/runs/{quoted}"
    page.goto(f"{run_page}/tasks/publish_report")
    page.get_by_text("Task exited").wait_for()
    shown = page.locator("body").inner_text()
    page.screenshot(path=SHOTS / "14b-publish-report-log.png")
    assert "Task failed with exception" not in shown and "Traceback" not in shown
    page.goto(f"{run_page}/tasks/chaos_run")
    address = page.get_by_role("link", name=invalid_run.report_url)  # Airflow's log view made it a link
    address.wait_for()
    page.screenshot(path=SHOTS / "14c-chaos-run-log.png")
    assert address.get_attribute("href") == invalid_run.report_url


def test_the_invalid_run_s_data_docs_render_inside_airflow_asking_only_loopback(page, airflow, invalid_run):
    requested: list[str] = []
    record = lambda request: requested.append(request.url)  # noqa: E731 - every frame's, every page's
    page.context.on("request", record)
    try:
        page.goto(airflow.base + "/")
        page.get_by_role("button", name="Browse").click()
        page.get_by_role("menuitem", name="Chaos runs").click()
        view = plugin_frame(page)
        view.locator(f'tr[data-run-id="{invalid_run.key}"]').get_by_role("link", name="Data Docs").click()
        page.wait_for_url(in_airflow(airflow, f"/runs/{invalid_run.key}/datadocs"))  # their one address in Airflow
        docs = view.frame_locator("#docs")  # under the run's facts, inside Airflow's page
        rows = docs.locator("table.ge-index-page-validation-results-table tbody tr")
        rows.first.wait_for()  # filled by bootstrap-table from the page's data: its scripts ran
        filters = docs.locator("table.ge-index-page-validation-results-table .filter-control select").count()
        header_weight = docs.locator("table.ge-index-page-validation-results-table thead th").first.evaluate(
            "e => getComputedStyle(e).fontWeight")  # bootstrap's table styles
        docs_origin = docs.locator("body").evaluate("() => self.origin")
        index_text = docs.locator("body").inner_text()
        in_airflow_page = page.get_by_role("button", name="Browse").is_visible()
        page.screenshot(path=SHOTS / "16-datadocs-index-in-airflow.png")
        assert in_airflow_page and docs_origin == "null"  # inside Airflow's page, off its origin (sandboxed)
        assert filters > 0 and header_weight in ("700", "bold"), (filters, header_weight)
        assert invalid_run.key in index_text and "notifications" in index_text
        assert "Stay current on everything GX" not in index_text  # GX's newsletter footer is gone

        wait_for_ready_handlers(docs)  # the rows' click handler is bound when the document is ready
        rows.filter(has_text="notifications").click()  # a row's script opens its validation page
        # the failed rule's own table of unexpected rows (nested in GX's results table: the innermost one)
        unexpected = docs.locator("table:not(:has(table))").filter(has=docs.locator("th", has_text="checkpoint_id"))
        unexpected.first.wait_for()
        headers = header_boxes(unexpected.first)
        icons = docs.locator("body").evaluate("""async () => { await document.fonts.ready;
            return [...document.fonts].filter(f => f.family.includes("Font Awesome")).map(f => f.status); }""")
        page_text = docs.locator("body").inner_text()
        details = unexpected.first.locator("tbody tr td:last-child").all_inner_texts()
        expectations = docs.locator(".ge-section table > tbody > tr:has(td:first-child i.fas)")
        shown_before = expectations.filter(visible=True).count()
        docs.get_by_text("Failed Only").click()  # GX's filter: the expectations that passed fade out
        passed = docs.locator(".ge-section table > tbody > tr:has(td:first-child i.fa-check-circle)")
        passed.last.wait_for(state="hidden")
        shown_after = [t[:40] for t in expectations.filter(visible=True).all_inner_texts()]
        page.screenshot(path=SHOTS / "17-datadocs-notifications-unexpected-rows.png")
    finally:
        page.context.remove_listener("request", record)
    check = next(c for c in stored_summary(airflow, invalid_run.key)["checks"] if c["name"] == "notifications")
    assert "Expectation Suite: notifications" in page_text and "Status: Failed" in re.sub(r"\s+", " ", page_text)
    assert f"{check['unexpected_count']} violating rows" in page_text, page_text[:3000]
    assert details and details == [e["detail"] for e in check["examples"]][:len(details)], details
    assert_separated(headers)
    assert "loaded" in icons and "error" not in icons, icons  # the status icons' font, from the docs' own copy
    assert shown_before > len(shown_after) == len(check["failed_rules"]), (shown_before, shown_after)
    assert any("/regionchaos/public/dd/" in url for url in requested), requested  # the docs' own requests seen
    assert any(url.endswith("/datadocs/static/vendor/bootstrap-table.min.js") for url in requested)  # their copy
    hosts = {urlsplit(url).hostname for url in requested if not url.startswith(("data:", "about:", "blob:"))}
    assert hosts == {"127.0.0.1"}, sorted(u for u in requested if urlsplit(u).hostname != "127.0.0.1")


def header_boxes(table) -> list[dict]:
    """The column headers of a table: text, left and right edges of the cell and of its text."""
    return table.locator("thead th").evaluate_all("""ths => ths.map(th => { const r = document.createRange();
        r.selectNodeContents(th); const text = r.getBoundingClientRect(), cell = th.getBoundingClientRect();
        return {text: th.innerText.trim(), left: cell.left, right: cell.right,
                textLeft: text.left, textRight: text.right}; })""")


def assert_separated(headers: list[dict], gap_px: float = 6.0) -> None:
    """The violating rows' column names stand apart: padding inside each cell on both sides of its text,
    so two neighbouring names are at least ``gap_px`` apart (they ran together: "checkpoint_idregion...")."""
    assert [h["text"] for h in headers][:3] == ["checkpoint_id", "region", "subtask"], headers
    for left, right in zip(headers, headers[1:]):
        assert right["textLeft"] - left["textRight"] >= gap_px, (left, right)


def test_the_stored_data_docs_render_by_file_url_with_the_network_off(browser, local_ui, invalid_run, tmp_path):
    """The run's Data Docs as stored (the same bytes as a local run's mirror under .runs/RUN/datadocs/),
    copied out of the local S3 and opened from disk, every http(s) request refused."""
    import boto3

    client = boto3.client("s3", endpoint_url=local_ui.s3_endpoint, region_name="us-east-1", **UI_CREDENTIALS)
    prefix = f"{UI_PREFIX}/{invalid_run.key}/datadocs/"
    keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=UI_BUCKET, Prefix=prefix)
            for o in page.get("Contents", [])]
    for key in keys:
        target = tmp_path / key[len(prefix):]
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(UI_BUCKET, key, str(target))
    client.close()
    (validation,) = (tmp_path / "validations" / "notifications").rglob("*.html")
    requested: list[str] = []
    offline = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        offline.route(re.compile(r"^https?://"), lambda route: route.abort())  # the network is off
        offline.on("request", lambda request: requested.append(request.url))
        offline.goto(validation.as_uri())
        unexpected = offline.locator("table:not(:has(table))").filter(
            has=offline.locator("th", has_text="checkpoint_id"))
        unexpected.first.wait_for()
        drawn = offline.locator(".bootstrap-table").count()  # tables bootstrap-table drew: the docs' scripts ran
        headers = header_boxes(unexpected.first)
        text = offline.locator("body").inner_text()
        offline.screenshot(path=SHOTS / "18-datadocs-stored-copy-offline.png", full_page=True)
    finally:
        offline.close()
    assert drawn > 0 and "violating rows" in text
    assert_separated(headers)
    assert requested and all(url.startswith("file://") for url in requested), \
        [url for url in requested if not url.startswith("file://")]


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
