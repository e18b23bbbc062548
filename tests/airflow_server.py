"""A real Airflow for tests: api-server (and, when asked, scheduler and dag-processor)
started from scripts/airflow-env.sh in a scratch AIRFLOW_HOME on SQLite, bound to
127.0.0.1, with SimpleAuthManager and a known admin password.

In:  a scratch home, the components to start, extra environment (e.g. the run storage).
Out: `start_airflow` (a context manager yielding an `Airflow` handle: REST calls with a
     token, the DAG's runs, the components' logs); every process is stopped on exit, by
     its own process group. Used by tests/test_airflow_e2e.py; tests/test_airflow_browser.py
     uses the `Airflow` handle on the Airflow scripts/ui.sh starts.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 180
DROPPED_ENV = ("AIRFLOW", "REGIONCHAOS_", "AWS_ENDPOINT_URL")  # this process's own settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Airflow:
    base: str
    password: str
    home: Path
    user: str = "admin"
    procs: list[subprocess.Popen] = field(default_factory=list)
    log_glob: str = "*.out"  # the components' logs under `home` (scripts/ui.sh: ui/*.log)

    def token(self) -> str:
        body = json.dumps({"username": self.user, "password": self.password}).encode()
        return self.call("POST", "/auth/token", body=body, auth=False)[1]["access_token"]

    def call(self, method: str, path: str, body: bytes | None = None, auth: bool = True,
             cookie: str | None = None) -> tuple[int, object]:
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token()}"
        if cookie:
            headers["Cookie"] = cookie
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                status = response.status
        except urllib.error.HTTPError as err:
            raw, status = err.read(), err.code
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def runs(self, dag_id: str) -> list[dict]:
        path = f"/api/v2/dags/{urllib.parse.quote(dag_id)}/dagRuns?limit=1000"
        status, body = self.call("GET", path)
        assert status == 200, body
        return body["dag_runs"]

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.home.glob(self.log_glob)))


def wait_for(what: str, check, timeout_s: float, airflow: Airflow | None = None, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            result = check()
        except (OSError, urllib.error.URLError, KeyError):
            result = None
        if result:
            return result
        time.sleep(every_s)
    pytest.fail(f"timed out after {timeout_s} s waiting for {what}\n{airflow.logs() if airflow else ''}")


@contextmanager
def start_airflow(home: Path, dag_ids: tuple[str, ...], *, scheduler: bool = True,
                  unpause: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Iterator[Airflow]:
    """api-server and dag-processor (and the scheduler unless told not to) on 127.0.0.1;
    yields once `dag_ids` are parsed and `unpause` are unpaused (every DAG is paused at
    creation)."""
    port, password = free_port(), secrets.token_urlsafe(12)
    (home / "passwords.json").write_text(json.dumps({"admin": password}))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED_ENV)}
    full_env.update({
        "REGIONCHAOS_AIRFLOW_HOME": str(home),
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
        "AIRFLOW__API__SECRET_KEY": secrets.token_hex(16),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        **(env or {}),
    })
    migrate = subprocess.run(["bash", "-c", "source scripts/airflow-env.sh"], cwd=ROOT, env=full_env,
                             capture_output=True, text=True, timeout=120)
    assert migrate.returncode == 0, migrate.stderr
    full_env["REGIONCHAOS_SKIP_MIGRATE"] = "1"
    af = Airflow(base=f"http://127.0.0.1:{port}", password=password, home=home)

    def start(name: str, command: str) -> None:
        out = open(home / f"{name}.out", "w")  # noqa: SIM115 - closed with the process
        af.procs.append(subprocess.Popen(
            ["bash", "-c", f"source scripts/airflow-env.sh && exec airflow {command}"],
            cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        ))

    try:
        # all at once: every DAG is paused at creation, so no task runs before the
        # api-server (which serves the tasks' execution API) is up
        start("api-server", f"api-server --port {port} --workers 1")
        if scheduler:
            start("scheduler", "scheduler")
        start("dag-processor", "dag-processor")
        wait_for("the api-server", lambda: af.call("GET", "/api/v2/monitor/health", auth=False)[0] == 200,
                 START_TIMEOUT_S, af)
        for dag_id in dag_ids:
            wait_for(f"{dag_id} to be parsed", lambda: af.call("GET", f"/api/v2/dags/{dag_id}")[0] == 200,
                     START_TIMEOUT_S, af)
        for dag_id in unpause:
            assert af.call("PATCH", f"/api/v2/dags/{dag_id}", body=b'{"is_paused": false}')[0] == 200
        yield af
    finally:
        for proc in af.procs:  # each in its own session: stop what it started, by group id
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in af.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
