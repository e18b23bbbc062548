"""The Airflow UI in headless Chromium against a real Airflow started here.

In:  api-server, scheduler and dag-processor started from scripts/airflow-env.sh in a
     scratch AIRFLOW_HOME on SQLite, bound to 127.0.0.1, SimpleAuthManager with a known
     admin password; runs stored in the session's embedded S3 (fixture `s3_server`, under
     a prefix of this module), which the tasks and the plugin both reach over HTTP.
Out: pass/fail, and a screenshot per step under artifacts/screenshots/ (kept as the
     test's artifacts): login, trigger form with seed and scenario changed, run succeeded,
     the plugin's view with the run and its verdict, the run's report, a refused trigger.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "plugins") not in sys.path:
    sys.path.insert(0, str(ROOT / "plugins"))

from regionchaos_airflow.runs import run_key  # noqa: E402
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("REGIONCHAOS_CHROMIUM", "/usr/bin/chromium")
DAG_ID = "regionchaos_manual"
SCENARIO, SEED = "rescale-4-2-1", 7  # changed in the form from smoke / empty
START_TIMEOUT_S = 180
RUN_TIMEOUT_S = 600  # emulate + validate + report of a small scenario, with margin


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Airflow:
    base: str
    password: str
    home: Path
    user: str = "admin"
    procs: list[subprocess.Popen] = field(default_factory=list)

    def token(self) -> str:
        body = json.dumps({"username": self.user, "password": self.password}).encode()
        return self.call("POST", "/auth/token", body=body, auth=False)[1]["access_token"]

    def call(self, method: str, path: str, body: bytes | None = None, auth: bool = True,
             cookie: str | None = None) -> tuple[int, object]:
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token()}"
        if cookie:
            headers["Cookie"] = cookie
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                status = response.status
        except urllib.error.HTTPError as err:
            raw, status = err.read(), err.code
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def runs(self) -> list[dict]:
        return self.call("GET", f"/api/v2/dags/{DAG_ID}/dagRuns")[1]["dag_runs"]

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.home.glob("*.out")))


def wait_for(what: str, check, timeout_s: float, airflow: Airflow | None = None, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            result = check()
        except (OSError, urllib.error.URLError, KeyError):
            result = None
        if result:
            return result
        time.sleep(every_s)
    pytest.fail(f"timed out after {timeout_s} s waiting for {what}\n{airflow.logs() if airflow else ''}")


@pytest.fixture(scope="module")
def airflow(tmp_path_factory, s3_server):
    """A real Airflow on 127.0.0.1: api-server, then scheduler and dag-processor."""
    home = tmp_path_factory.mktemp("airflow-browser")
    port, password = free_port(), secrets.token_urlsafe(12)
    (home / "passwords.json").write_text(json.dumps({"admin": password}))
    dropped = ("AIRFLOW", "REGIONCHAOS_", "AWS_ENDPOINT_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update({
        "REGIONCHAOS_AIRFLOW_HOME": str(home),
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
        "AIRFLOW__API__SECRET_KEY": secrets.token_hex(16),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "REGIONCHAOS_S3_ENDPOINT": s3_server.config.endpoint_url,
        "REGIONCHAOS_BUCKET": s3_server.config.bucket,
        "REGIONCHAOS_PREFIX": f"browser-{uuid.uuid4().hex[:8]}",
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
    })
    migrate = subprocess.run(["bash", "-c", "source scripts/airflow-env.sh"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    assert migrate.returncode == 0, migrate.stderr
    env["REGIONCHAOS_SKIP_MIGRATE"] = "1"
    af = Airflow(base=f"http://127.0.0.1:{port}", password=password, home=home)

    def start(name: str, command: str) -> None:
        out = open(home / f"{name}.out", "w")  # noqa: SIM115 - closed with the process
        af.procs.append(subprocess.Popen(
            ["bash", "-c", f"source scripts/airflow-env.sh && exec airflow {command}"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        ))

    try:
        # all three at once: every DAG is paused at creation, so no task runs before the
        # api-server (which serves the tasks' execution API) is up
        start("api-server", f"api-server --port {port} --workers 1")
        start("scheduler", "scheduler")
        start("dag-processor", "dag-processor")
        wait_for("the api-server", lambda: af.call("GET", "/api/v2/monitor/health", auth=False)[0] == 200,
                 START_TIMEOUT_S, af)
        wait_for(f"{DAG_ID} to be parsed", lambda: af.call("GET", f"/api/v2/dags/{DAG_ID}")[0] == 200,
                 START_TIMEOUT_S, af)
        # every DAG is paused at creation; the manual one must run when triggered
        assert af.call("PATCH", f"/api/v2/dags/{DAG_ID}", body=b'{"is_paused": false}')[0] == 200
        yield af
    finally:
        for proc in af.procs:  # each in its own session: stop what it started, by group id
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in af.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


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
    section = dialog.locator('[id$=":content:Scenario"]')
    assert dialog.locator("input[name=element_scenario]").input_value() == "smoke"  # the default
    section.locator("input[aria-autocomplete=list]").click()
    page.get_by_role("option", name=SCENARIO, exact=True).click()
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
    assert cells[1:5] == [SCENARIO, str(SEED), "none", "valid"], cells

    plugin_run_id = run_key(SCENARIO, f"s{SEED}", run_id)
    status, docs = airflow.call("GET", f"/regionchaos/runs/{plugin_run_id}/datadocs/index.html")
    assert status == 200 and "<html" in docs.lower(), (status, str(docs)[:300])  # the Data Docs link works

    row.get_by_role("link", name="report").click()
    report = wait_for_frame(page, "/report/index.html")
    report.wait_for_load_state()
    page.screenshot(path=SHOTS / "07-report.png")
    assert SCENARIO in report.locator("body").inner_text()


def test_an_invalid_value_in_the_form_is_refused_and_starts_no_run(page, airflow):
    before = [r["dag_run_id"] for r in airflow.runs()]
    dialog = open_trigger_form(page, airflow)
    dialog.get_by_role("button", name="Rescale").click()
    plan = dialog.locator("#element_rescale")
    plan.fill("3-2")
    plan.press("Tab")
    with page.expect_response(is_trigger_post) as posted:
        dialog.get_by_test_id("trigger-dag-submit").click()
    assert posted.value.status == 400
    message = dialog.get_by_text("Invalid input for param rescale")
    message.wait_for()
    page.screenshot(path=SHOTS / "08-invalid-param-refused.png")
    assert "'3-2' does not match" in message.inner_text()
    assert [r["dag_run_id"] for r in airflow.runs()] == before


def test_the_plugin_refuses_unauthenticated_requests_on_the_real_server(airflow):
    for path in ("/regionchaos/", "/regionchaos/api/runs"):
        assert airflow.call("GET", path, auth=False)[0] == 401
        assert airflow.call("GET", path, auth=False, cookie="_token=forged.jwt.value")[0] in (401, 403)
    status, body = airflow.call("GET", "/regionchaos/api/runs")
    assert status == 200 and isinstance(body["runs"], list)
    assert airflow.call("GET", "/regionchaos/runs/x/..%2F..%2Fsecret", auth=True)[0] == 404
