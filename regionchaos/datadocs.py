"""Data Docs that render anywhere: GX's site rewritten, as it is written, to ask nothing of another host.

GX 1.24's Data Docs pages load jQuery, popper, bootstrap, bootstrap-table, font-awesome and vega from
CDNs (nine scripts and six stylesheets a page), its logo from S3, and fill their tables with script:
offline, or anywhere a policy keeps a page to its own server (the Airflow plugin), they render blank.

In:  the folder of a Data Docs site GX has just built (``index.html``, ``expectations/``,
     ``validations/``, ``static/``).
Out: `make_offline(site_dir)`, in place: every page's CDN scripts and stylesheets pointed at copies
     under the site's own ``static/vendor/`` (copied there from `ASSETS_DIR`, the npm packages named
     in `CDN_ASSETS`, licences in ``datadocs_assets/licenses/``), relative to the page, so the site
     renders from a file:// folder, from S3 behind any prefix, or served by the plugin, as stored;
     subresource-integrity attributes dropped (the files are the packages' own); the GX logo and
     ``static/`` references pointed at the site's own ``static/`` (one favicon path was one folder
     short); vega left out of pages that draw no chart; any other external subresource emptied;
     GX's newsletter footer removed; the column headers of tables nested in a table's cells kept
     apart (`SITE_STYLE`). `rewrite_page(page, static)` does one page.

Pure file work: no GX import, no network. `regionchaos.judge.engine.GXValidator.build_docs` calls it
right after GX built the site, so the stored copy and the local mirror are the same offline site.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent / "datadocs_assets"
VENDOR = "vendor"  # the copies' folder under the site's static/
# A CDN address GX 1.24's templates use -> the copy under datadocs_assets/ (from the npm package@version named).
CDN_ASSETS: dict[str, str | None] = {
    "https://code.jquery.com/jquery-3.7.1.min.js": "jquery.min.js",  # jquery@3.7.1
    "https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js": "popper.min.js",  # popper.js@1.12.9
    "https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.min.js": "bootstrap.min.js",  # bootstrap@4.3.1
    "https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css": "bootstrap.min.css",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.js": "bootstrap-table.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.css": "bootstrap-table.min.css",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/extensions/filter-control/bootstrap-table-filter-control.min.js":
        "bootstrap-table-filter-control.min.js",
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.min.css":
        "bootstrap-table-filter-control.min.css",
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.css":
        "bootstrap-table-filter-control.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/js/bootstrap-datepicker.min.js":
        "bootstrap-datepicker.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/css/bootstrap-datepicker.min.css":
        "bootstrap-datepicker.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.6.0/css/all.min.css": "fontawesome/css/all.min.css",
    "https://cdn.jsdelivr.net/npm/vega@5": "vega.min.js",  # vega@5.33.1
    "https://cdn.jsdelivr.net/npm/vega-lite@5": "vega-lite.min.js",  # vega-lite@5.23.0
    "https://cdn.jsdelivr.net/npm/vega-embed@6": "vega-embed.min.js",  # vega-embed@6.29.0
    # the dark theme (@forevolve/bootstrap-dark, 880 kB unminified) is not shipped: light only
    "https://cdn.jsdelivr.net/npm/@forevolve/bootstrap-dark@1.1.0/dist/css/bootstrap-prefers-dark.css": None,
}
FONT_FILES = ("fontawesome/webfonts",)  # what fontawesome's stylesheet loads, relative to it
_VEGA = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
_GX_IMAGES = re.compile(r"https://great-expectations-web-assets\.s3[^\"')]*/(?:logo-long|full_logo_dark)\.png[^\"')]*")
# src=/href= of a subresource (script, stylesheet, image, icon) on another host
_EXTERNAL_SUBRESOURCE = re.compile(
    r"<(script|img|link|iframe|source|embed|object)\b([^>]*?)\b(src|href|data)\s*=\s*([\"'])(https?:)?//[^\"']*\4",
    re.IGNORECASE)
_SRI = re.compile(r"\s+(integrity|crossorigin)\s*=\s*([\"'])[^\"']*\2", re.IGNORECASE)
_STATIC_REF = re.compile(r"([\"'(])(?:\./|(?:\.\./)+)?static/(styles|images|fonts|scripts)/")
_TAG = re.compile(r"<(script|link)\b[^>]*>(?:\s*</script>)?", re.IGNORECASE)
_NEWSLETTER = re.compile(r"\s*<footer>\s*<p>Stay current on everything GX.*?</footer>", re.DOTALL)
_HEAD_END = re.compile(r"</head>", re.IGNORECASE)

# bootstrap-table styles every header cell inside a table it drew (`.bootstrap-table ... .table thead th`:
# no padding, no side borders), the header of a table nested in one of its cells too: the column names of a
# failed rule's violating rows ran together ("checkpoint_idregionsubtask..."). The nested tables' header
# cells get their padding and borders back.
SITE_STYLE = """<style id="regionchaos-datadocs">
.bootstrap-table .fixed-table-container .table td table thead th {
  padding: .3rem .6rem; border: 1px solid #dee2e6; border-bottom-width: 2px; white-space: nowrap; }
</style>"""


def vendor_files(names: set[str]) -> set[str]:
    """The files under `ASSETS_DIR` a set of copied assets needs (fontawesome's fonts with its stylesheet)."""
    files = set(names)
    if any(name.startswith("fontawesome/") for name in names):
        for folder in FONT_FILES:
            files |= {p.relative_to(ASSETS_DIR).as_posix() for p in (ASSETS_DIR / folder).iterdir() if p.is_file()}
    return files


def rewrite_page(page: str, static: str) -> tuple[str, set[str]]:
    """One Data Docs page that asks nothing of another host, and the asset names it now loads from
    ``static/vendor/``. ``static``: the site's ``static/`` folder relative to the page (``static``,
    ``../static``, ...)."""
    used: set[str] = set()
    draws_charts = "vegaEmbed(" in page

    def local(match: re.Match) -> str:
        tag = match.group(0)
        url = next((u for u in CDN_ASSETS if u in tag), None)
        if url is None:
            return tag
        name = CDN_ASSETS[url]
        if name is None or (name in _VEGA and not draws_charts):
            return ""  # not shipped (the dark theme), or a chart library on a page without a chart
        used.add(name)
        return _SRI.sub("", tag.replace(url, f"{static}/{VENDOR}/{name}"))

    page = _TAG.sub(local, page)
    page = _GX_IMAGES.sub(f"{static}/images/logo-long.png", page)
    page = _STATIC_REF.sub(lambda m: f"{m.group(1)}{static}/{m.group(2)}/", page)
    page = _EXTERNAL_SUBRESOURCE.sub(
        lambda m: f"<{m.group(1)}{m.group(2)}{m.group(3)}={m.group(4)}about:blank{m.group(4)}", page)
    page = _NEWSLETTER.sub("", page)
    page = _HEAD_END.sub(lambda _: SITE_STYLE + "\n</head>", page, count=1)
    return page, used


def make_offline(site_dir: Path) -> None:
    """Rewrite every page of the Data Docs site in ``site_dir`` (`rewrite_page`) and copy the assets
    they load under ``site_dir/static/vendor/``."""
    site_dir = Path(site_dir)
    used: set[str] = set()
    for path in sorted(site_dir.rglob("*.html")):
        static = Path(os.path.relpath(site_dir / "static", path.parent)).as_posix()
        page, names = rewrite_page(path.read_text(encoding="utf-8"), static)
        path.write_text(page, encoding="utf-8")
        used |= names
    for name in sorted(vendor_files(used)):
        target = site_dir / "static" / VENDOR / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ASSETS_DIR / name, target)
