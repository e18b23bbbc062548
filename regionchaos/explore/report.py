"""An exploration's report and where it is kept: beside the swarms, shown like one.

In:  an exploration's summary (`regionchaos.explore.summary.summarize`) and the storage to keep it in.
Out: `build_explore_report(summary) -> str`: one offline HTML page in the run report's style: the outcome, the
     proof statement, the states and the schedules they stand for, each invariant's verdict and proof with its
     shortest counterexample (schedule and replay line), the findings shown, the assumptions, any drift of the
     model from the emulation; `store_exploration(summary, config, local_dir)`: ``summary.json`` and
     ``report/index.html`` under ``swarms/EXPLORE_ID/`` (the runs view lists them with the swarms, with the
     proof statement), mirrored under ``LOCAL_DIR/swarms/EXPLORE_ID/``; the summary gains ``explore_id``
     and where it was kept.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..report import CSS, VERDICT_COLOURS, template
from ..storage import ObjectStore

SWARMS_PREFIX = "swarms"  # regionchaos.swarm.SWARMS_PREFIX: what the runs view lists


def explore_id(summary: dict) -> str:
    """Keyed by what the exploration is, never by the clock: a re-run overwrites the same prefix."""
    name = os.path.splitext(os.path.basename(summary["scenario"]))[0]
    key = [summary["scenario"], summary["overrides"], summary["mutant"], summary["max_checkpoints"]]
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"explore-{name}-{summary['mutant'] or 'correct'}-n{summary['max_checkpoints']}-{digest}"


def build_explore_report(summary: dict) -> str:
    return template("explore.html.j2").render(css=CSS, colours=VERDICT_COLOURS, s=summary)


def store_exploration(summary: dict, config, local_dir: str | None) -> dict:
    """Keep the summary and its report (see the module docstring); the summary with ``explore_id``,
    ``prefix``, ``report`` and, with ``local_dir``, ``local_report``."""
    eid = explore_id(summary)
    store = ObjectStore(config, f"{SWARMS_PREFIX}/{eid}")
    store.check_ready()
    out = {**summary, "explore_id": eid, "prefix": store.uri(), "report": store.uri("report/index.html")}
    page = build_explore_report(out).encode()
    body = json.dumps(out, indent=1, sort_keys=True, default=str).encode()
    store.put("report/index.html", page)
    store.put("summary.json", body)
    if local_dir:
        target = os.path.join(local_dir, SWARMS_PREFIX, eid)
        os.makedirs(os.path.join(target, "report"), exist_ok=True)
        with open(os.path.join(target, "report", "index.html"), "wb") as fh:
            fh.write(page)
        with open(os.path.join(target, "summary.json"), "wb") as fh:
            fh.write(body)
        out["local_report"] = os.path.join(target, "report", "index.html")
    return out
