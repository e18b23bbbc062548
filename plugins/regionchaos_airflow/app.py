"""The plugin's FastAPI app: runs listed from storage, their reports served from storage.

Mounted by the api-server at ``/regionchaos`` (see ``plugins/regionchaos_plugin.py``); inside
Airflow's UI each page has the address `runs.in_airflow` gives (``/plugin/chaos/regionchaos/...``).
In:  ``s3://BUCKET/<prefix>/*/summary.json`` of the shared run storage (the
     ``regionchaos_s3`` connection or ``REGIONCHAOS_S3_ENDPOINT``, see `storage`).
Out: ``GET /``               an HTML table of runs: run id (linked to its DAG run, in Airflow's top
                             window, when the summary names it), start time, duration, scenario,
                             seed, mutant, verdict, failed invariants (each linked to its evidence),
                             links to report and Data Docs; the nightly trend (`trend`: a chart per
                             invariant, drawn in the page with Chart.js, its numbers in a table; a
                             hint without nightly runs); the newest studies and swarms
     ``GET /api/runs``       the same rows as JSON
     ``GET /runs/{run_id}/report``  the report's own address (shareable): the run's facts and
                             links above its stored report, framed; ``?invariant=NAME`` opens it at
                             that invariant's row and links its suite's Data Docs page
     ``GET /runs/{run_id}/datadocs``  the Data Docs' own address, the same way: the run's facts above
                             its Data Docs rendered (scripts on, in a sandbox off Airflow's origin,
                             at a capability address, `regionchaos_airflow.datadocs`);
                             ``?suite=NAME``: that suite's newest validation page
     ``GET /runs/{run_id}/{key}``  one object of a run: ``report/``, ``datadocs/`` (a page: a
                             redirect to its capability address), ``validation/``,
                             ``summary.json``, ``scenario.json`` only
     ``GET /studies/{study_id}/{key}``  a global-vs-regional study (``regionchaos study``,
                             ``s3://BUCKET/studies/STUDY_ID/``): ``index.html``, ``study.json``
     ``GET /swarms/{swarm_id}/report/index.html``  a swarm's report (``s3://BUCKET/swarms/``)
     ``GET /public/assets/{name}``  without login: the library of the plugin's pages (Chart.js,
                             vendored under ``static/vendor/``)
     ``GET /public/dd/{token}/{run_id}/datadocs/...``  without login, with a capability for that
                             run (`datadocs.sign`): its Data Docs as stored (written to ask no other
                             host, `regionchaos.datadocs`)

Every endpoint needs an authenticated Airflow user (the api-server's JWT: bearer header
or the UI's ``_token`` cookie, checked by Airflow's own auth manager); the app has no
OpenAPI schema, ``/docs`` or ``/redoc``. Keys are whitelisted segment by segment, so nothing
outside ``<prefix>/<run_id>/`` is served: ``..``, absolute paths, backslashes and (double)
percent-encoded traversal are refused. Run ids are the folder names under the prefix that
`runs.listable_run_id` accepts (non-ASCII ones too), percent-encoded in every link.

Limits: a stored object over `MAX_SERVED_BYTES` is refused (413, saying where to read it
instead), smaller ones are streamed; a ``summary.json`` over `MAX_SUMMARY_BYTES`, not JSON,
or without the fields the view reads (`runs.summary_problem`) makes its run ``unreadable``
(listed, with the reason), never the whole view fail.

Headers: every response carries ``X-Content-Type-Options: nosniff`` and a
Content-Security-Policy: the plugin's own pages `PAGE_CSP` (nothing but their nonce'd scripts
and style; framed by Airflow's UI only; a run's report and Data Docs pages may frame this
server: `REPORT_PAGE_CSP`), stored objects `STORED_CSP` (a sandbox: no script, a unique
origin), Data Docs pages `datadocs.DATADOCS_CSP` (scripts from this server only, in a sandbox
without allow-same-origin), anything else `DEFAULT_CSP`.
"""

from __future__ import annotations

import functools
import html
import json
import mimetypes
import re
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import MutableHeaders

from regionchaos_airflow.runs import (AIRFLOW_KEY, PLUGIN_PREFIX, RUN_ID_RE, dag_run_link, duration_text, in_airflow,
                                      listable_run_id, result_row, run_times, summary_problem, view_links)

SERVED_ROOTS = ("report", "datadocs", "validation", "summary.json", "scenario.json")
STUDY_KEYS = ("index.html", "study.json")
STUDIES_PREFIX = "studies"  # regionchaos.study.STUDIES_PREFIX: beside the runs, at the bucket's top
STUDIES_LISTED = 10
SWARMS_PREFIX = "swarms"  # regionchaos.swarm.SWARMS_PREFIX: beside the runs, at the bucket's top
SWARMS_LISTED = 10
VENDOR_DIR = Path(__file__).resolve().parent / "static" / "vendor"  # the plugin pages' own libraries (SOURCES.md)
_SEGMENT_RE = re.compile(r"^[A-Za-z0-9_@+=,-][A-Za-z0-9._@+=,-]{0,254}$")
DEFAULT_LIMIT = 500
MAX_LIMIT = 2000  # rows one request may ask for
MAX_SCAN = 10_000  # run ids one request looks at (one HEAD each)
MAX_SERVED_BYTES = 50 << 20  # a stored object larger than this is refused (413), not read into the api-server
MAX_SUMMARY_BYTES = 4 << 20  # a summary.json or study.json larger than this is not read (unreadable)
CHUNK_BYTES = 1 << 20  # a served object is streamed in pieces of this size
# Stored HTML (reports, Data Docs) is data from the bucket: it runs in a sandbox (a unique origin,
# no script), so a file planted there cannot act on Airflow's origin with the user's session.
STORED_CSP = "sandbox; frame-ancestors 'self'"
# The plugin's own pages: their scripts (links into Airflow's top window, the trend chart and its library) and
# their one <style> by nonce, nothing else loaded, the filter form to the page itself; framed by Airflow's
# UI (same origin) and nobody else.
PAGE_CSP = ("default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; form-action 'self'; "
            "frame-ancestors 'self'; base-uri 'none'")
# The report's own page: the same, plus the run's stored report in a frame (itself sandboxed).
REPORT_PAGE_CSP = PAGE_CSP + "; frame-src 'self'"
DEFAULT_CSP = "default-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
                    "X-Frame-Options": "SAMEORIGIN", "Content-Security-Policy": DEFAULT_CSP}
STORAGE_TTL_S = 60.0
_bearer = HTTPBearer(auto_error=False)


async def require_user(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)
) -> Any:
    """The Airflow user of this request (401 without a valid token, 403 without access)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
    from airflow.api_fastapi.core_api.security import get_user

    user = await get_user(request, _oauth_token=None, bearer_credentials=credentials)
    if not get_auth_manager().is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise HTTPException(status_code=403, detail="Forbidden")
    return user


class SecurityHeaders:
    """ASGI middleware: `SECURITY_HEADERS` on every response of the app (401s and 404s
    included), each unless the response set it itself (pages and stored objects set their CSP)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


app = FastAPI(
    title="regionchaos runs",
    description="Chaos runs of regional checkpoints, read from the run storage.",
    dependencies=[Depends(require_user)],
    openapi_url=None,  # the schema, /docs and /redoc would answer without the app's dependencies (no login)
    docs_url=None,
    redoc_url=None,
)
app.add_middleware(SecurityHeaders)

# Served without login (mounted below the app, outside its dependencies): open-source library
# files, and a run's Data Docs behind a capability (`datadocs.check`) instead of the cookie,
# which a sandboxed page's own requests do not carry (see `regionchaos_airflow.datadocs`).
public = FastAPI(title="regionchaos public assets", openapi_url=None, docs_url=None, redoc_url=None)


ASSET_HEADERS = {"Cache-Control": "public, max-age=86400",
                 "Content-Security-Policy": "default-src 'none'; frame-ancestors 'self'"}


@public.get("/assets/{name}")
def public_asset(name: str) -> Response:
    """A library file of the plugin's own pages (``static/vendor/NAME``, SOURCES.md beside it)."""
    from fastapi.responses import FileResponse

    path = (VENDOR_DIR / name).resolve()
    if name.startswith(".") or path.parent != VENDOR_DIR or not path.is_file() or path.suffix != ".js":
        raise HTTPException(status_code=404, detail="no such asset")
    return FileResponse(path, media_type="text/javascript", headers=ASSET_HEADERS)


@public.get("/dd/{token}/{run_id}/{key:path}")
def public_datadocs(token: str, run_id: str, key: str) -> Response:
    """One object of a run's ``datadocs/`` for the holder of a token `datadocs.sign` made for
    that run (404 otherwise, as for a missing object), as stored: `regionchaos.datadocs` wrote the
    site to load nothing from other hosts. Pages are served with `datadocs.DATADOCS_CSP`."""
    from regionchaos_airflow import datadocs

    key = safe_key(run_id, key)
    if not key.startswith("datadocs/") or not datadocs.check(token, run_id):
        raise HTTPException(status_code=404, detail="no such object (or the link has expired: open it from the runs view)")
    if key.endswith(".html"):
        return _stored(lambda config: config.run_prefix(run_id) + key, "no such object", csp=datadocs.DATADOCS_CSP)
    # a page's scripts, styles and fonts; a font is fetched in CORS mode, and the sandboxed page's origin is opaque
    return _stored(lambda config: config.run_prefix(run_id) + key, "no such object",
                   headers={"Access-Control-Allow-Origin": "*"})


app.mount("/public", public)

_storage_cache: dict[str, Any] = {}


def run_storage():
    """The shared StorageConfig (cached for a minute), or None if none is configured."""
    now = time.monotonic()
    if _storage_cache.get("until", 0.0) < now:
        from regionchaos_airflow.storage import RegionChaosStorageHook

        _storage_cache["config"] = RegionChaosStorageHook().storage_config(export_credentials=False)
        _storage_cache["until"] = now + STORAGE_TTL_S
    return _storage_cache["config"]


def safe_key(run_id: str, key: str) -> str:
    """`key` if it is a servable key of run `run_id`; 404 otherwise (never a path outside)."""
    if not listable_run_id(run_id):
        raise HTTPException(status_code=404, detail="no such run")
    segments = key.split("/")
    if not key or any(not _SEGMENT_RE.match(s) for s in segments):
        raise HTTPException(status_code=404, detail="no such object")
    if segments[0] not in SERVED_ROOTS or (segments[0].endswith(".json") and len(segments) > 1):
        raise HTTPException(status_code=404, detail="not served")
    return key


def list_runs(config, *, limit: int = DEFAULT_LIMIT, contains: str = "") -> list[dict[str, Any]]:
    """Result rows of the newest ``limit`` runs under the prefix, newest first: by the time their
    summary was written (runs without a summary yet are listed as ``running``, newest of all),
    never by the alphabetical order of their ids. At most `MAX_SCAN` run ids are looked at."""
    client = config.client()
    top = config.prefix.strip("/") + "/"
    run_ids: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(
        Bucket=config.bucket, Prefix=top, Delimiter="/", PaginationConfig={"MaxItems": MAX_SCAN}
    ):
        for common in page.get("CommonPrefixes", []):
            run_id = common["Prefix"][len(top):].removesuffix("/")
            if listable_run_id(run_id) and contains in run_id:
                run_ids.append(run_id)

    def modified(run_id: str) -> tuple[str, str]:
        try:
            head = client.head_object(Bucket=config.bucket, Key=f"{top}{run_id}/summary.json")
        except client.exceptions.ClientError:
            return ("~running", run_id)  # sorts after every timestamp: still running is newest
        return (head["LastModified"].isoformat(), run_id)

    def fetch(run_id: str) -> dict[str, Any]:
        try:
            doc, modified, problem = _read_json(client, config.bucket, f"{top}{run_id}/summary.json")
        except client.exceptions.NoSuchKey:
            return {"run_id": run_id, "verdict": "running", "failed": [], "modified": ""}
        problem = problem or summary_problem(doc)
        if problem is not None:  # shown as such; the other runs are listed as usual
            return {"run_id": run_id, "verdict": "unreadable", "error": problem, "failed": [], "checks": {},
                    "modified": modified, **view_links(run_id)}
        timing = read_timing(client, config.bucket, f"{top}{run_id}/")
        row = result_row(doc, read_beside(client, config.bucket, f"{top}{run_id}/", AIRFLOW_KEY))
        row.update(run_id=run_id, modified=modified, **view_links(run_id), **run_times(doc, modified, timing))
        return row

    with ThreadPoolExecutor(max_workers=16) as pool:
        newest = sorted(pool.map(modified, run_ids), reverse=True)[:limit]
        rows = list(pool.map(fetch, [run_id for _, run_id in newest]))
    client.close()
    return rows


def list_studies(config, *, limit: int = STUDIES_LISTED) -> list[dict[str, Any]]:
    """The newest ``limit`` studies (``studies/STUDY_ID/study.json``), newest first: id, when,
    runs, wall seconds and the command that made it."""
    client = config.client()
    heads = []
    for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=config.bucket, Prefix=f"{STUDIES_PREFIX}/", PaginationConfig={"MaxItems": MAX_SCAN}):
        for obj in page.get("Contents", []):
            parts = obj["Key"].split("/")
            if len(parts) == 3 and parts[2] == "study.json" and RUN_ID_RE.match(parts[1]):
                heads.append((obj["LastModified"].isoformat(), parts[1]))
    rows = []
    for modified, study_id in sorted(heads, reverse=True)[:limit]:
        try:
            doc, _, problem = _read_json(client, config.bucket, f"{STUDIES_PREFIX}/{study_id}/study.json")
        except client.exceptions.NoSuchKey:
            continue  # deleted since it was listed
        if problem is None and not (isinstance(doc, dict) and isinstance(doc.get("cells", []), list)):
            problem = "study.json is not an object with a list of cells"
        if problem is not None:
            rows.append({"study_id": study_id, "modified": modified, "unreadable": problem})
            continue
        rows.append({"study_id": study_id, "modified": modified, "runs": len(doc.get("cells", [])),
                     "errors": doc.get("errors"), "wall_seconds": doc.get("wall_seconds"), "command": doc.get("command")})
    client.close()
    return rows


def list_swarms(config, *, limit: int = SWARMS_LISTED) -> list[dict[str, Any]]:
    """The newest ``limit`` swarms with a report (``swarms/SWARM_ID/report/index.html``), newest
    first: id, when, and their seeds' verdicts from ``swarms/SWARM_ID/summary.json`` if readable. An
    exploration kept there (`regionchaos.explore.report`) is listed alike: its representatives as the seeds,
    with its proof statement (``proof``)."""
    client = config.client()
    heads = []
    for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=config.bucket, Prefix=f"{SWARMS_PREFIX}/", PaginationConfig={"MaxItems": MAX_SCAN}):
        for obj in page.get("Contents", []):
            parts = obj["Key"].split("/")
            if parts[2:] == ["report", "index.html"] and RUN_ID_RE.match(parts[1]):
                heads.append((obj["LastModified"].isoformat(), parts[1]))
    rows = []
    for modified, swarm_id in sorted(heads, reverse=True)[:limit]:
        row: dict[str, Any] = {"swarm_id": swarm_id, "modified": modified}
        try:
            doc, _, problem = _read_json(client, config.bucket, f"{SWARMS_PREFIX}/{swarm_id}/summary.json")
        except Exception:  # noqa: BLE001 - a report without a readable summary is still linked
            doc, problem = None, "no summary.json"
        if problem is None and isinstance(doc, dict) and isinstance(doc.get("representative_verdicts"), dict):
            # an exploration (`regionchaos.explore.report`): its representatives' verdicts and its proof
            row.update(verdicts={k: doc["representative_verdicts"].get(k, 0) for k in ("valid", "invalid", "unknown")},
                       scenario=doc.get("scenario"), mutant=doc.get("mutant"), proof=str(doc.get("proof_statement")))
        elif problem is None and isinstance(doc, dict) and isinstance(doc.get("verdicts"), dict):
            row.update(verdicts={k: doc["verdicts"].get(k, 0) for k in ("valid", "invalid", "unknown")},
                       scenario=doc.get("scenario"), mutant=doc.get("mutant"))
        rows.append(row)
    client.close()
    return rows


def read_timing(client, bucket: str, run_prefix: str) -> Any:
    """A run's wall-clock seconds (``timing/wall_seconds.json`` under ``run_prefix``), or None when it
    has none (runs written before it existed) or it cannot be read: the view then shows no duration."""
    return read_beside(client, bucket, run_prefix, "timing/wall_seconds.json")


def read_beside(client, bucket: str, run_prefix: str, key: str) -> Any:
    """A JSON document stored beside a run's summary (``timing/wall_seconds.json``; ``airflow.json``: the DAG
    run that made it, `AIRFLOW_KEY`), or None when there is none or it cannot be read: the row then lacks
    what it would tell, the rest as usual."""
    try:
        doc, _, problem = _read_json(client, bucket, run_prefix + key)
    except Exception:  # noqa: BLE001 - missing or unreadable
        return None
    return doc if problem is None else None


def _read_json(client, bucket: str, key: str) -> tuple[Any, str, str | None]:
    """(document, when it was written, None) of a stored JSON object, or (None, when, why it
    cannot be read) for one over `MAX_SUMMARY_BYTES`, not UTF-8 JSON, or nested too deep.
    Storage failures (and NoSuchKey) are raised."""
    obj = client.get_object(Bucket=bucket, Key=key)
    modified, size = obj["LastModified"].isoformat(), obj["ContentLength"]
    name = key.rsplit("/", 1)[-1]
    if size > MAX_SUMMARY_BYTES:
        obj["Body"].close()
        return None, modified, f"{name} is {size:,} bytes, more than the {MAX_SUMMARY_BYTES:,} the view reads"
    raw = obj["Body"].read()
    try:
        return json.loads(raw.decode("utf-8")), modified, None
    except UnicodeDecodeError as exc:
        return None, modified, f"{name} is not UTF-8 text: {exc.reason} at byte {exc.start}"
    except ValueError as exc:
        return None, modified, f"{name} is not JSON: {exc}"
    except RecursionError:
        return None, modified, f"{name} is JSON nested too deep to read"


def _unreachable(exc: Exception) -> HTTPException:
    return HTTPException(status_code=503, detail=f"run storage unavailable: {type(exc).__name__}: {exc}")


def _no_storage() -> HTTPException:
    return HTTPException(
        status_code=503,
        detail="no shared run storage configured: set the regionchaos_s3 connection or "
        "REGIONCHAOS_S3_ENDPOINT (runs on the embedded S3 do not outlive their task); for a local "
        "UI with its own persistent S3 under .runs/s3, start Airflow with scripts/ui.sh",
    )


@app.get("/api/runs")
def api_runs(limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT), q: str = Query("", max_length=200)) -> JSONResponse:
    config = run_storage()
    if config is None:
        raise _no_storage()
    try:
        rows = list_runs(config, limit=limit, contains=q)
    except Exception as exc:  # endpoint down, bucket missing, credentials: say so, don't 500
        raise _unreachable(exc) from exc
    return JSONResponse({"runs": rows})


@app.get("/runs/{run_id}/report", response_class=HTMLResponse, name="report_page")
def report_page(request: Request, run_id: str, invariant: str = Query("", max_length=200)) -> HTMLResponse:
    """A run's report at an address of its own (shareable): the run's facts and links above its
    report (framed, sandboxed as stored). ``invariant``: open the report at that invariant's row
    and link the Data Docs page of its suite (the evidence of a failed invariant)."""
    safe_key(run_id, "report/index.html")
    if run_storage() is None:
        return _html(lambda nonce: _page(f"<p>{html.escape(_no_storage().detail)}</p>", nonce), status_code=503)
    row, doc, problem = _read_run(run_id)
    base = _base(request)
    anchor = f"#inv-{quote(invariant, safe='')}" if invariant else ""
    return _run_page(request, "report", row, problem,
                     framed=f"{base}/runs/{quote(run_id, safe='')}/report/index.html{anchor}", invariant=invariant)


def _read_run(run_id: str) -> tuple[dict[str, Any], Any, str | None]:
    """(the run's row with its start and duration, its summary, why the summary cannot be shown or None)."""
    config = run_storage()
    if config is None:
        raise _no_storage()
    client = config.client()
    timing = airflow = None
    try:
        doc, modified, problem = _read_json(client, config.bucket, config.run_prefix(run_id) + "summary.json")
        timing = read_timing(client, config.bucket, config.run_prefix(run_id))
        airflow = read_beside(client, config.bucket, config.run_prefix(run_id), AIRFLOW_KEY)
    except Exception:  # noqa: BLE001 - no summary (yet), or unreadable: the report may still be there
        doc, modified, problem, airflow = None, "", "no summary.json", None
    finally:
        client.close()
    row = {"run_id": run_id, "verdict": "unknown", "failed": []}
    if problem is None and summary_problem(doc) is None:
        row = result_row(doc, airflow)
        row.update(run_id=run_id, **run_times(doc, modified, timing))
    # the DAG run that made it: its airflow.json, or a summary stored before that object existed
    row["airflow"] = airflow if isinstance(airflow, dict) else doc if isinstance(doc, dict) else {}
    return row, doc, problem


def _run_page(request: Request, view: str, row: dict[str, Any], problem: str | None, *, framed: str,
              invariant: str = "", suite: str = "") -> HTMLResponse:
    """A run's page of its own: the run's facts and links above its report or Data Docs (``view``), framed."""
    base = _base(request)
    return _html(lambda nonce: _template("report.html.j2").render(
        nonce=nonce, view=view, row=row, base=base, invariant=invariant, suite=suite, problem=problem,
        framed=framed, dag_run=dag_run_link(row.get("airflow") or {}, _airflow_root(base)),
        share=_address_in_airflow(request)), csp=REPORT_PAGE_CSP)


def _address_in_airflow(request: Request) -> str:
    """This page's address inside Airflow's UI (`runs.in_airflow`), query included."""
    base = _base(request)
    inside = PLUGIN_PREFIX + request.url.path[len(base):] if request.url.path.startswith(base) else request.url.path
    return str(request.url.replace(path=_airflow_root(base) + in_airflow(inside)))


@app.get("/runs/{run_id}/datadocs", response_class=HTMLResponse, name="datadocs_page")
def datadocs_page(request: Request, run_id: str, suite: str = Query("", max_length=200)) -> HTMLResponse:
    """A run's Data Docs at an address of their own, like its report: the run's facts and links above
    the docs, rendered (scripts on, sandboxed, at a capability address: `datadocs`), the index or, with
    ``suite``, that suite's newest validation page."""
    key = safe_key(run_id, "datadocs/index.html")
    if run_storage() is None:
        return _html(lambda nonce: _page(f"<p>{html.escape(_no_storage().detail)}</p>", nonce), status_code=503)
    if suite:
        key = _suite_page(run_id, suite)
    row, doc, problem = _read_run(run_id)
    return _run_page(request, "datadocs", row, problem, framed=_capability(request, run_id, key), suite=suite)


def _capability(request: Request, run_id: str, key: str) -> str:
    """The capability address of one object of a run's Data Docs (`datadocs.sign`)."""
    from regionchaos_airflow import datadocs

    return f"{_base(request)}/public/dd/{datadocs.sign(run_id)}/{quote(run_id, safe='')}/{key}"


def _suite_page(run_id: str, suite: str) -> str:
    """The key of the newest validation page of ``suite`` in a run's Data Docs (404 if none)."""
    if not _SEGMENT_RE.match(suite):
        raise HTTPException(status_code=404, detail="no such suite")
    config = run_storage()
    if config is None:
        raise _no_storage()
    prefix = config.run_prefix(run_id)
    client = config.client()
    try:
        pages = []
        for page in client.get_paginator("list_objects_v2").paginate(
                Bucket=config.bucket, Prefix=f"{prefix}datadocs/validations/{suite}/",
                PaginationConfig={"MaxItems": 1000}):
            pages += [(o["LastModified"], o["Key"]) for o in page.get("Contents", []) if o["Key"].endswith(".html")]
    except Exception as exc:
        raise _unreachable(exc) from exc
    finally:
        client.close()
    if not pages:
        raise HTTPException(status_code=404, detail=f"no Data Docs page of suite {suite} in run {run_id}")
    return safe_key(run_id, max(pages)[1][len(prefix):])


@app.get("/swarms/{swarm_id}/report/index.html", name="swarm_report")
def swarm_report(swarm_id: str) -> Response:
    if not RUN_ID_RE.match(swarm_id):
        raise HTTPException(status_code=404, detail="no such swarm")
    return _stored(lambda config: f"{SWARMS_PREFIX}/{swarm_id}/report/index.html", "no such swarm report")


@app.get("/runs/{run_id}/{key:path}", name="run_object")
def run_object(request: Request, run_id: str, key: str) -> Response:
    """One stored object of a run, sandboxed; a Data Docs page (the stored report links its index) is a
    redirect to its capability address, where its scripts run."""
    key = safe_key(run_id, key)
    if key.startswith("datadocs/") and key.endswith(".html"):
        return Response(status_code=303, headers={"Location": _capability(request, run_id, key),
                                                  "Cache-Control": "no-store"})
    return _stored(lambda config: config.run_prefix(run_id) + key, "no such object")


@app.get("/studies/{study_id}/{key}", name="study_object")
def study_object(study_id: str, key: str) -> Response:
    if not RUN_ID_RE.match(study_id) or ".." in study_id or key not in STUDY_KEYS:
        raise HTTPException(status_code=404, detail="no such study object")
    return _stored(lambda config: f"{STUDIES_PREFIX}/{study_id}/{key}", "no such study object")


_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


def _stored(bucket_key, missing: str, csp: str = STORED_CSP, headers: dict[str, str] | None = None) -> Response:
    """One object from the run storage (``bucket_key(config)``: its key, already checked),
    streamed with the policy ``csp`` (default: sandboxed, no script): 503 without storage or when it
    is unreachable, 404 when it is missing, 413 when it is over `MAX_SERVED_BYTES`."""
    config = run_storage()
    if config is None:
        raise _no_storage()
    key = bucket_key(config)
    client = config.client()
    try:
        obj = client.get_object(Bucket=config.bucket, Key=key)
    except Exception as exc:
        client.close()
        if getattr(exc, "response", {}).get("Error", {}).get("Code") in _MISSING_CODES:
            raise HTTPException(status_code=404, detail=missing) from exc
        raise _unreachable(exc) from exc
    size = obj["ContentLength"]
    if size > MAX_SERVED_BYTES:
        obj["Body"].close()
        client.close()
        raise HTTPException(status_code=413, detail=(
            f"{key.rsplit('/', 1)[-1]} is {size:,} bytes, more than the {MAX_SERVED_BYTES:,} bytes the runs view "
            f"serves: read s3://{config.bucket}/{key} with an S3 client instead"))

    def chunks():
        try:  # botocore's stream checks that exactly ContentLength bytes arrive
            yield from obj["Body"].iter_chunks(CHUNK_BYTES)
        finally:
            obj["Body"].close()
            client.close()

    media_type = mimetypes.guess_type(key)[0] or "application/octet-stream"
    headers = {"Content-Length": str(size), "Content-Security-Policy": csp, **(headers or {})}
    return StreamingResponse(chunks(), media_type=media_type, headers=headers)


@app.get("/", response_class=HTMLResponse)
def index(request: Request, q: str = Query("", max_length=200),
          limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
          scenario: str = Query("", max_length=200), verdict: str = Query("", max_length=20),
          mutant: str = Query("", max_length=200)) -> HTMLResponse:
    """The runs view: newest first, a column per invariant, filters by scenario, verdict and
    mutant, the nightly trend (`trend`), and links to the newest studies."""
    config = run_storage()
    if config is None:
        return _html(lambda nonce: _page(f"<p>{html.escape(_no_storage().detail)}</p>", nonce), status_code=503)
    try:
        rows = list_runs(config, limit=limit, contains=q)
        studies = list_studies(config)
        swarms = list_swarms(config)
    except Exception as exc:
        detail = _unreachable(exc).detail
        return _html(lambda nonce: _page(f"<p>{html.escape(detail)}</p>", nonce), status_code=503)
    from regionchaos.scenario import INVARIANTS
    from regionchaos_airflow.trend import chart_data, nightly_points

    chosen = {"scenario": scenario, "verdict": verdict, "mutant": mutant}
    options = {name: sorted({_shown_value(r, name) for r in rows} - {""}) for name in chosen}
    shown = [r for r in rows if all(not want or _shown_value(r, name) == want for name, want in chosen.items())]
    points = nightly_points(shown)
    base = _base(request)
    return _html(lambda nonce: _template("runs.html.j2").render(
        nonce=nonce, rows=shown, total=len(rows), studies=studies, swarms=swarms, q=q, chosen=chosen,
        invariants=INVARIANTS,
        selects=[("scenario", "scenario", options["scenario"]), ("verdict", "verdict", options["verdict"]),
                 ("mutant", "mutant", options["mutant"])],
        points=points, chart=chart_data(points, _airflow_root(base)), nightly_count=len(points), base=base,
        airflow_root=_airflow_root(base),
        where=f"s3://{config.bucket}/{config.prefix.strip('/')}/ at {config.describe_endpoint()}"))


def _html(render, status_code: int = 200, csp: str = PAGE_CSP) -> HTMLResponse:
    """A page of the plugin: ``render(nonce)`` gives its HTML, whose one ``<style>`` carries the
    nonce; served with `PAGE_CSP` (or ``csp``) for that nonce (a new one per response)."""
    nonce = secrets.token_urlsafe(18)
    return HTMLResponse(render(nonce), status_code=status_code,
                        headers={"Content-Security-Policy": csp.format(nonce=nonce)})


def _base(request: Request) -> str:
    """Where the app is mounted (``/regionchaos`` in the api-server, empty under a test client)."""
    return request.scope.get("root_path", "").rstrip("/")


def _airflow_root(base: str) -> str:
    """The Airflow UI's root, seen from the app's mount point."""
    return base[: -len("/regionchaos")] if base.endswith("/regionchaos") else ""


def _shown_value(row: dict[str, Any], name: str) -> str:
    """A row's value of a filtered column as the view shows it (no mutant reads "none")."""
    value = row.get(name)
    return str(value or "none") if name == "mutant" else str(value or "")


@functools.lru_cache(maxsize=None)
def _template(name: str):
    """A template of the plugin (loaded and compiled once per process)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent / "templates")),
                             autoescape=True)
    env.filters["segment"] = lambda value: quote(str(value), safe="")  # one URL path segment
    env.filters["duration"] = duration_text
    env.filters["when"] = lambda iso: (iso or "")[:19].replace("T", " ") + (" UTC" if iso else "")
    return env.get_template(name)


def _page(body: str, nonce: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>regionchaos runs</title>"
        f"<style nonce='{nonce}'>"
        "body{font-family:system-ui,sans-serif;margin:1.5rem}"
        "table{border-collapse:collapse}td,th{border-bottom:1px solid #d0d7de;padding:.35rem .6rem;"
        "text-align:left;vertical-align:top}code{font-size:.9em}</style></head>"
        f"<body><h1>Chaos runs</h1>{body}</body></html>"
    )
