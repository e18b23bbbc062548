"""Health check of a Spark worker of docker-compose.yml: registered with the master, and ALIVE there.

In:  --worker URL of the worker's web UI (its ``/json/``: ``id``, ``masterurl``), --master URL of
     the master's web UI (its ``/json/``: ``workers``, each with ``id`` and ``state``), --timeout-s.
Out: exit 0 when the worker reports a master and that master lists the worker's id as ALIVE;
     exit 1 with one line on stderr naming what is missing otherwise (unreachable UI, not
     registered, unknown to the master, or in another state such as DEAD or DECOMMISSIONED).

An open port only says the JVM started; a worker that never reached the master, or that the
master dropped, has an open port too.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from typing import Any


def fetch_json(base_url: str, timeout_s: float) -> Any:
    with urllib.request.urlopen(base_url.rstrip("/") + "/json/", timeout=timeout_s) as response:  # noqa: S310
        return json.load(response)


def check(worker_url: str, master_url: str, timeout_s: float) -> str | None:
    """None when healthy, else the reason."""
    try:
        worker = fetch_json(worker_url, timeout_s)
    except (OSError, ValueError) as exc:
        return f"worker UI {worker_url} did not answer with JSON: {exc}"
    worker_id, registered_with = worker.get("id"), worker.get("masterurl")
    if not worker_id:
        return f"worker UI {worker_url} reports no worker id"
    if not registered_with:
        return f"worker {worker_id} is not registered with a master"
    try:
        master = fetch_json(master_url, timeout_s)
    except (OSError, ValueError) as exc:
        return f"master UI {master_url} did not answer with JSON: {exc}"
    states = {w.get("id"): w.get("state") for w in master.get("workers", [])}
    if worker_id not in states:
        return f"master {master_url} does not list worker {worker_id}"
    if states[worker_id] != "ALIVE":
        return f"master {master_url} lists worker {worker_id} as {states[worker_id]}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--worker", default="http://127.0.0.1:8081")
    parser.add_argument("--master", default="http://spark-master:8080")
    parser.add_argument("--timeout-s", type=float, default=3.0)
    args = parser.parse_args(argv)
    reason = check(args.worker, args.master, args.timeout_s)
    if reason:
        print(f"spark-worker-health: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
