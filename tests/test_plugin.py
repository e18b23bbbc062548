"""Plugin tests: the runs view against a real (embedded, moto) S3, Airflow's auth, traversal,
the trigger check, and its hardening (no schema without login, unreadable trigger
bodies refused, CSP and nosniff, unreadable summaries, the served-size cap, run ids of any script).

In:  the plugin's FastAPI app (plugins/regionchaos_airflow/app.py) under Starlette's
     TestClient, Airflow's SimpleAuthManager with JWTs it signs itself, and objects put
     into the session's embedded S3 (fixture `s3_server`) under a prefix of this module.
Out: pass/fail. The same app mounted in a real api-server is driven by
     tests/test_airflow_browser.py.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import time
import uuid

import pytest

import tests.airflow_env  # noqa: E402, F401  (sets up Airflow before it is imported)

from fastapi.testclient import TestClient  # noqa: E402

from regionchaos_airflow import app as plugin  # noqa: E402

from .plugin_setup import plugin_storage, simple_auth  # noqa: E402

PREFIX = f"plugin-test-{uuid.uuid4().hex[:8]}"
SECRET = b"top secret: outside the runs prefix"


def summary(run_id: str, scenario: str, seed: int, verdict: str, failed: tuple[str, ...] = ()) -> dict:
    checks = [{"name": name, "success": False, "unexpected_count": 3, "examples": []} for name in failed]
    checks.append({"name": "exactly_once", "success": True, "unexpected_count": 0, "examples": []})
    return {"run_id": run_id, "scenario": scenario, "seed": seed, "mutant": None, "verdict": verdict,
            "checks": checks, "stats": {}, "report": f"s3://regionchaos/{PREFIX}/{run_id}/report/index.html",
            "replay": f"regionchaos run --scenario {scenario} --seed {seed}"}


@pytest.fixture(scope="module")
def storage(s3_server):
    """Two finished runs and one without a summary under PREFIX; a secret outside it."""
    config = s3_server.config.model_copy(update={"prefix": PREFIX})
    client = config.client()
    put = lambda key, body: client.put_object(Bucket=config.bucket, Key=key, Body=body)  # noqa: E731
    for run_id, scenario, seed, verdict, failed in [
        ("smoke-s7-manual-1", "smoke", 7, "valid", ()),
        ("rescale-s3-manual-2", "rescale-4-2-1", 3, "invalid", ("no_loss", "flip_bounds")),
    ]:
        put(f"{PREFIX}/{run_id}/summary.json", json.dumps(summary(run_id, scenario, seed, verdict, failed)))
        put(f"{PREFIX}/{run_id}/report/index.html", f"<h1>report of {run_id}</h1>")
        put(f"{PREFIX}/{run_id}/datadocs/index.html", f"<h1>data docs of {run_id}</h1>")
        put(f"{PREFIX}/{run_id}/checkpoints/chk-1/_metadata", "{}")
    put(f"{PREFIX}/still-running/scenario.json", "{}")
    put("secret.txt", SECRET)
    put(f"{PREFIX}-other/secret.txt", SECRET)
    put(f"{PREFIX}/smoke-s7-manual-1/../secret.txt", SECRET)  # a literal '..' key, must not be served
    client.close()
    return config


@pytest.fixture
def configured(storage, monkeypatch):
    with plugin_storage(monkeypatch, storage, PREFIX) as config:
        yield config


@pytest.fixture(scope="module")
def metadata_db():
    """Airflow's tables in the scratch SQLite home: token checks consult revoked_token."""
    from airflow.utils.db import initdb

    initdb()


@pytest.fixture
def auth(metadata_db, monkeypatch, tmp_path):
    """Airflow auth on: SimpleAuthManager with an admin and a viewer; returns token(role)."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    with simple_auth(monkeypatch, tmp_path, "admin:admin,viewer:viewer") as manager:
        yield lambda role: manager.generate_jwt(SimpleAuthManagerUser(username=role, role=role))


@pytest.fixture
def client():
    with TestClient(plugin.app) as test_client:
        yield test_client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- authentication ----------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/api/runs", "/runs/smoke-s7-manual-1/report/index.html"])
def test_unauthenticated_requests_are_refused(configured, auth, client, path):
    assert client.get(path).status_code == 401
    assert client.get(path, headers=bearer("not-a-jwt")).status_code in (401, 403)
    forged = auth("admin")[:-4] + "AAAA"
    assert client.get(path, headers=bearer(forged)).status_code in (401, 403)
    assert client.get(path, headers=bearer(auth("viewer"))).status_code == 200


def test_the_ui_cookie_authenticates_like_the_api_server_does(configured, auth, client):
    client.cookies.set("_token", auth("viewer"))
    assert client.get("/api/runs").status_code == 200


# -- listing -----------------------------------------------------------------------------

def test_runs_are_listed_from_storage(configured, auth, client):
    response = client.get("/api/runs", headers=bearer(auth("admin")))
    assert response.status_code == 200
    rows = {row["run_id"]: row for row in response.json()["runs"]}
    assert set(rows) == {"smoke-s7-manual-1", "rescale-s3-manual-2", "still-running"}
    invalid = rows["rescale-s3-manual-2"]
    assert (invalid["scenario"], invalid["seed"], invalid["verdict"]) == ("rescale-4-2-1", 3, "invalid")
    assert invalid["failed"] == ["no_loss", "flip_bounds"]
    assert rows["smoke-s7-manual-1"]["verdict"] == "valid" and rows["smoke-s7-manual-1"]["failed"] == []
    assert rows["still-running"]["verdict"] == "running"
    assert client.get("/api/runs?q=smoke", headers=bearer(auth("admin"))).json()["runs"][0]["run_id"] == (
        "smoke-s7-manual-1")


def test_the_html_view_links_report_and_data_docs(configured, auth, client):
    page = client.get("/", headers=bearer(auth("admin")))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = page.text
    assert '<tr data-run-id="rescale-s3-manual-2">' in text
    row = text.split('<tr data-run-id="rescale-s3-manual-2">')[1].split("</tr>")[0]
    assert ">invalid<" in row and "rescale-4-2-1" in row
    failed_cell = re.findall(r'<a class="evidence" href="([^"]+)">([a-z_]+)</a>', row)
    assert failed_cell[:2] == [("/runs/rescale-s3-manual-2/report?invariant=no_loss", "no_loss"),
                               ("/runs/rescale-s3-manual-2/report?invariant=flip_bounds", "flip_bounds")]
    assert 'href="/runs/rescale-s3-manual-2/report"' in row
    assert 'href="/runs/rescale-s3-manual-2/datadocs"' in row


def test_reports_and_data_docs_are_served_from_storage(configured, auth, client):
    headers = bearer(auth("admin"))
    report = client.get("/runs/smoke-s7-manual-1/report/index.html", headers=headers)
    assert report.status_code == 200 and report.text == "<h1>report of smoke-s7-manual-1</h1>"
    assert report.headers["content-type"].startswith("text/html")
    docs = client.get("/runs/smoke-s7-manual-1/datadocs/index.html", headers=headers)
    assert docs.text == "<h1>data docs of smoke-s7-manual-1</h1>"
    assert client.get("/runs/smoke-s7-manual-1/summary.json", headers=headers).json()["seed"] == 7
    assert client.get("/runs/smoke-s7-manual-1/report/missing.html", headers=headers).status_code == 404


# -- traversal ---------------------------------------------------------------------------

TRAVERSALS = [
    "/runs/smoke-s7-manual-1/../secret.txt",
    "/runs/smoke-s7-manual-1/report/../../secret.txt",
    "/runs/smoke-s7-manual-1/%2e%2e/secret.txt",
    "/runs/smoke-s7-manual-1/report/%2e%2e%2f%2e%2e%2fsecret.txt",
    "/runs/smoke-s7-manual-1/report/..%2F..%2F..%2Fsecret.txt",
    "/runs/smoke-s7-manual-1/report/%252e%252e%252fsecret.txt",
    "/runs/smoke-s7-manual-1/report/..%5c..%5csecret.txt",
    "/runs/smoke-s7-manual-1//secret.txt",
    "/runs/smoke-s7-manual-1/%2Fsecret.txt",
    "/runs/..%2F..%2Fsecret.txt/report/index.html",
    "/runs/%2e%2e/secret.txt",
    "/runs/..%2Fplugin-test-other/secret.txt",
    "/runs/smoke-s7-manual-1/checkpoints/chk-1/_metadata",  # inside the run, but not served
    "/runs/smoke-s7-manual-1/report/.hidden",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_paths_outside_the_runs_prefix_are_never_served(configured, auth, client, path):
    response = client.get(path, headers=bearer(auth("admin")))
    assert response.status_code in (400, 404), (path, response.status_code)
    assert SECRET not in response.content


@pytest.mark.parametrize(
    "run_id, key",
    [("..", "secret.txt"), ("a", "../secret.txt"), ("a", "/etc/passwd"), ("a", "report/../../x"),
     ("a", "report\\..\\x"), ("a", "report/%2e%2e/x"), ("/abs", "report/index.html"), ("a", "")],
)
def test_safe_key_refuses_traversal(run_id, key):
    from fastapi import HTTPException

    with pytest.raises(HTTPException) as err:
        plugin.safe_key(run_id, key)
    assert err.value.status_code == 404


def test_safe_key_accepts_report_and_data_docs_keys():
    assert plugin.safe_key("smoke-s1", "datadocs/static/styles/data_docs.css") == (
        "datadocs/static/styles/data_docs.css")
    assert plugin.safe_key("smoke-s1", "report/index.html") == "report/index.html"


def test_without_shared_storage_the_view_says_how_to_configure_it(auth, client, monkeypatch):
    for name in ("REGIONCHAOS_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    plugin._storage_cache.clear()
    try:
        response = client.get("/", headers=bearer(auth("admin")))
        assert response.status_code == 503 and "REGIONCHAOS_S3_ENDPOINT" in response.text
    finally:
        plugin._storage_cache.clear()


def test_the_plugin_registers_the_app_and_a_nav_entry():
    import regionchaos_plugin

    plugin_cls = regionchaos_plugin.RegionChaosPlugin
    assert plugin_cls.fastapi_apps == [{"app": plugin.app, "url_prefix": "/regionchaos", "name": "regionchaos runs"}]
    (view,) = plugin_cls.external_views
    assert view["destination"] == "nav" and view["url_route"] == "chaos"  # Airflow shows it at /plugin/chaos
    assert view["href"] == "regionchaos/"


def test_an_unreachable_storage_is_reported_not_crashed_on(auth, client, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("REGIONCHAOS_S3_ENDPOINT", f"http://127.0.0.1:{port}")
    plugin._storage_cache.clear()
    try:
        headers = bearer(auth("admin"))
        for path in ("/api/runs", "/", "/runs/smoke-s1/report/index.html"):
            response = client.get(path, headers=headers)
            assert response.status_code == 503 and "run storage unavailable" in response.text, path
    finally:
        plugin._storage_cache.clear()


# -- the storage hook the DAGs and the plugin share ------------------------------------------

def test_the_storage_hook_prefers_the_connection_then_the_environment(monkeypatch):
    from regionchaos_airflow.storage import RegionChaosStorageHook

    for name in ("REGIONCHAOS_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL",
                 "REGIONCHAOS_BUCKET", "REGIONCHAOS_PREFIX", "AIRFLOW_CONN_REGIONCHAOS_S3"):
        monkeypatch.delenv(name, raising=False)
    assert RegionChaosStorageHook().storage_config() is None  # nothing set: the embedded S3

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://aws-endpoint:9000")
    monkeypatch.setenv("REGIONCHAOS_BUCKET", "envbucket")
    config = RegionChaosStorageHook().storage_config()
    assert (config.endpoint_url, config.bucket, config.prefix) == ("http://aws-endpoint:9000", "envbucket", "runs")
    monkeypatch.setenv("REGIONCHAOS_S3_ENDPOINT", "http://minio:9000")
    assert RegionChaosStorageHook().storage_config().endpoint_url == "http://minio:9000"

    monkeypatch.setenv("AIRFLOW_CONN_REGIONCHAOS_S3", json.dumps({
        "conn_type": "aws", "login": "conn-key", "password": "conn-secret",
        "extra": {"endpoint_url": "http://conn-s3:9000", "bucket": "connbucket", "prefix": "chaos"}}))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "before")  # restored after the test, like the secret
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", os.environ.get("AWS_SECRET_ACCESS_KEY", "before"))
    config = RegionChaosStorageHook().storage_config(export_credentials=False)
    assert (config.endpoint_url, config.bucket, config.prefix) == ("http://conn-s3:9000", "connbucket", "chaos")
    assert os.environ["AWS_ACCESS_KEY_ID"] == "before"
    RegionChaosStorageHook().storage_config()  # in a task: the connection's keys for boto3 and Spark
    assert (os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]) == ("conn-key", "conn-secret")


def test_stored_html_is_served_sandboxed(configured, auth, client, storage):
    """A page planted in the bucket cannot run script on Airflow's origin."""
    planted = "<script>fetch('/api/v2/dags', {credentials: 'include'})</script>"
    storage.client().put_object(Bucket=storage.bucket, Key=f"{PREFIX}/smoke-s7-manual-1/report/planted.html",
                                Body=planted)
    response = client.get("/runs/smoke-s7-manual-1/report/planted.html", headers=bearer(auth("admin")))
    assert response.status_code == 200 and response.text == planted
    policy = [p.strip() for p in response.headers["content-security-policy"].split(";")]
    assert "sandbox" in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def test_newest_runs_first_not_alphabetical(configured, auth, client, storage):
    """Runs created in the order zzz, aaa: the newest (aaa) comes first, and limit=1 keeps it."""
    s3 = storage.client()
    for run_id in ("zzz-older-run", "aaa-newer-run"):
        s3.put_object(Bucket=storage.bucket, Key=f"{PREFIX}/{run_id}/summary.json",
                      Body=json.dumps(summary(run_id, "smoke", 1, "valid")))
        time.sleep(1.1)  # S3 LastModified has one-second resolution
    rows = client.get("/api/runs?q=er-run&limit=1", headers=bearer(auth("admin"))).json()["runs"]
    assert [r["run_id"] for r in rows] == ["aaa-newer-run"]
    both = client.get("/api/runs?q=er-run", headers=bearer(auth("admin"))).json()["runs"]
    assert [r["run_id"] for r in both] == ["aaa-newer-run", "zzz-older-run"]


@pytest.mark.parametrize("query", ["limit=0", "limit=-5", "limit=1000000", "q=" + "x" * 500])
def test_limits_are_bounded_per_request(configured, auth, client, query):
    assert client.get(f"/api/runs?{query}", headers=bearer(auth("admin"))).status_code == 422


# -- the trigger check (the plugin's root middleware) ----------------------------------------

class Downstream:
    """Stands in for Airflow's app behind the middleware: records what reaches it."""

    def __init__(self):
        self.bodies: list[bytes] = []

    async def __call__(self, scope, receive, send):
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"created"})


@pytest.fixture
def checked():
    from regionchaos_airflow.trigger_check import TriggerFormCheck

    downstream = Downstream()
    return TestClient(TriggerFormCheck(downstream)), downstream  # no lifespan: Downstream serves http only


TRIGGER = "/api/v2/dags/regionchaos_manual/dagRuns"


@pytest.mark.parametrize("rescale", ["3:0", "3:9999", "99:1", "3:2,3:1"])
def test_a_bad_form_is_refused_before_airflow_sees_it(auth, checked, rescale):
    client, downstream = checked
    response = client.post(TRIGGER, json={"conf": {"scenario": "smoke", "rescale": rescale}},
                           headers=bearer(auth("admin")))
    assert response.status_code == 400
    body = response.json()
    sentence, field = body["detail"].split("\n")  # a sentence about the run, then the field, as the form shows it
    assert sentence == "No chaos run was started: correct this field and trigger again."
    assert field.startswith("Rescale plan (rescale): ")
    assert [(e["param"], e["title"]) for e in body["errors"]] == [("rescale", "Rescale plan")]
    assert downstream.bodies == []  # Airflow never saw it: no run


def test_a_good_form_reaches_airflow_unchanged(auth, checked):
    client, downstream = checked
    raw = json.dumps({"conf": {"scenario": "rescale-4-2-1", "rescale": "3:2,7:1"}, "note": "x" * 70_000}).encode()
    response = client.post(TRIGGER, content=raw, headers={**bearer(auth("admin")), "Content-Type": "application/json"})
    assert (response.status_code, response.text) == (200, "created")
    assert downstream.bodies == [raw]


@pytest.mark.parametrize(
    "path, body, headers",
    [(TRIGGER, {"conf": {"rescale": "99:1"}}, None),  # no credentials: Airflow's 401
     (TRIGGER, {"conf": {"rescale": "99:1"}}, "viewer"),  # may not trigger: Airflow's 403
     (TRIGGER, {"conf": {"rescale": "99:1"}}, "forged"),
     ("/api/v2/dags/another_dag/dagRuns", {"conf": {"rescale": "99:1"}}, "admin"),  # not ours
     ("/api/v2/dags/regionchaos_manual/dagRuns/list", {"conf": {"rescale": "99:1"}}, "admin"),
     (TRIGGER, {"conf": "not an object"}, "admin"),  # Airflow's own 422
     (TRIGGER, ["a list", "not an object"], "admin")],
)
def test_what_is_not_the_check_s_to_answer_goes_to_airflow(auth, checked, path, body, headers):
    client, downstream = checked
    token = {"admin": auth("admin"), "viewer": auth("viewer"), "forged": auth("admin")[:-4] + "AAAA"}.get(headers)
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    response = client.post(path, content=raw, headers={"Content-Type": "application/json",
                                                       **(bearer(token) if token else {})})
    assert response.status_code == 200
    assert downstream.bodies == [raw]


def test_the_ui_cookie_gets_the_check_too(auth, checked):
    client, downstream = checked
    client.cookies.set("_token", auth("admin"))
    response = client.post(TRIGGER, json={"conf": {"parallelism": 1}})
    assert response.status_code == 400
    assert response.json()["detail"].split("\n")[1].startswith(
        "Parallelism (regions) (parallelism): 1 is fewer than the 2 TaskManagers")
    assert downstream.bodies == []


def test_backfills_of_a_checked_dag_are_checked(auth, checked):
    client, downstream = checked
    body = {"dag_id": "regionchaos_swarm", "from_date": "2025-01-01T00:00:00Z", "to_date": "2025-01-02T00:00:00Z",
            "dag_run_conf": {"seeds": 0}}
    for path in ("/api/v2/backfills", "/api/v2/backfills/dry_run"):
        response = client.post(path, json=body, headers=bearer(auth("admin")))
        assert response.status_code == 400 and response.json()["detail"] == (
            "No swarm was started: correct this field and trigger again.\nSeeds (seeds): must be at least 1, got 0")
    assert downstream.bodies == []
    good = {**body, "dag_run_conf": {"seeds": 3}}
    assert client.post("/api/v2/backfills", json=good, headers=bearer(auth("admin"))).status_code == 200


def test_the_plugin_registers_the_trigger_check():
    import regionchaos_plugin
    from regionchaos_airflow.trigger_check import TriggerFormCheck

    (entry,) = regionchaos_plugin.RegionChaosPlugin.fastapi_root_middlewares
    assert entry["middleware"] is TriggerFormCheck and entry["name"]


def test_studies_are_linked_and_served_sandboxed(configured, auth, client, storage):
    """A study (``regionchaos study``) beside the runs: linked from the view, its page and
    JSON served from storage, nothing else under studies/ served."""
    s3 = storage.client()
    doc = {"study_id": "study-0123456789", "cells": [{}, {}, {}], "errors": 0, "wall_seconds": 12.5,
           "command": "regionchaos study --seeds 1"}
    s3.put_object(Bucket=storage.bucket, Key="studies/study-0123456789/study.json", Body=json.dumps(doc))
    s3.put_object(Bucket=storage.bucket, Key="studies/study-0123456789/index.html", Body="<h1>the study</h1>")
    s3.put_object(Bucket=storage.bucket, Key="studies/study-0123456789/other.txt", Body=SECRET)
    headers = bearer(auth("viewer"))
    text = client.get("/", headers=headers).text
    item = text.split('<li data-study-id="study-0123456789">')[1].split("</li>")[0]
    assert 'href="/studies/study-0123456789/index.html"' in item and "3 runs" in item
    page = client.get("/studies/study-0123456789/index.html", headers=headers)
    assert page.status_code == 200 and page.text == "<h1>the study</h1>"
    assert "sandbox" in page.headers["content-security-policy"]
    assert client.get("/studies/study-0123456789/study.json", headers=headers).json()["wall_seconds"] == 12.5
    for path in ("/studies/study-0123456789/other.txt", "/studies/..%2Fsecret.txt/index.html",
                 "/studies/nope/index.html"):
        response = client.get(path, headers=headers)
        assert response.status_code == 404 and SECRET not in response.content
    assert client.get("/studies/study-0123456789/index.html").status_code == 401


def nightly_summary(dag_run: str, scenario: str, verdict: str, failed: tuple[str, ...], completed: int) -> dict:
    from regionchaos_airflow.runs import run_key

    run_id = run_key("nightly", dag_run, scenario)
    doc = summary(run_id, scenario, 1, verdict, failed)
    doc["stats"] = {"history_counts": {"triggered": 10, "global": completed - 2, "regional": 2}}
    return doc


@pytest.fixture(scope="module")
def nightlies(storage):
    """Three nightly DAG runs of two scenarios, a second apart; the middle one fails flip_bounds."""
    s3 = storage.client()
    plan = [("scheduled__2026-11-20T00:00:00+00:00", "valid", (), 9),
            ("scheduled__2026-11-21T00:00:00+00:00", "invalid", ("flip_bounds",), 6),
            ("scheduled__2026-11-22T00:00:00+00:00", "valid", (), 8)]
    for dag_run, verdict, failed, completed in plan:
        for scenario, v, f in (("smoke", verdict, failed), ("storage-faults", "valid", ())):
            doc = nightly_summary(dag_run, scenario, v, f, completed)
            s3.put_object(Bucket=storage.bucket, Key=f"{PREFIX}/{doc['run_id']}/summary.json", Body=json.dumps(doc))
        time.sleep(1.1)  # S3 LastModified has one-second resolution: the nightly runs are ordered in time
    return plan


def test_the_runs_view_filters_and_shows_a_column_per_invariant(configured, auth, client, nightlies):
    from regionchaos.scenario import INVARIANTS

    headers = bearer(auth("viewer"))
    text = client.get("/", headers=headers).text
    header = text.split('<table id="runs">')[1].split("</thead>")[0]
    assert all(f'title="{name}">{name}</th>' in header for name in INVARIANTS)
    bad = text.split('<tr data-run-id="nightly-scheduled-2026-11-21T00-00-00-00-00-smoke">')[1].split("</tr>")[0]
    assert 'class="inv fail"\n data-invariant="flip_bounds"' in bad
    assert 'class="inv pass"\n data-invariant="exactly_once_output"' not in bad  # not checked in this summary
    assert ">60%<" in bad  # 6 of 10 checkpoints completed, from the history counts
    invalid = client.get("/?verdict=invalid", headers=headers).text
    shown = re.findall(r'<tr data-run-id="([^"]+)"', invalid)
    assert shown and all(run_id in ("rescale-s3-manual-2", "nightly-scheduled-2026-11-21T00-00-00-00-00-smoke")
                         for run_id in shown), shown
    assert '<option value="invalid" selected>' in invalid
    smoke = re.findall(r'<tr data-run-id="[^"]+"><td><code>[^<]+</code></td>\n<td class="started">[^<]*</td>'
                       r'<td class="duration">[^<]*</td><td>([^<]*)</td>',
                       client.get("/?scenario=smoke&mutant=none", headers=headers).text)
    assert len(smoke) >= 3 and set(smoke) == {"smoke"}, smoke


def test_the_nightly_trend_is_drawn_from_the_nightly_runs_only(configured, auth, client, nightlies):
    from regionchaos_airflow.trend import nightly_points

    rows = client.get("/api/runs", headers=bearer(auth("admin"))).json()["runs"]
    points = nightly_points(rows)
    assert [p["key"] for p in points] == ["scheduled-2026-11-20T00-00-00-00-00", "scheduled-2026-11-21T00-00-00-00-00",
                                          "scheduled-2026-11-22T00-00-00-00-00"]
    assert [p["failures"] for p in points] == [{}, {"flip_bounds": 1}, {}]
    assert [p["success_rate"] for p in points] == [0.9, 0.6, 0.8]
    page = client.get("/", headers=bearer(auth("admin"))).text
    assert 'id="trend"' in page and "3 nightly DAG runs" in page
    chart = json.loads(html.unescape(page.split('<script type="application/json" id="trend-data">')[1].split("</script>")[0]))
    assert chart["labels"] == ["2026-11-20 00:00", "2026-11-21 00:00", "2026-11-22 00:00"]
    assert chart["invariants"] == [{"name": "flip_bounds", "failures": [0, 1, 0]}]  # per invariant that failed
    assert chart["success_rate"] == [90.0, 60.0, 80.0] and chart["runs"] == [2, 2, 2]
    table = page.split('<table id="trend-table"')[1].split("</table>")[0]  # the numbers under the chart
    assert re.findall(r"<tr data-key=\"[^\"]+\"><td>([^<]+)</td>", table) == [
        "2026-11-20 00:00", "2026-11-21 00:00", "2026-11-22 00:00"]  # labelled by the DAG run's date
    assert "flip_bounds (1)" in table and ">60%<" in table
    manual_only = client.get("/?q=manual", headers=bearer(auth("admin"))).text
    assert 'id="trend"' not in manual_only
    hint = manual_only.split('id="trend-hint">')[1].split("</p>")[0]
    assert "regionchaos_nightly" in hint and "No nightly DAG run" in hint


# -- hardening: no schema without login, unreadable bodies refused, CSP, unreadable
#    summaries, the size cap of served objects, run ids of any script --------------------------

@pytest.fixture
def own_prefix(storage, monkeypatch):
    """A fresh runs prefix for one test (the module's PREFIX keeps its exact set of runs);
    returns put(key relative to the prefix, body)."""
    prefix = f"{PREFIX}-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("REGIONCHAOS_S3_ENDPOINT", storage.endpoint_url)
    monkeypatch.setenv("REGIONCHAOS_BUCKET", storage.bucket)
    monkeypatch.setenv("REGIONCHAOS_PREFIX", prefix)
    plugin._storage_cache.clear()
    s3 = storage.client()
    yield lambda key, body: s3.put_object(Bucket=storage.bucket, Key=f"{prefix}/{key}",
                                          Body=body if isinstance(body, bytes) else body.encode())
    s3.close()
    plugin._storage_cache.clear()


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect"])
def test_no_api_schema_or_docs_answer_without_login(configured, auth, client, path):
    for headers in ({}, bearer("not-a-jwt"), bearer(auth("admin"))):
        response = client.get(path, headers=headers)
        assert response.status_code in (401, 403, 404), (path, headers, response.status_code)
        assert "openapi" not in response.text.lower() and "/api/runs" not in response.text


def asgi_post(app, path: str, messages: list[dict], headers: list[tuple[bytes, bytes]]) -> tuple[int, dict]:
    """POST through an ASGI app with exactly these receive() messages (what a test client cannot
    send: a body cut short, a Content-Length larger than the body); (status, JSON answer)."""
    import asyncio

    sent: list[dict] = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"", "headers": headers,
             "server": ("testserver", 80), "client": ("127.0.0.1", 1)}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


BAD_FORM = json.dumps({"conf": {"scenario": "smoke", "rescale": "99:1"}}).encode()


@pytest.mark.parametrize("raw, status, reason", [
    (BAD_FORM + b" " * (1 << 20), 413, "a trigger form may hold"),  # a bad form padded past the cap
    (BAD_FORM[:-1] + b', "note": "' + b"x" * (1 << 20) + b'"}', 413, "a trigger form may hold"),
    (b"not json", 400, "not JSON"),
    (b"", 400, "not JSON"),
    (BAD_FORM[:-2] + b', "x": "\xff"}}', 400, "not UTF-8"),
    (BAD_FORM.decode().encode("utf-16"), 400, "not UTF-8"),  # Airflow's parser would guess UTF-16
    (b"\xef\xbb\xbf" + BAD_FORM, 400, "not JSON"),  # a byte-order mark
    (b"[" * 100_000 + b"]" * 100_000, 400, "nested too deep"),
], ids=["padded-bad-form", "long-note", "not-json", "empty", "not-utf8", "utf16", "bom", "too-deep"])
def test_a_body_the_check_cannot_read_is_refused_never_passed_on(auth, checked, raw, status, reason):
    client, downstream = checked
    response = client.post(TRIGGER, content=raw, headers={**bearer(auth("admin")), "Content-Type": "application/json"})
    assert response.status_code == status, response.text[:300]
    assert reason in response.json()["detail"] and response.json()["errors"] == []
    assert downstream.bodies == []  # Airflow never saw it: no run


def test_a_chunked_body_past_the_cap_is_refused(auth, checked):
    client, downstream = checked
    chunks = iter([BAD_FORM[:-1], b' , "pad": "'] + [b"x" * 65536] * 17 + [b'"}'])  # 1.06 MiB, no Content-Length
    response = client.post(TRIGGER, content=chunks, headers={**bearer(auth("admin")), "Content-Type": "application/json"})
    assert response.status_code == 413 and downstream.bodies == []


def test_a_declared_length_past_the_cap_or_a_body_cut_short_is_refused(auth):
    from regionchaos_airflow.trigger_check import TriggerFormCheck

    downstream = Downstream()
    check = TriggerFormCheck(downstream)
    headers = [(b"authorization", f"Bearer {auth('admin')}".encode()), (b"content-type", b"application/json")]
    status, answer = asgi_post(check, TRIGGER, [{"type": "http.request", "body": BAD_FORM, "more_body": False}],
                               headers + [(b"content-length", b"2000000")])
    assert status == 413 and "2,000,000 bytes, over the 1,048,576" in answer["detail"]
    status, answer = asgi_post(check, TRIGGER, [{"type": "http.request", "body": BAD_FORM[:10], "more_body": True}],
                               headers)  # then the client disconnects
    assert status == 400 and "cut short" in answer["detail"]
    assert downstream.bodies == []
    status, _ = asgi_post(check, TRIGGER, [{"type": "http.request", "body": BAD_FORM[:10], "more_body": True},
                                           {"type": "http.request", "body": BAD_FORM[10:], "more_body": False}], headers)
    assert status == 400  # the same form in two pieces: read whole, and its bad plan refused as before
    assert downstream.bodies == []


def csp(response) -> dict[str, list[str]]:
    """The Content-Security-Policy of a response: directive -> its sources."""
    policy = {}
    for part in response.headers["content-security-policy"].split(";"):
        if part.strip():
            name, *sources = part.split()
            policy[name] = sources
    return policy


def test_the_runs_view_has_a_strict_content_security_policy(configured, auth, client, nightlies):
    headers = bearer(auth("viewer"))
    pages = [client.get("/", headers=headers), client.get("/?q=manual", headers=headers)]  # with and without the trend
    nonces = []
    for page in pages:
        assert page.status_code == 200 and page.headers["x-content-type-options"] == "nosniff"
        policy = csp(page)
        assert policy["default-src"] == ["'none'"] and "img-src" not in policy  # nothing loads but what is nonce'd
        assert policy["frame-ancestors"] == ["'self'"] and policy["base-uri"] == ["'none'"]
        assert policy["form-action"] == ["'self'"]
        assert not any("unsafe" in source for sources in policy.values() for source in sources)
        (nonce,) = [s[len("'nonce-"):-1] for s in policy["style-src"] if s.startswith("'nonce-")]
        assert policy["script-src"] == [f"'nonce-{nonce}'"]  # the page's own scripts, nothing else
        assert re.findall(r"<style nonce=\"([^\"]+)\">", page.text) == [nonce]  # the page's one style block
        scripts = re.findall(r"<script([^>]*)>", page.text)
        run = [attrs for attrs in scripts if 'type="application/json"' not in attrs]  # data is not run
        assert run and all(f'nonce="{nonce}"' in attrs for attrs in run), scripts
        assert all(src.startswith("/public/assets/") for src in re.findall(r'<script [^>]*src="([^"]+)"', page.text))
        assert " style=" not in page.text and "<img" not in page.text
        nonces.append(nonce)
    assert '<canvas id="trend"' in pages[0].text and 'src="/public/assets/chart.umd.min.js"' in pages[0].text
    assert "chart.umd.min.js" not in pages[1].text  # no trend, no chart library
    assert nonces[0] != nonces[1] and len(nonces[0]) >= 16  # a new nonce per response
    library = client.get("/public/assets/chart.umd.min.js")  # an open-source library file: no login
    assert library.status_code == 200 and library.headers["content-type"].startswith("text/javascript")
    assert library.text.startswith("/*!\n * Chart.js v4.")
    for other in ("SOURCES.md", "licenses", "..%2Fapp.py", ".hidden.js", "missing.js"):
        assert client.get(f"/public/assets/{other}").status_code == 404, other


def test_every_response_says_nosniff_and_has_a_policy(configured, auth, client, monkeypatch):
    responses = [client.get("/api/runs", headers=bearer(auth("admin"))), client.get("/api/runs"),
                 client.get("/runs/smoke-s7-manual-1/report/nope.html", headers=bearer(auth("admin")))]
    monkeypatch.delenv("REGIONCHAOS_S3_ENDPOINT")
    plugin._storage_cache.clear()
    unconfigured = client.get("/", headers=bearer(auth("admin")))
    assert [r.status_code for r in responses + [unconfigured]] == [200, 401, 404, 503]
    for response in responses + [unconfigured]:
        assert response.headers["x-content-type-options"] == "nosniff"
        assert csp(response)["default-src"] == ["'none'"] and csp(response)["frame-ancestors"] == ["'self'"]
    (nonce,) = [s[len("'nonce-"):-1] for s in csp(unconfigured)["style-src"]]
    assert f"<style nonce='{nonce}'>" in unconfigured.text


def test_reports_keep_their_sandbox_policy(configured, auth, client):
    report = client.get("/runs/smoke-s7-manual-1/report/index.html", headers=bearer(auth("admin")))
    assert report.status_code == 200 and report.text == "<h1>report of smoke-s7-manual-1</h1>"
    assert csp(report) == {"sandbox": [], "frame-ancestors": ["'self'"]}
    assert report.headers["x-content-type-options"] == "nosniff"


UNREADABLE = {
    "not-json": (b"{not json", "summary.json is not JSON"),
    "a-list": (b"[]", "summary.json is not a JSON object but a list"),
    "empty-object": (b"{}", "summary.json field run_id: Field required"),
    "bad-verdict": (None, "summary.json field verdict: Input should be 'valid', 'invalid' or 'unknown'"),
    "bad-checks": (None, "summary.json field checks: Input should be a valid list"),
    "bad-stats": (None, "summary.json field stats: Input should be a valid dictionary"),
    "not-utf8": (b'{"run_id": "\xff"}', "summary.json is not UTF-8 text"),
    "too-deep": (b"[" * 2400 + b"]" * 2400, "summary.json is JSON nested too deep"),
    "too-large": (None, "bytes, more than the 6,000 the view reads"),
}


def test_an_unreadable_summary_is_shown_as_such_and_the_rest_listed(own_prefix, auth, client, monkeypatch):
    monkeypatch.setattr(plugin, "MAX_SUMMARY_BYTES", 6000)
    own_prefix("good-run/summary.json", json.dumps(summary("good-run", "smoke", 1, "valid")))
    own_prefix("good-run/report/index.html", "<h1>good</h1>")
    for run_id, (body, _) in UNREADABLE.items():
        doc = summary(run_id, "smoke", 2, "invalid", ("no_loss",))
        if run_id == "bad-verdict":
            doc["verdict"] = "great"
        elif run_id == "bad-checks":
            doc["checks"] = "all passed"
        elif run_id == "bad-stats":
            doc["stats"] = [1, 2]
        elif run_id == "too-large":
            doc["pad"] = "x" * 6000
        own_prefix(f"{run_id}/summary.json", body if body is not None else json.dumps(doc))
    headers = bearer(auth("viewer"))
    response = client.get("/api/runs", headers=headers)
    assert response.status_code == 200
    rows = {row["run_id"]: row for row in response.json()["runs"]}
    assert set(rows) == {"good-run", *UNREADABLE}
    assert rows["good-run"]["verdict"] == "valid" and rows["good-run"]["scenario"] == "smoke"
    for run_id, (_, reason) in UNREADABLE.items():
        assert rows[run_id]["verdict"] == "unreadable" and reason in rows[run_id]["error"], rows[run_id]
    page = client.get("/", headers=headers)
    assert page.status_code == 200
    row = page.text.split('<tr data-run-id="not-json">')[1].split("</tr>")[0]
    assert ">unreadable<" in row and "summary.json is not JSON" in row
    good = page.text.split('<tr data-run-id="good-run">')[1].split("</tr>")[0]
    assert ">valid<" in good


def test_an_unreadable_study_does_not_break_the_view(configured, auth, client, storage):
    s3 = storage.client()
    key = f"studies/study-broken-{uuid.uuid4().hex[:6]}/study.json"
    s3.put_object(Bucket=storage.bucket, Key=key, Body=b"[]")
    try:
        page = client.get("/?q=no-such-run", headers=bearer(auth("viewer")))  # the studies, no runs to draw
        assert page.status_code == 200
        item = page.text.split(f'<li data-study-id="{key.split("/")[1]}">')[1].split("</li>")[0]
        assert "unreadable: study.json is not an object with a list of cells" in item
    finally:
        s3.delete_object(Bucket=storage.bucket, Key=key)


def test_a_stored_object_over_the_cap_is_refused_and_one_under_it_streamed(own_prefix, auth, client, monkeypatch):
    monkeypatch.setattr(plugin, "MAX_SERVED_BYTES", 2500)
    monkeypatch.setattr(plugin, "CHUNK_BYTES", 1000)  # three pieces
    fits = bytes(range(256)) * 9 + b"<p>end</p>" * 19  # 2,494 bytes
    own_prefix("r1/summary.json", json.dumps(summary("r1", "smoke", 1, "valid")))
    own_prefix("r1/report/fits.html", fits)
    own_prefix("r1/report/big.html", b"<p>" + b"x" * 2500 + b"</p>")
    headers = bearer(auth("admin"))
    served = client.get("/runs/r1/report/fits.html", headers=headers)
    assert served.status_code == 200 and served.content == fits
    assert served.headers["content-length"] == str(len(fits)) and "sandbox" in csp(served)
    big = client.get("/runs/r1/report/big.html", headers=headers)
    assert big.status_code == 413 and b"x" * 100 not in big.content
    assert big.json()["detail"] == (
        "big.html is 2,507 bytes, more than the 2,500 bytes the runs view serves: read "
        f"s3://{plugin.run_storage().bucket}/{plugin.run_storage().prefix}/r1/report/big.html with an S3 client instead")


NAMED = ["smoke-é-1", "漢字-ラン", "run-<i>&\"'?#x", "Ωmega_2.b"]
NOT_LISTED = ["bidi-\u202ex", "zero\u200bwidth", "tab\tname", ".hidden", " lead", "pct%2e%2e"]


def test_runs_of_any_script_are_listed_escaped_and_served(own_prefix, auth, client):
    import html as html_module
    from urllib.parse import quote

    for run_id in NAMED + NOT_LISTED:
        own_prefix(f"{run_id}/summary.json", json.dumps(summary(run_id, "smoke", 1, "valid")))
        own_prefix(f"{run_id}/report/index.html", f"<h1>report of {run_id}</h1>")
    headers = bearer(auth("viewer"))
    rows = client.get("/api/runs", headers=headers).json()["runs"]
    assert sorted(row["run_id"] for row in rows) == sorted(NAMED)
    by_id = {row["run_id"]: row for row in rows}
    page = client.get("/", headers=headers).text
    rows_shown = {html_module.unescape(run_id): row for run_id, row in
                  re.findall(r'<tr data-run-id="([^"]*)">(.*?)</tr>', page, flags=re.S)}
    assert sorted(rows_shown) == sorted(NAMED)
    for run_id in NAMED:
        row = rows_shown[run_id]
        assert html_module.unescape(re.search(r"<code>([^<]*)</code>", row)[1]) == run_id and ">valid<" in row
        href = f"/runs/{quote(run_id, safe='')}/report"
        assert href in [html_module.unescape(h) for h in re.findall(r'href="([^"]*)"', row)]
        assert by_id[run_id]["report_view"] == "/regionchaos" + href
        assert client.get(href, headers=headers).status_code == 200  # the report's page, the report framed
        report = client.get(href + "/index.html", headers=headers)
        assert report.status_code == 200 and report.text == f"<h1>report of {run_id}</h1>"
    assert "<i>" not in page and "&lt;i&gt;" in page
    for run_id in NOT_LISTED:
        assert client.get(f"/runs/{quote(run_id, safe='')}/report/index.html", headers=headers).status_code == 404


@pytest.mark.parametrize("run_id, listed", [
    ("smoke-s7-manual-1", True), ("smoke-é", True), ("漢字", True), ("a b", True), ("a..b", True),
    ("..", False), (".", False), ("", False), ("a/b", False), ("a\\b", False), ("a%2Fb", False),
    ("x" * 255, True), ("x" * 256, False), ("a\u202eb", False), ("a\u200db", False), ("a\x00b", False),
    ("a\nb", False), ("a\u00a0b", False), (" a", False), ("a\ud800b", False), ("a\ue000b", False),
])
def test_listable_run_ids(run_id, listed):
    from regionchaos_airflow.runs import listable_run_id

    assert listable_run_id(run_id) is listed


# -- the runs view: times, the DAG run, evidence, the report's own address, swarms ----------------

def test_a_run_shows_its_start_duration_and_dag_run_and_links_its_evidence(own_prefix, auth, client, storage):
    done = summary("smoke-s1-manual-9", "smoke", 1, "invalid", ("flip_bounds",))
    own_prefix("smoke-s1-manual-9/summary.json", json.dumps(done))
    # the DAG run that made it: stored beside the summary by the run's task (airflow.json), never in it
    own_prefix("smoke-s1-manual-9/airflow.json", json.dumps(
        {"dag_id": "regionchaos_manual", "dag_run_id": "manual__2026-11-24T10:00:00+00:00", "note": "**invalid**"}))
    # the wall-clock seconds where runs write them: beside the summary, not in it (docs/ARTIFACTS.md)
    own_prefix("smoke-s1-manual-9/timing/wall_seconds.json", json.dumps(
        {"run_id": "smoke-s1-manual-9", "stats": {"wall_seconds": {"emulate": 61.5, "validate": 20.0, "report": 3.5}}}))
    own_prefix("smoke-s1-manual-9/report/index.html", "<h1>report</h1>")
    cli = summary("smoke-s1-cli", "smoke", 1, "valid")  # no Airflow DAG run: no link
    own_prefix("smoke-s1-cli/summary.json", json.dumps(cli))
    older = summary("smoke-s2-older", "smoke", 2, "valid")  # written before timing/: the seconds in the summary
    older["stats"] = {"wall_seconds": {"emulate": 10.0, "validate": 2.5}}
    own_prefix("smoke-s2-older/summary.json", json.dumps(older))
    headers = bearer(auth("viewer"))
    rows = {r["run_id"]: r for r in client.get("/api/runs", headers=headers).json()["runs"]}
    row = rows["smoke-s1-manual-9"]
    assert row["duration_s"] == 85.0
    assert rows["smoke-s2-older"]["duration_s"] == 12.5
    report = client.get("/runs/smoke-s1-manual-9/report", headers=headers).text
    assert '<span id="duration">1 min 25 s</span>' in report
    from datetime import datetime
    started, ended = datetime.fromisoformat(row["started"]), datetime.fromisoformat(row["modified"])
    assert (ended - started).total_seconds() == 85.0  # the summary was written as the run ended
    assert row["dag_run"] == "/dags/regionchaos_manual/runs/manual__2026-11-24T10%3A00%3A00%2B00%3A00"
    assert rows["smoke-s1-cli"]["dag_run"] is None and rows["smoke-s1-cli"]["duration_s"] is None
    page = client.get("/", headers=headers).text
    shown = page.split('<tr data-run-id="smoke-s1-manual-9">')[1].split("</tr>")[0]
    assert f'<a class="dag-run" href="{row["dag_run"]}"' in shown
    assert '<td class="duration">1 min 25 s</td>' in shown and started.strftime("%Y-%m-%d %H:%M:%S UTC") in shown
    cell = re.search(r'data-invariant="flip_bounds"[^>]*>(.*?)</td>', shown, flags=re.S)[1]
    assert cell == '<a class="evidence" href="/runs/smoke-s1-manual-9/report?invariant=flip_bounds">✗</a>'
    other = page.split('<tr data-run-id="smoke-s1-cli">')[1].split("</tr>")[0]
    assert "dag-run" not in other and "evidence" not in other


def test_an_opened_report_has_an_address_of_its_own(own_prefix, auth, client):
    done = summary("smoke-s1-manual-9", "smoke", 1, "invalid", ("flip_bounds",))
    done["airflow"] = {"dag_id": "regionchaos_manual", "dag_run_id": "manual__1"}  # as runs before airflow.json
    own_prefix("smoke-s1-manual-9/summary.json", json.dumps(done))
    headers = bearer(auth("viewer"))
    page = client.get("/runs/smoke-s1-manual-9/report?invariant=flip_bounds", headers=headers)
    assert page.status_code == 200
    policy = csp(page)
    assert policy["frame-src"] == ["'self'"] and policy["default-src"] == ["'none'"]
    frame = re.search(r'<iframe id="report"[^>]* src="([^"]+)"', page.text)[1]
    assert frame == "/runs/smoke-s1-manual-9/report/index.html#inv-flip_bounds"  # at the failed invariant's row
    assert 'href="/runs/smoke-s1-manual-9/datadocs?suite=flip_bounds"' in page.text  # and its suite's Data Docs
    # Airflow's page of the DAG run opens in the top window, not in the plugin's frame
    assert '<a id="dag-run" href="/dags/regionchaos_manual/runs/manual__1" target="_top">' in page.text
    # to share: the report's one address, inside Airflow's UI (what the extra link and the note use)
    assert 'value="http://testserver/plugin/chaos/regionchaos/runs/smoke-s1-manual-9/report?invariant=flip_bounds"' \
        in page.text
    assert client.get("/runs/smoke-s1-manual-9/report").status_code == 401
    assert client.get("/runs/..%2Fx/report", headers=headers).status_code == 404


def test_swarm_reports_are_listed_and_served_sandboxed(configured, auth, client, storage):
    s3 = storage.client()
    swarm_id = f"swarm-view-{uuid.uuid4().hex[:6]}"
    s3.put_object(Bucket=storage.bucket, Key=f"swarms/{swarm_id}/report/index.html", Body=b"<h1>swarm</h1>")
    s3.put_object(Bucket=storage.bucket, Key=f"swarms/{swarm_id}/summary.json", Body=json.dumps(
        {"scenario": "smoke", "mutant": None, "verdicts": {"valid": 8, "invalid": 2, "unknown": 0}}).encode())
    s3.close()
    headers = bearer(auth("viewer"))
    page = client.get("/", headers=headers).text
    item = page.split(f'<li data-swarm-id="{swarm_id}">')[1].split("</li>")[0]
    assert f'href="/swarms/{swarm_id}/report/index.html"' in item
    assert "8 valid" in item and '<span class="fail">2 invalid</span>' in item
    report = client.get(f"/swarms/{swarm_id}/report/index.html", headers=headers)
    assert report.status_code == 200 and report.text == "<h1>swarm</h1>" and "sandbox" in csp(report)
    assert client.get(f"/swarms/{swarm_id}/summary.json", headers=headers).status_code == 404
    assert client.get(f"/swarms/{swarm_id}/report/index.html").status_code == 401


def test_an_exploration_is_listed_like_a_swarm_with_its_proof(configured, auth, client, storage):
    """`regionchaos explore` keeps its summary and report under swarms/ (`regionchaos.explore.report`): listed
    with its representatives' verdicts and its proof statement, not its per-invariant verdicts as counts."""
    s3 = storage.client()
    explore_id = f"explore-view-{uuid.uuid4().hex[:6]}"
    proof = "flip_bounds holds for every N: the capped abstraction reached a fixpoint after 4 checkpoints"
    s3.put_object(Bucket=storage.bucket, Key=f"swarms/{explore_id}/report/index.html", Body=b"<h1>exploration</h1>")
    s3.put_object(Bucket=storage.bucket, Key=f"swarms/{explore_id}/summary.json", Body=json.dumps(
        {"scenario": "forced-global-tier2", "mutant": None, "verdicts": {"flip_bounds": "valid"},
         "representative_verdicts": {"valid": 16, "invalid": 1, "unknown": 0}, "proof_statement": proof}).encode())
    s3.close()
    page = client.get("/", headers=bearer(auth("viewer"))).text
    item = page.split(f'<li data-swarm-id="{explore_id}">')[1].split("</li>")[0]
    assert "forced-global-tier2" in item and "16 valid" in item and '<span class="fail">1 invalid</span>' in item
    assert f'<span class="proof">exploration: {proof}</span>' in item
