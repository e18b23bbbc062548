"""A judged run's validation artifacts, written under its prefix in one batch of PUTs.

In:  the run's store, the judged result as stored (``validation/results.json``: checks, verdict, stats,
     wall seconds ...), GX's checkpoint result (one validation result per suite) and the folder GX built
     the Data Docs in (or None).
Out: ``PREFIX/validation/results.json``, ``PREFIX/validation/<suite>.json`` (GX's own result of each suite)
     and ``PREFIX/datadocs/...`` (``datadocs/index.html`` at its root) under the store's run prefix.
"""

from __future__ import annotations

import json
from pathlib import Path


def upload(store, results: dict, gx_result, docs_dir: Path | None, prefix: str = "") -> None:
    items = [(f"{prefix}validation/results.json", json.dumps(results, indent=1, sort_keys=True, default=str).encode())]
    if gx_result is not None:
        for vr in gx_result.run_results.values():
            items.append((f"{prefix}validation/{vr.suite_name}.json",
                          json.dumps(vr.to_json_dict(), indent=1, sort_keys=True, default=str).encode()))
    if docs_dir is not None and docs_dir.exists():
        for path in sorted(docs_dir.rglob("*")):
            if path.is_file():
                items.append((f"{prefix}datadocs/{path.relative_to(docs_dir).as_posix()}", path.read_bytes()))
    store.put_many(items)
