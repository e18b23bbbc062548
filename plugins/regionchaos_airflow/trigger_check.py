"""The whole-form check of a trigger, before Airflow creates the DAG run.

Airflow checks each trigger-form field against its Param's JSON schema, but the
api-server sees the serialized DAG, whose params are plain JSON schemas: nothing there can
judge one field against another or against the chosen scenario (a rescale after checkpoint
99 of a 12-checkpoint scenario, a parallelism below its TaskManagers). This ASGI middleware,
registered by the plugin as a ``fastapi_root_middlewares`` entry, runs the DAG's whole-form
check (``regionchaos_airflow.params.TRIGGER_CHECKS``) first.

In:  ``POST .../api/v2/dags/{dag_id}/dagRuns`` (the UI's trigger form and the REST API;
     body ``{"conf": {...}, ...}``) and ``POST .../api/v2/backfills[/dry_run]`` (body
     ``{"dag_id": ..., "dag_run_conf": {...}}``) for a DAG with a check; every other request
     passes untouched, without its body being read.
Out: a conf with errors, from a caller allowed to trigger that DAG: ``400`` with
     ``{"detail": "No chaos run was started: ...\\n<one line per field: Title (param): reason>",
     "errors": [{"param", "title", "reason"}, ...]}`` (`params.refusal`); the trigger form shows
     ``detail`` under the status Airflow's UI heads it with ("400 Bad Request", not the plugin's to
     set). No run is created.
     A body the check cannot read is refused the same way, whoever sends it, so nothing
     unchecked reaches Airflow: over `MAX_BODY` bytes (declared or sent, chunked too:
     ``413``), not UTF-8, not JSON, or cut short by the client (``400``), each with a
     ``detail`` sentence and ``errors: []``.
     Anything else (a good conf, JSON that is not an object or whose conf is not an
     object, a caller without the right to trigger) goes on to Airflow with its body
     unchanged, so Airflow answers for authentication, authorization and malformed requests
     exactly as it would without the plugin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Authorize = Callable[[Scope, str], Awaitable[bool]]

MAX_BODY = 1 << 20  # a trigger body is a few KiB; a larger one is refused (413), never passed on unchecked
TRIGGER_PATH = re.compile(r"/api/v2/dags/(?P<dag_id>[^/]+)/dagRuns/?$")
BACKFILL_PATH = re.compile(r"/api/v2/backfills(?:/dry_run)?/?$")


async def may_trigger(scope: Scope, dag_id: str) -> bool:
    """Whether the caller may create runs of `dag_id`, as Airflow's trigger endpoint decides it
    (the same user lookup and ``is_authorized_dag(POST, RUN)``); False on any doubt."""
    from fastapi.security import HTTPAuthorizationCredentials
    from starlette.requests import Request

    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
    from airflow.api_fastapi.core_api.security import get_user
    from airflow.models.dag import DagModel

    request = Request(scope)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    credentials = (HTTPAuthorizationCredentials(scheme=scheme, credentials=token.strip())
                   if scheme.lower() == "bearer" and token.strip() else None)
    try:
        user = await get_user(request, _oauth_token=None, bearer_credentials=credentials)
        team_name = await run_in_threadpool(DagModel.get_team_name, dag_id)
        return bool(get_auth_manager().is_authorized_dag(
            method="POST", access_entity=DagAccessEntity.RUN,
            details=DagDetails(id=dag_id, team_name=team_name), user=user))
    except Exception:  # not authenticated, not authorized, no metadata DB: Airflow answers
        return False


def _target(scope: Scope, body: Any) -> tuple[str, Any] | None:
    """(dag_id, conf) a trigger or backfill request asks for, or None for anything else."""
    path = scope.get("path", "")
    if match := TRIGGER_PATH.search(path):
        return unquote(match["dag_id"]), body.get("conf") if isinstance(body, dict) else None
    if BACKFILL_PATH.search(path) and isinstance(body, dict) and isinstance(body.get("dag_id"), str):
        return body["dag_id"], body.get("dag_run_conf")
    return None


def _unreadable(status: int, reason: str) -> JSONResponse:
    """The refusal of a trigger body the check cannot read (`status` 400 or 413)."""
    return JSONResponse(status_code=status, content={
        "detail": f"Trigger refused before any run was created: {reason}. Send the form as a JSON object "
                  f"of at most {MAX_BODY:,} bytes, UTF-8 encoded.",
        "errors": []})


def _unread(scope: Scope) -> JSONResponse | None:
    """The 413 for a body whose declared length is over `MAX_BODY` (nothing read), else None."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                return _unreadable(400, "the Content-Length header is not a number")
            if declared > MAX_BODY:
                return _unreadable(413, f"the request body is {declared:,} bytes, over the {MAX_BODY:,} a "
                                        "trigger form may hold")
    return None


class TriggerFormCheck:
    """ASGI middleware: a DAG run's conf gets the DAG's whole-form check before Airflow sees it.

    `checks` maps DAG ids to functions conf -> list of ``FieldError`` (default: the
    DAGs of this project); `authorize` decides who gets the check's answer (default: whoever
    may trigger the DAG; anyone else is left to Airflow's own 401/403).
    """

    def __init__(self, app: Callable[..., Awaitable[None]], checks: dict[str, Callable] | None = None,
                 authorize: Authorize | None = None) -> None:
        self.app = app
        if checks is None:
            from regionchaos_airflow.params import TRIGGER_CHECKS

            checks = TRIGGER_CHECKS
        self.checks = checks
        self.authorize = authorize or may_trigger

    def _watched(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        path = scope.get("path", "")
        match = TRIGGER_PATH.search(path)
        return (match is not None and unquote(match["dag_id"]) in self.checks) or bool(BACKFILL_PATH.search(path))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._watched(scope):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        response = _unread(scope)
        size = 0
        while response is None:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":  # the client went away mid-body
                response = _unreadable(400, "the request body was cut short: the client disconnected")
                break
            size += len(message.get("body", b""))
            if size > MAX_BODY:  # chunked, or more than declared: stop reading here
                response = _unreadable(413, f"the request body is over the {MAX_BODY:,} bytes a trigger "
                                            "form may hold")
            elif not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        if response is None:
            response = await self._refusal(scope, b"".join(m.get("body", b"") for m in messages))
        if response is None:
            await self.app(scope, replay, send)
        else:
            await response(scope, replay, send)

    async def _refusal(self, scope: Scope, raw: bytes) -> JSONResponse | None:
        """The 400 for a conf with errors or a body that is not UTF-8 JSON; None to let the
        request through."""
        try:
            body = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return _unreadable(400, f"the request body is not UTF-8: {exc.reason} at byte {exc.start}")
        except ValueError as exc:
            return _unreadable(400, f"the request body is not JSON: {exc}")
        except RecursionError:
            return _unreadable(400, "the request body is JSON nested too deep to read")
        target = _target(scope, body)
        if target is None or target[0] not in self.checks:
            return None
        dag_id, conf = target
        conf = {} if conf is None else conf
        if not isinstance(conf, dict):
            return None  # Airflow's own request model refuses it (422)
        errors = await run_in_threadpool(self.checks[dag_id], conf)  # reads the catalogue: off the loop
        if not errors or not await self.authorize(scope, dag_id):
            return None
        from regionchaos_airflow.params import refusal

        return JSONResponse(
            status_code=400,
            content={
                "detail": refusal(dag_id, errors),
                "errors": [{"param": e.param, "title": e.title, "reason": e.reason} for e in errors],
            },
        )
