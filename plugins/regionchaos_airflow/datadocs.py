"""Data Docs that render inside Airflow, offline: assets, CDN rewrite, capability links.

GX's Data Docs pages load jQuery, popper, bootstrap, bootstrap-table, font-awesome and vega
from CDNs, and fill their tables with script. Inside Airflow they must run script, but never
on Airflow's origin, and ask nothing of any other host.

In:  an HTML page of a run's Data Docs (bytes, as GX wrote it to ``datadocs/``), the plugin's
     mount point (``/regionchaos``), a run id, and a secret shared by the api-server's workers
     (Airflow's ``[api_auth] jwt_secret``; a per-process one when it has none).
Out: `rewrite_html(page, assets_base)`: the page with every CDN script, stylesheet and image
     (`CDN_ASSETS`) pointed at the plugin's own copy, GX's ``static/`` folder pointed at the
     installed ``great_expectations/render/view/static/``, and any other external subresource
     removed; `asset_path(name)`: the file behind ``/regionchaos/public/assets/NAME`` (vendored
     under ``static/vendor/`` from the npm packages named in `CDN_ASSETS`, licences beside them,
     or ``gx/...`` from the installed GX package); `sign(run_id)` / `check(token, run_id)`: a
     short-lived capability for one run's Data Docs.

Why a capability in the path: Data Docs are served with `DATADOCS_CSP`, a sandbox that allows
scripts WITHOUT ``allow-same-origin`` (an opaque origin: the page's script cannot read
Airflow's cookies, storage or API). Chromium then sends no SameSite=Lax cookie (Airflow's
``_token``) with the page's own subresources and links, so the login cannot travel with them.
The runs view (logged in) hands out ``public/dd/TOKEN/RUN_ID/datadocs/index.html``; relative
links inside the docs keep the token, which is good for `TOKEN_TTL_S` and one run's
``datadocs/`` only. Assets are open-source library files, served without login.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
import secrets
import time
from pathlib import Path

VENDOR_DIR = Path(__file__).resolve().parent / "static" / "vendor"
TOKEN_TTL_S = 12 * 3600
# A CDN address GX 1.24's templates use -> the plugin's copy (from the npm package@version named).
CDN_ASSETS: dict[str, str] = {
    "https://code.jquery.com/jquery-3.7.1.min.js": "vendor/jquery.min.js",  # jquery@3.7.1
    "https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js": "vendor/popper.min.js",  # popper.js@1.12.9
    "https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.min.js": "vendor/bootstrap.min.js",  # bootstrap@4.3.1
    "https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css": "vendor/bootstrap.min.css",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.js": "vendor/bootstrap-table.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.css": "vendor/bootstrap-table.min.css",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/extensions/filter-control/bootstrap-table-filter-control.min.js":
        "vendor/bootstrap-table-filter-control.min.js",
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.min.css":
        "vendor/bootstrap-table-filter-control.min.css",
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.css":
        "vendor/bootstrap-table-filter-control.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/js/bootstrap-datepicker.min.js":
        "vendor/bootstrap-datepicker.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/css/bootstrap-datepicker.min.css":
        "vendor/bootstrap-datepicker.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.6.0/css/all.min.css": "vendor/fontawesome/css/all.min.css",
    "https://cdn.jsdelivr.net/npm/vega@5": "vendor/vega.min.js",  # vega@5.33.1
    "https://cdn.jsdelivr.net/npm/vega-lite@5": "vendor/vega-lite.min.js",  # vega-lite@5.23.0
    "https://cdn.jsdelivr.net/npm/vega-embed@6": "vendor/vega-embed.min.js",  # vega-embed@6.29.0
    # the dark theme (@forevolve/bootstrap-dark, 880 kB unminified) is not shipped: light only
    "https://cdn.jsdelivr.net/npm/@forevolve/bootstrap-dark@1.1.0/dist/css/bootstrap-prefers-dark.css": None,
}
_GX_LOGO = re.compile(r"https://great-expectations-web-assets\.s3[^\"']*/logo-long\.png[^\"']*")
# src=/href= of a subresource (script, stylesheet, image, icon) on another host
_EXTERNAL_SUBRESOURCE = re.compile(
    r"<(script|img|link|iframe|source|embed|object)\b([^>]*?)\b(src|href|data)\s*=\s*([\"'])(https?:)?//[^\"']*\4",
    re.IGNORECASE)
_SRI = re.compile(r"\s+(integrity|crossorigin)\s*=\s*([\"'])[^\"']*\2", re.IGNORECASE)
_STATIC_REF = re.compile(r"([\"'(])((?:\./|(?:\.\./)+)?static/)(styles|images|fonts)/")

# Data Docs pages run their script in a sandbox without allow-same-origin (an opaque origin),
# fetch only from this server, post nothing, and are framed by Airflow's pages only.
DATADOCS_CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-inline'; "
                "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
                "connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'")
ASSET_HEADERS = {"Cache-Control": "public, max-age=86400", "Access-Control-Allow-Origin": "*",
                 "Content-Security-Policy": "default-src 'none'; frame-ancestors 'self'"}


def gx_static_dir() -> Path:
    """The installed GX package's Data Docs static files (styles, fonts, images)."""
    import great_expectations

    return Path(great_expectations.__file__).resolve().parent / "render" / "view" / "static"


def asset_path(name: str) -> Path | None:
    """The file served as asset ``name`` (``vendor/...`` or ``gx/...``), None if there is none.
    Only files inside those two folders, never a path outside."""
    parts = name.split("/")
    if len(parts) < 2 or any(p in ("", ".", "..") or p.startswith(".") or "\\" in p for p in parts):
        return None
    root = {"vendor": VENDOR_DIR, "gx": gx_static_dir()}.get(parts[0])
    if root is None:
        return None
    path = root.joinpath(*parts[1:]).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        return None
    return path


def rewrite_html(page: str, assets_base: str) -> str:
    """A Data Docs page that asks nothing of another host: CDN assets -> ``assets_base/vendor/``,
    GX's ``static/`` -> ``assets_base/gx/`` (the installed package), the GX logo -> GX's copy,
    subresource integrity attributes of rewritten tags dropped, any other external
    subresource tag emptied (its address replaced by ``about:blank``). Links (``<a href>``)
    to other sites are left: they are not fetched unless followed."""
    base = assets_base.rstrip("/")
    for url, local in CDN_ASSETS.items():
        page = page.replace(url, f"{base}/{local}" if local else "about:blank")
    page = _GX_LOGO.sub(f"{base}/gx/images/logo-long.png", page)
    page = _STATIC_REF.sub(lambda m: f"{m.group(1)}{base}/gx/{m.group(3)}/", page)

    def local_only(match: re.Match) -> str:
        return f"<{match.group(1)}{match.group(2)}{match.group(3)}={match.group(4)}about:blank{match.group(4)}"

    page = _EXTERNAL_SUBRESOURCE.sub(local_only, page)
    return re.sub(r"<(script|link)\b[^>]*>", lambda m: _SRI.sub("", m.group(0)), page, flags=re.IGNORECASE)


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
