"""The plugin's FastAPI app: runs listed from storage, their reports served from storage.

Mounted by the api-server at ``/regionchaos`` (see ``plugins/regionchaos_plugin.py``).
In:  ``s3://BUCKET/<prefix>/*/summary.json`` of the shared run storage (the
     ``regionchaos_s3`` connection or ``REGIONCHAOS_S3_ENDPOINT``, see `storage`).
Out: ``GET /``               an HTML table of runs: run id, scenario, seed, mutant,
                             verdict, failed invariants, links to report and Data Docs
     ``GET /api/runs``       the same rows as JSON
     ``GET /runs/{run_id}/{key}``  one object of a run: ``report/``, ``datadocs/``,
                             ``validation/``, ``summary.json``, ``scenario.json`` only
     ``GET /studies/{study_id}/{key}``  a global-vs-regional study (``regionchaos study``,
                             ``s3://BUCKET/studies/STUDY_ID/``): ``index.html``, ``study.json``;
                             the newest studies are linked above the runs table

Every endpoint needs an authenticated Airflow user (the api-server's JWT: bearer header
or the UI's ``_token`` cookie, checked by Airflow's own auth manager). Keys are
whitelisted segment by segment, so nothing outside ``<prefix>/<run_id>/`` is served:
``..``, absolute paths, backslashes and (double) percent-encoded traversal are refused.
"""

from __future__ import annotations

import functools
import html
import json
import mimetypes
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from regionchaos_airflow.runs import RUN_ID_RE, result_row

SERVED_ROOTS = ("report", "datadocs", "validation", "summary.json", "scenario.json")
STUDY_KEYS = ("index.html", "study.json")
STUDIES_PREFIX = "studies"  # regionchaos.study.STUDIES_PREFIX: beside the runs, at the bucket's top
STUDIES_LISTED = 10
_SEGMENT_RE = re.compile(r"^[A-Za-z0-9_@+=,-][A-Za-z0-9._@+=,-]{0,254}$")
DEFAULT_LIMIT = 500
MAX_LIMIT = 2000  # rows one request may ask for
MAX_SCAN = 10_000  # run ids one request looks at (one HEAD each)
# Stored HTML (reports, Data Docs) is data from the bucket: it runs in a sandbox (a unique origin,
# no script), so a file planted there cannot act on Airflow's origin with the user's session.
STORED_CSP = "sandbox; frame-ancestors 'self'"
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


app = FastAPI(
    title="regionchaos runs",
    description="Chaos runs of regional checkpoints, read from the run storage.",
    dependencies=[Depends(require_user)],
)

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
    if not RUN_ID_RE.match(run_id) or ".." in run_id:
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
            run_id = common["Prefix"][len(top):].rstrip("/")
            if RUN_ID_RE.match(run_id) and contains in run_id:
                run_ids.append(run_id)

    def modified(run_id: str) -> tuple[str, str]:
        try:
            head = client.head_object(Bucket=config.bucket, Key=f"{top}{run_id}/summary.json")
        except client.exceptions.ClientError:
            return ("~running", run_id)  # sorts after every timestamp: still running is newest
        return (head["LastModified"].isoformat(), run_id)

    def fetch(run_id: str) -> dict[str, Any]:
        try:
            obj = client.get_object(Bucket=config.bucket, Key=f"{top}{run_id}/summary.json")
        except client.exceptions.NoSuchKey:
            return {"run_id": run_id, "verdict": "running", "failed": [], "modified": ""}
        row = result_row(json.loads(obj["Body"].read()))
        row["run_id"] = run_id
        row["modified"] = obj["LastModified"].isoformat()
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
        doc = json.loads(client.get_object(Bucket=config.bucket, Key=f"{STUDIES_PREFIX}/{study_id}/study.json")["Body"].read())
        rows.append({"study_id": study_id, "modified": modified, "runs": len(doc.get("cells", [])),
                     "errors": doc.get("errors"), "wall_seconds": doc.get("wall_seconds"), "command": doc.get("command")})
    client.close()
    return rows


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


@app.get("/runs/{run_id}/{key:path}", name="run_object")
def run_object(run_id: str, key: str) -> Response:
    key = safe_key(run_id, key)
    return _stored(lambda config, store: store.for_run(config, run_id), key, "no such object")


@app.get("/studies/{study_id}/{key}", name="study_object")
def study_object(study_id: str, key: str) -> Response:
    if not RUN_ID_RE.match(study_id) or ".." in study_id or key not in STUDY_KEYS:
        raise HTTPException(status_code=404, detail="no such study object")
    return _stored(lambda config, store: store(config, f"{STUDIES_PREFIX}/{study_id}"), key, "no such study object")


def _stored(open_store, key: str, missing: str) -> Response:
    """One object from the run storage (``open_store(config, ObjectStore)`` picks the prefix),
    served sandboxed: 503 without storage or when it is unreachable, 404 when it is missing."""
    config = run_storage()
    if config is None:
        raise _no_storage()
    from regionchaos.storage import ObjectStore

    try:
        body = open_store(config, ObjectStore).get_or_none(key)
    except Exception as exc:
        raise _unreachable(exc) from exc
    if body is None:
        raise HTTPException(status_code=404, detail=missing)
    media_type = mimetypes.guess_type(key)[0] or "application/octet-stream"
    headers = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": STORED_CSP}
    return Response(body, media_type=media_type, headers=headers)


@app.get("/", response_class=HTMLResponse)
def index(request: Request, q: str = Query("", max_length=200),
          limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT),
          scenario: str = Query("", max_length=200), verdict: str = Query("", max_length=20),
          mutant: str = Query("", max_length=200)) -> HTMLResponse:
    """The runs view: newest first, a column per invariant, filters by scenario, verdict and
    mutant, the nightly trend (`trend`), and links to the newest studies."""
    config = run_storage()
    if config is None:
        body = f"<p>{html.escape(_no_storage().detail)}</p>"
        return HTMLResponse(_page(body), status_code=503)
    try:
        rows = list_runs(config, limit=limit, contains=q)
        studies = list_studies(config)
    except Exception as exc:
        return HTMLResponse(_page(f"<p>{html.escape(_unreachable(exc).detail)}</p>"), status_code=503)
    from regionchaos.scenario import INVARIANTS
    from regionchaos_airflow.trend import nightly_points, trend_png

    chosen = {"scenario": scenario, "verdict": verdict, "mutant": mutant}
    options = {name: sorted({_shown_value(r, name) for r in rows} - {""}) for name in chosen}
    shown = [r for r in rows if all(not want or _shown_value(r, name) == want for name, want in chosen.items())]
    points = nightly_points(shown)
    page = _template("runs.html.j2").render(
        rows=shown, total=len(rows), studies=studies, q=q, chosen=chosen, invariants=INVARIANTS,
        selects=[("scenario", "scenario", options["scenario"]), ("verdict", "verdict", options["verdict"]),
                 ("mutant", "mutant", options["mutant"])],
        trend=trend_png(points), nightly_count=len(points), base=request.scope.get("root_path", "").rstrip("/"),
        where=f"s3://{config.bucket}/{config.prefix.strip('/')}/ at {config.describe_endpoint()}")
    return HTMLResponse(page)


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
    return env.get_template(name)


def _page(body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>regionchaos runs</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:1.5rem}"
        "table{border-collapse:collapse}td,th{border-bottom:1px solid #d0d7de;padding:.35rem .6rem;"
        "text-align:left;vertical-align:top}code{font-size:.9em}</style></head>"
        f"<body><h1>Chaos runs</h1>{body}</body></html>"
    )
