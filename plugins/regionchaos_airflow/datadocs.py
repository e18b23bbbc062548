"""Data Docs inside Airflow: their scripts sandboxed off Airflow's origin, reached by a capability.

A run's Data Docs are stored as `regionchaos.datadocs.make_offline` wrote them: every script, stylesheet
and font under the site's own ``static/``, nothing asked of another host. Inside Airflow they must
run script, but never on Airflow's origin.

In:  a run id, and a secret shared by the api-server's workers (Airflow's ``[api_auth] jwt_secret``;
     a per-process one when it has none).
Out: `sign(run_id)` / `check(token, run_id)`: a short-lived capability for one run's Data Docs;
     `DATADOCS_CSP`, the policy they are served with.

Why a capability in the path: Data Docs are served with `DATADOCS_CSP`, a sandbox that allows
scripts WITHOUT ``allow-same-origin`` (an opaque origin: the page's script cannot read
Airflow's cookies, storage or API). Chromium then sends no SameSite=Lax cookie (Airflow's
``_token``) with the page's own subresources and links, so the login cannot travel with them.
The plugin (logged in) hands out ``public/dd/TOKEN/RUN_ID/datadocs/index.html``; relative
links inside the docs keep the token, which is good for `TOKEN_TTL_S` and one run's
``datadocs/`` only.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
import time

TOKEN_TTL_S = 12 * 3600
# Data Docs pages run their script in a sandbox without allow-same-origin (an opaque origin),
# fetch only from this server, post nothing, and are framed by Airflow's pages only.
DATADOCS_CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-inline'; "
                "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
                "connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'")


@functools.lru_cache(maxsize=1)
def _secret() -> bytes:
    try:
        from airflow.configuration import conf

        shared = conf.get("api_auth", "jwt_secret", fallback="") or ""
    except Exception:  # noqa: BLE001 - no Airflow config: this process's own secret
        shared = ""
    if shared:
        return hashlib.sha256(b"regionchaos-datadocs\0" + shared.encode()).digest()
    return secrets.token_bytes(32)


def _mac(run_id: str, expires: int) -> str:
    digest = hmac.new(_secret(), f"{expires}\0{run_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:18]).decode()


def sign(run_id: str, *, now: float | None = None, ttl_s: int = TOKEN_TTL_S) -> str:
    """A token good for ``run_id``'s Data Docs until ``now + ttl_s``."""
    expires = int((time.time() if now is None else now) + ttl_s)
    return f"{expires}.{_mac(run_id, expires)}"


def check(token: str, run_id: str, *, now: float | None = None) -> bool:
    """Whether ``token`` was signed for ``run_id`` and has not expired."""
    expires, _, mac = token.partition(".")
    if not expires.isdigit() or int(expires) < (time.time() if now is None else now):
        return False
    return hmac.compare_digest(mac, _mac(run_id, int(expires)))
