"""The local UI's parts that can be checked without Airflow running: the environment that
scripts/airflow-env.sh derives from the port, and the local S3 server of scripts/ui.sh
(scripts/local_s3.py) keeping its objects across a restart.

In:  scripts/airflow-env.sh sourced in bash (no migration: REGIONCHAOS_SKIP_MIGRATE);
     scripts/local_s3.py started twice on one folder, boto3 against it.
Out: pass/fail. (The UI itself, in a browser, is tests/test_airflow_browser.py's.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DROPPED = ("AIRFLOW", "REGIONCHAOS_")


def sourced(home: Path, script: str, **env: str) -> dict[str, str]:
    """The variables after running ``script`` (bash, sourcing airflow-env.sh) in a clean environment."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED)}
    base.update({"REGIONCHAOS_AIRFLOW_HOME": str(home), "REGIONCHAOS_SKIP_MIGRATE": "1", **env})
    out = subprocess.run(["bash", "-c", script + "\nenv -0"], cwd=ROOT, env=base, capture_output=True,
                         timeout=60, check=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def test_the_port_option_also_moves_the_execution_api(tmp_path):
    default = sourced(tmp_path, "source scripts/airflow-env.sh")
    assert (default["AIRFLOW__API__HOST"], default["AIRFLOW__API__PORT"]) == ("127.0.0.1", "8080")
    assert default["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:8080/execution/"
    moved = sourced(tmp_path, "source scripts/airflow-env.sh", AIRFLOW__API__PORT="8123")
    assert moved["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:8123/execution/"
    # sourced again with another port in the same shell: the derived URL follows the port ...
    again = sourced(tmp_path, "source scripts/airflow-env.sh; export AIRFLOW__API__PORT=9001; "
                              "source scripts/airflow-env.sh")
    assert again["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:9001/execution/"
    # ... and a URL set by hand is kept
    kept = sourced(tmp_path, "source scripts/airflow-env.sh",
                   AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://10.0.0.5:8080/execution/")
    assert kept["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://10.0.0.5:8080/execution/"


def test_ui_refuses_an_unknown_option(tmp_path):
    proc = subprocess.run(["bash", "scripts/ui.sh", "--prot", "1"], cwd=ROOT, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2
    assert "unknown option --prot" in proc.stderr


def test_ui_refuses_a_stop_grace_that_is_not_whole_seconds(tmp_path):
    proc = subprocess.run(["bash", "scripts/ui.sh"], cwd=ROOT, capture_output=True, text=True, timeout=30,
                          env={**os.environ, "REGIONCHAOS_UI_STOP_GRACE_S": "30s",
                               "REGIONCHAOS_AIRFLOW_HOME": str(tmp_path / "home")})
    assert proc.returncode == 2
    assert "REGIONCHAOS_UI_STOP_GRACE_S=30s: not a whole number of seconds" in proc.stderr
    assert not (tmp_path / "home").exists()  # refused before anything was set up or started


def _start_s3(folder: Path, port: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "local_s3.py"), "--dir", str(folder),
                             "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc, proc.stdout.readline().strip()


def _stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow
def test_the_local_s3_keeps_its_objects_across_a_restart(tmp_path):
    import boto3

    from tests.airflow_server import free_port

    folder, port = tmp_path / "s3", free_port()
    proc, ready = _start_s3(folder, port)
    try:
        assert ready.startswith(f"local S3: http://127.0.0.1:{port} ") and ready.endswith("0 loaded)"), ready
        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                          aws_access_key_id="regionchaos", aws_secret_access_key="regionchaos-local")
        s3.put_object(Bucket="regionchaos", Key="runs/r1/summary.json", Body=b'{"verdict": "valid"}')
        s3.put_object(Bucket="regionchaos", Key="runs/r1/report/index.html", Body=b"<html>")
        s3.put_object(Bucket="regionchaos", Key="runs/r1/tmp", Body=b"deleted before the restart")
        s3.delete_object(Bucket="regionchaos", Key="runs/r1/tmp")
        s3.copy_object(Bucket="regionchaos", Key="runs/r2/summary.json",
                       CopySource={"Bucket": "regionchaos", "Key": "runs/r1/summary.json"})
    finally:
        assert _stop(proc) == 0
    proc, ready = _start_s3(folder, port)
    try:
        assert ready.endswith("3 loaded)"), ready
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="regionchaos")["Contents"])
        assert keys == ["runs/r1/report/index.html", "runs/r1/summary.json", "runs/r2/summary.json"]
        assert s3.get_object(Bucket="regionchaos", Key="runs/r2/summary.json")["Body"].read() == b'{"verdict": "valid"}'
    finally:
        assert _stop(proc) == 0
