"""The cluster path, for real: a Spark standalone master and one worker on 127.0.0.1, started
from the pyspark distribution (``spark-class``), run (a) a swarm of a dozen seeds (six Spark tasks on the executors) and
(b) the manual DAG with the Spark connection set, which spark-submits the emulation.

The worker stands for another machine: its Python has the dependencies but not this package
(a ``sitecustomize`` on its PYTHONPATH hides the editable install), so an executor can import
``regionchaos`` only from the zip the driver ships (`regionchaos.spark.ship_package`). The S3
endpoint reaches the tasks from the driver's configuration (``--s3-endpoint``,
``REGIONCHAOS_S3_ENDPOINT``); the executors' credentials come from the worker's environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from regionchaos.swarm import SWARM_OVERRIDES, SwarmContext, emulate_seed
from regionchaos.scenario import catalogue
from regionchaos.storage.s3 import ObjectStore

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.cluster]

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_TIMEOUT_S = 180
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

# On the worker: the venv's dependencies stay, the editable install of regionchaos goes
HIDE_PACKAGE = """\
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in getattr(h, "__module__", "")]
sys.path[:] = [p for p in sys.path if "__editable__" not in p and p != {root!r}]
"""


@dataclass
class Cluster:
    master: str
    ui: str
    worker_env: dict[str, str]
    logs: Path

    def state(self) -> dict:
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=10) as response:
            return json.load(response)

    def apps(self) -> list[dict]:
        state = self.state()
        return state.get("activeapps", []) + state.get("completedapps", [])

    def log_tail(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.logs.glob("*.log")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _base_env() -> dict[str, str]:
    dropped = ("AIRFLOW", "REGIONCHAOS_", "AWS_ENDPOINT_URL", "PYSPARK_", "SPARK_", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(CREDENTIALS, SPARK_LOCAL_IP="127.0.0.1", PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and one worker (2 cores, 2 GiB), both on 127.0.0.1."""
    home = tmp_path_factory.mktemp("spark-standalone")
    hide = home / "worker-site"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_PACKAGE.format(root=str(ROOT)))
    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    master_env = _base_env()
    worker_env = {**_base_env(), "PYTHONPATH": str(hide)}
    spark_class = str(BIN / "spark-class")
    procs, logs = [], []

    def start(name: str, args: list[str], env: dict[str, str]) -> None:
        log = open(home / f"{name}.log", "w")
        logs.append(log)
        procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                      cwd=home, start_new_session=True))

    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}", worker_env, home)
    try:
        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                         "--webui-port", str(ui_port)], master_env)
        start("worker", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2",
                         "--memory", "2g", "--webui-port", str(worker_ui), "--work-dir", str(home / "work"),
                         cluster.master], worker_env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if cluster.state().get("aliveworkers", 0) >= 1:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                pytest.fail(f"the standalone cluster did not come up:\n{cluster.log_tail()}")
            time.sleep(1)
        yield cluster
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        for log in logs:
            log.close()


def test_the_shipped_zip_holds_the_package_and_is_named_by_its_content(tmp_path):
    """What executors import: every module and data file, no bytecode; the name changes with the content."""
    import zipfile

    from regionchaos.spark import package_zip

    package = tmp_path / "regionchaos"
    (package / "catalogue").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    (package / "__init__.py").write_text("VERSION = 1\n")
    (package / "catalogue" / "smoke.yaml").write_text("name: smoke\n")
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    first = package_zip(str(package))
    assert sorted(zipfile.ZipFile(first).namelist()) == ["regionchaos/__init__.py", "regionchaos/catalogue/smoke.yaml"]
    assert package_zip(str(package)) == first
    (package / "__init__.py").write_text("VERSION = 2\n")
    assert package_zip(str(package)) != first
    real = zipfile.ZipFile(package_zip()).namelist()
    assert "regionchaos/swarm.py" in real and "regionchaos/catalogue/smoke.yaml" in real


def test_the_worker_cannot_import_the_package_unless_it_is_shipped(cluster):
    """The premise of the cluster tests: the worker's Python has pyarrow and boto3, not regionchaos."""
    probe = "import pyarrow, boto3, pydantic\ntry:\n    import regionchaos\nexcept ImportError:\n    print('hidden')"
    out = subprocess.run([str(BIN / "python"), "-c", probe], env=cluster.worker_env, capture_output=True,
                         text=True, cwd=cluster.logs, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "hidden", out.stdout + out.stderr


def test_a_swarm_runs_on_the_standalone_cluster(cluster, s3_server, tmp_path):
    """`regionchaos swarm --seeds 12 --mutant failed-region-commits` with the master set (5 of the 12 catch it): every
    seed emulated by the worker's executors from the shipped package and judged by the suites,
    the mutant caught through the notifications suite; a failing seed's cluster record is what
    the same seed gives emulated here."""
    env = {**_base_env(), "REGIONCHAOS_SPARK_MASTER": cluster.master}
    config = s3_server.config
    proc = subprocess.run(
        [str(BIN / "regionchaos"), "swarm", "--seeds", "12", "--scenario", "smoke", "--mutant",
         "failed-region-commits", "--partitions", "6", "--s3-endpoint", config.endpoint_url,
         "--bucket", config.bucket, "--local-dir", str(tmp_path), "--json"],
        env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.stdout.strip(), proc.stderr[-4000:] + cluster.log_tail()
    result = json.loads(proc.stdout)
    assert proc.returncode == 1, (result["verdicts"], proc.stderr[-3000:])
    assert result["judged"] == 12 and result["unknown"] == 0, result["verdicts"]
    assert any("notifications" in f["failed"] for f in result["failing"]), result["failing"]
    apps = [a for a in cluster.apps() if a["name"] == "regionchaos"]
    assert apps, cluster.apps()  # it ran on the cluster, not on a local master
    parts = ObjectStore(config, f"swarms/{result['swarm_id']}").list_keys("tables/checkpoints/")
    assert len(parts) == 6, parts  # one Parquet part per Spark task, written by the executors

    failing = next(f for f in result["failing"] if "notifications" in f["failed"])
    on_cluster = next(r for r in result["runs"] if r["seed"] == failing["seed"])
    data = yaml.safe_load(catalogue()["smoke"].read_text())
    here, _ = emulate_seed(SwarmContext("smoke", data, dict(SWARM_OVERRIDES), "failed-region-commits", config,
                                        "swarms/here/", {}), failing["seed"])
    assert here["stats"] == on_cluster["stats"] and here["run_id"] == on_cluster["run_id"]


@pytest.mark.airflow
def test_the_manual_dag_spark_submits_the_emulation_to_the_cluster(cluster, s3_server, tmp_path):
    """`scripts/demo_airflow.sh` with the Airflow Variable ``regionchaos_spark_conn_id`` naming a
    connection to the master: emulate is a spark-submit to it (its executors on the worker),
    then validate and publish_report judge and check the run on the shared S3 store."""
    config = s3_server.config
    env = {**_base_env(), "REGIONCHAOS_AIRFLOW_HOME": str(tmp_path / "airflow"),
           "REGIONCHAOS_LOCAL_DIR": str(tmp_path / "runs"),
           "AIRFLOW_VAR_REGIONCHAOS_SPARK_CONN_ID": "spark_standalone",
           "AIRFLOW_CONN_SPARK_STANDALONE": cluster.master,
           "REGIONCHAOS_S3_ENDPOINT": config.endpoint_url, "REGIONCHAOS_BUCKET": config.bucket}
    before = {a["id"] for a in cluster.apps()}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "demo_airflow.sh"), '{"scenario": "smoke", "seed": 3}'],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    log_path = tmp_path / "airflow" / "demo_airflow.log"
    log = log_path.read_text() if log_path.exists() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr + log[-6000:] + cluster.log_tail()
    assert f"--master {cluster.master}" in log and "spark_jobs/emulate.py" in log, log[-4000:]
    submitted = [a for a in cluster.apps() if a["id"] not in before and a["name"].startswith("regionchaos-emulate")]
    assert submitted, cluster.apps()
    verdict = re.search(r"^regionchaos verdict: (\w+) \(scenario smoke, seed 3, mutant none, run (\S+)\)$",
                        proc.stdout, re.M)
    assert verdict and verdict.group(1) == "valid", proc.stdout
    store = ObjectStore.for_run(config, verdict.group(2))
    assert store.exists("summary.json") and store.exists("report/index.html")
    summary = json.loads(store.get("summary.json"))
    assert summary["verdict"] == "valid" and summary["stats"]["checkpoints_completed"] > 0
    assert summary["checks"] and all(c["success"] is True for c in summary["checks"])
    assert "dag run: success (airflow exit 0)" in proc.stdout
