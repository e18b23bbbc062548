"""Flink's REST API, as the cluster's JobManager serves it on 127.0.0.1.

In:  the REST port of a running JobManager.
Out: plain dicts from Flink's JSON (job state, checkpoint statistics, TaskManagers); `RestUnavailable`
     while nothing answers (the JobManager starting, or killed). Statistics are cached by Flink for
     ``web.refresh-interval`` / ``rest.cache.checkpoint-statistics.timeout`` (the cluster sets both low).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


class RestUnavailable(RuntimeError):
    """The JobManager's REST endpoint did not answer (or answered an error)."""


class FlinkRest:
    """GETs on one JobManager's REST endpoint."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout_s: float = 5.0) -> None:
        self.base = f"http://{host}:{port}"
        self.timeout_s = timeout_s

    def get(self, path: str) -> Any:
        try:
            with urllib.request.urlopen(self.base + path, timeout=self.timeout_s) as answer:
                return json.loads(answer.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RestUnavailable(f"GET {self.base}{path}: {exc}") from exc

    def overview(self) -> dict:
        return self.get("/overview")

    def taskmanagers(self) -> list[dict]:
        return self.get("/taskmanagers")["taskmanagers"]

    def jobs(self) -> list[dict]:
        return self.get("/jobs/overview")["jobs"]

    def job_state(self, job_id: str) -> str:
        return self.get(f"/jobs/{job_id}")["state"]

    def checkpoints(self, job_id: str) -> dict:
        """Checkpoint statistics: counts, latest completed/failed/restored, the recent history."""
        return self.get(f"/jobs/{job_id}/checkpoints")

    def checkpoint_config(self, job_id: str) -> dict:
        return self.get(f"/jobs/{job_id}/checkpoints/config")


def wait_until(probe: Callable[[], _T | None], timeout_s: float, what: str, every_s: float = 0.5) -> _T:
    """Call probe until it returns something not None (RestUnavailable counts as None); TimeoutError after timeout_s."""
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = probe()
        except RestUnavailable as exc:
            value, last = None, exc
        if value is not None:
            return value
        time.sleep(every_s)
    raise TimeoutError(f"{what}: not within {timeout_s:.0f} s" + (f" (last error: {last})" if last else ""))
