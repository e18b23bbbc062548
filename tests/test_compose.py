"""docker-compose.yml against what docs/COMPOSE.md promises (no Docker engine here).

In:  docker-compose.yml (PyYAML, anchors and merge keys resolved), the tables of
     docs/COMPOSE.md (services, environment variables, volumes), requirements.lock.
Out: pass/fail: the file and its documentation cannot drift apart silently.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
DOC = (ROOT / "docs" / "COMPOSE.md").read_text()
LOCK = dict(line.split("==", 1) for line in (ROOT / "requirements.lock").read_text().split() if "==" in line)

AIRFLOW_SERVICES = {"airflow-apiserver": "api-server", "airflow-scheduler": "scheduler",
                    "airflow-dag-processor": "dag-processor", "airflow-triggerer": "triggerer"}
RUN_ONCE = {"minio-init", "airflow-init"}
# service keys of the Compose specification that this file may use
SERVICE_KEYS = {"image", "build", "command", "entrypoint", "environment", "ports", "volumes",
                "depends_on", "healthcheck", "restart", "hostname", "user"}
_INTERPOLATION = re.compile(r"(?<!\$)\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}")
# the secrets of the stack: none may have a default in the file, all come from .env
SECRETS = {"AIRFLOW_ADMIN_PASSWORD", "AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY", "AIRFLOW_FERNET_KEY",
           "POSTGRES_PASSWORD", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"}
REQUIRED = "<required>"


def resolve(value: str) -> str:
    """Compose interpolation with every variable unset: ``${X:-d}`` / ``${X-d}`` -> d;
    ``${X:?message}`` (required) -> ``<X>``."""
    def one(m: re.Match) -> str:
        if m.group(2) and m.group(2).endswith("?"):
            return f"<{m.group(1)}>"
        return m.group(3) or ""
    return _INTERPOLATION.sub(one, value).replace("$$", "$")


def doc_table(heading: str) -> list[dict[str, str]]:
    """The markdown table under `## heading` as rows of {column: cell}."""
    section = DOC.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]


def code(cell: str) -> str:
    return cell.strip().strip("`")


def published(service: dict) -> list[tuple[str, str, str]]:
    """(host address, host port, container port) of each published port, variables unset."""
    out = []
    for p in service.get("ports", []):
        parts = resolve(str(p)).split(":")
        out.append(tuple(parts) if len(parts) == 3 else ("0.0.0.0", *parts))  # no address: every interface
    return out


def host_ports(service: dict) -> list[str]:
    return [host for _, host, _ in published(service)]


def env(service: dict) -> dict[str, str]:
    return {k: str(v) for k, v in (service.get("environment") or {}).items()}


# -- services, images, ports, health checks ----------------------------------------------

def test_the_documented_services_are_the_services():
    assert {code(row["service"]) for row in doc_table("Services")} == set(SERVICES)
    assert {"postgres", "minio", "minio-init", "airflow-init", *AIRFLOW_SERVICES,
            "spark-master", "spark-worker-1", "spark-worker-2"} == set(SERVICES)


@pytest.mark.parametrize("row", doc_table("Services"), ids=lambda r: code(r["service"]))
def test_each_service_has_the_documented_image_ports_and_health_check(row):
    service = SERVICES[code(row["service"])]
    assert set(service) <= SERVICE_KEYS, set(service) - SERVICE_KEYS
    assert resolve(service["image"]) == code(row["image"])
    documented_ports = [] if row["host port"] == "-" else [p.strip() for p in row["host port"].split(",")]
    assert host_ports(service) == documented_ports
    if code(row["service"]) in RUN_ONCE:
        assert service["restart"] == "no" and "healthcheck" not in service
    else:
        test = service["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and len(test) >= 2
        assert {"interval", "timeout", "retries"} <= set(service["healthcheck"])


def test_dependencies_exist_and_wait_for_health_or_completion():
    for name, service in SERVICES.items():
        for dep, rule in (service.get("depends_on") or {}).items():
            assert dep in SERVICES and dep != name
            wanted = "service_completed_successfully" if dep in RUN_ONCE else "service_healthy"
            assert rule["condition"] == wanted, (name, dep)
            assert dep in RUN_ONCE or "healthcheck" in SERVICES[dep]


# -- Airflow -------------------------------------------------------------------------------

def test_airflow_services_run_the_four_components_on_postgres_with_the_project_mounted():
    image = SERVICES["airflow-apiserver"]["image"]
    for name, command in AIRFLOW_SERVICES.items():
        service = SERVICES[name]
        assert service["command"] == command
        assert service["image"] == image
        assert ".:/opt/regionchaos" in service["volumes"]
        e = env(service)
        assert e["AIRFLOW__CORE__DAGS_FOLDER"] == "/opt/regionchaos/dags"
        assert e["AIRFLOW__CORE__PLUGINS_FOLDER"] == "/opt/regionchaos/plugins"
        assert e["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
        assert resolve(e["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]).startswith("postgresql+psycopg2://airflow:")
        assert "@postgres/airflow" in e["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        assert {"postgres", "minio-init", "airflow-init"} <= set(service["depends_on"])
    assert host_ports(SERVICES["airflow-apiserver"]) == ["8080"]
    assert "airflow db migrate" in SERVICES["airflow-init"]["command"][0]


def test_the_image_pins_match_the_lock_and_the_python_of_the_project():
    dockerfile = SERVICES["airflow-apiserver"]["build"]["dockerfile_inline"]
    assert f"FROM apache/airflow:{LOCK['apache-airflow']}-python3.11" in dockerfile
    assert "requires-python = \">=3.11,<3.12\"" in (ROOT / "pyproject.toml").read_text()
    assert "COPY pyproject.toml requirements.lock /tmp/" in dockerfile and "pip install" in dockerfile
    assert "default-jre-headless" in dockerfile and "JAVA_HOME" in dockerfile
    spark_version = LOCK["pyspark"]
    assert SERVICES["spark-master"]["image"] == f"apache/spark:{spark_version}-scala2.13-java17-ubuntu"
    assert spark_version in SERVICES["airflow-apiserver"]["image"]


# -- Spark ---------------------------------------------------------------------------------

def test_a_spark_master_and_two_workers_from_the_driver_image():
    assert "org.apache.spark.deploy.master.Master" in SERVICES["spark-master"]["command"]
    assert "7077" in SERVICES["spark-master"]["command"]
    for name in ("spark-worker-1", "spark-worker-2"):
        worker = SERVICES[name]
        assert worker["entrypoint"] == ["spark-class", "org.apache.spark.deploy.worker.Worker"]
        assert worker["command"][0] == "spark://spark-master:7077"
        assert worker["image"] == SERVICES["airflow-scheduler"]["image"]  # same Python as the driver
        assert worker["hostname"] == name
        assert ".:/opt/regionchaos" in worker["volumes"]
        assert env(worker)["REGIONCHAOS_S3_ENDPOINT"] == "http://minio:9000"
        assert worker["depends_on"]["spark-master"]["condition"] == "service_healthy"


def test_the_cluster_switch_points_at_the_spark_master():
    e = env(SERVICES["airflow-scheduler"])
    conn_id = resolve(e["AIRFLOW_VAR_REGIONCHAOS_SPARK_CONN_ID"])
    assert conn_id == "spark_cluster"
    conn = json.loads(e[f"AIRFLOW_CONN_{conn_id.upper()}"])
    assert (conn["conn_type"], conn["host"], conn["port"]) == ("spark", "spark://spark-master", 7077)
    assert env(SERVICES["airflow-dag-processor"])["AIRFLOW_VAR_REGIONCHAOS_SPARK_CONN_ID"] == (
        e["AIRFLOW_VAR_REGIONCHAOS_SPARK_CONN_ID"])  # parse time and run time agree


# -- MinIO and S3 --------------------------------------------------------------------------

def test_minio_creates_the_bucket_and_everyone_gets_endpoint_and_credentials_from_env():
    init = SERVICES["minio-init"]
    script = " ".join(init["command"])
    assert "mc alias set local http://minio:9000" in script
    assert 'mc mb --ignore-existing "local/$$REGIONCHAOS_BUCKET"' in script
    assert init["depends_on"]["minio"]["condition"] == "service_healthy"
    for name in (*AIRFLOW_SERVICES, "spark-worker-1", "spark-worker-2"):
        e = env(SERVICES[name])
        assert e["REGIONCHAOS_S3_ENDPOINT"] == "http://minio:9000"
        assert e["AWS_ACCESS_KEY_ID"].startswith("${MINIO_ROOT_USER")
        assert e["AWS_SECRET_ACCESS_KEY"].startswith("${MINIO_ROOT_PASSWORD")
        assert e["REGIONCHAOS_BUCKET"].startswith("${REGIONCHAOS_BUCKET")
    assert env(SERVICES["minio"])["MINIO_ROOT_USER"].startswith("${MINIO_ROOT_USER")


# -- environment variables and volumes of the doc ------------------------------------------

def _interpolations() -> dict[str, set[str]]:
    """Variable -> the defaults it is given anywhere in docker-compose.yml (`REQUIRED` for ``:?``)."""
    found: dict[str, set[str]] = {}
    for m in _INTERPOLATION.finditer((ROOT / "docker-compose.yml").read_text()):
        required = bool(m.group(2)) and m.group(2).endswith("?")
        found.setdefault(m.group(1), set()).add(REQUIRED if required else (m.group(3) or ""))
    return found


def test_every_documented_variable_is_used_and_every_used_variable_is_documented():
    documented = {code(row["variable"]): row for row in doc_table("Environment variables")}
    used = _interpolations()
    assert set(documented) == set(used)
    for name, row in documented.items():
        default = row["default"]
        if default.startswith("`"):  # a literal default: the compose file must agree
            assert used[name] == {code(default)}, (name, used[name])
        elif default == "empty":
            assert used[name] == {""}, name
        elif default == "required (.env)":
            assert used[name] == {REQUIRED}, name


def test_the_documented_volumes_are_declared_and_mounted_where_documented():
    rows = {code(row["volume"]): code(row["mounted at"].split(" (")[0]) for row in doc_table("Volumes")}
    assert set(rows) == set(COMPOSE["volumes"])
    mounts = {m for s in SERVICES.values() for m in s.get("volumes", [])}
    for volume, target in rows.items():
        assert f"{volume}:{target}" in mounts, volume


# -- hardening: bind addresses, secrets, the Spark master's address, runtime dependencies ----

def test_every_published_port_binds_localhost_by_default():
    ports = [(name, p) for name, service in SERVICES.items() for p in published(service)]
    assert ports, "no published port at all"
    for name, (address, host, container) in ports:
        assert address == "127.0.0.1", (name, address, host)
        assert host.isdigit() and container.isdigit(), (name, host, container)


def test_no_secret_has_a_default_in_the_file():
    used = _interpolations()
    assert SECRETS <= set(used), SECRETS - set(used)
    for name in SECRETS:
        assert used[name] == {REQUIRED}, (name, used[name])
    text = (ROOT / "docker-compose.yml").read_text()
    assert "change-me" not in text and "regionchaos-secret" not in text


def test_the_spark_master_is_dialled_where_it_binds():
    master = SERVICES["spark-master"]
    command = master["command"]
    host, port = command[command.index("--host") + 1], command[command.index("--port") + 1]
    assert host == master["hostname"] != "127.0.0.1"
    probe = " ".join(master["healthcheck"]["test"][1:])
    assert f"/dev/tcp/{host}/{port}" in probe, probe
    for name in ("spark-worker-1", "spark-worker-2"):
        assert SERVICES[name]["command"][0] == f"spark://{host}:{port}"


def _runtime_requirements_command() -> str:
    dockerfile = SERVICES["airflow-apiserver"]["build"]["dockerfile_inline"]
    run = next(line for line in dockerfile.splitlines() if line.startswith("RUN python -c"))
    return shlex.split(run[len("RUN "):].split(" > ")[0])[2]  # the python code, as sh passes it


def test_the_image_installs_the_runtime_dependencies_only(tmp_path):
    dockerfile = SERVICES["airflow-apiserver"]["build"]["dockerfile_inline"]
    assert "-r /tmp/requirements.lock" not in dockerfile and "[dev]" not in dockerfile
    assert "-c /tmp/requirements.lock -r /tmp/runtime.txt" in dockerfile
    # run the image's own extraction against this checkout's pyproject.toml
    code = _runtime_requirements_command().replace("/tmp/pyproject.toml", str(ROOT / "pyproject.toml"))
    names = {re.split(r"[=<>\[ ]", line)[0].lower() for line in
             subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()}
    assert {"apache-airflow", "pyspark", "great-expectations", "boto3"} <= names
    assert not names & {"pytest", "hypothesis", "playwright"}, names


# -- scripts/compose-env.sh ------------------------------------------------------------------

def _env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


def _compose_env(*args: str):
    return subprocess.run(["bash", str(ROOT / "scripts" / "compose-env.sh"), *args], capture_output=True, text=True)


def test_compose_env_generates_every_required_variable(tmp_path):
    target = tmp_path / ".env"
    done = _compose_env("--file", str(target))
    assert done.returncode == 0, done.stderr
    values = _env_file(target)
    required = {name for name, defaults in _interpolations().items() if REQUIRED in defaults}
    assert required == SECRETS and required <= set(values), required - set(values)
    assert all(len(values[k]) >= 12 for k in required), values.keys()
    assert len({values[k] for k in required}) == len(required)  # no two secrets alike
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    from cryptography.fernet import Fernet
    Fernet(values["AIRFLOW_FERNET_KEY"].encode())  # a valid Fernet key
    again = _compose_env("--file", str(target))
    assert again.returncode == 1 and "exists" in again.stderr
    assert _env_file(target) == values  # unchanged without --force
    forced = _compose_env("--file", str(target), "--force")
    assert forced.returncode == 0 and _env_file(target)["POSTGRES_PASSWORD"] != values["POSTGRES_PASSWORD"]


def test_compose_env_rejects_an_unknown_argument_and_writes_nothing():
    before = (ROOT / ".env").exists()
    done = _compose_env("--frce")
    assert done.returncode == 2 and "--frce" in done.stderr
    assert (ROOT / ".env").exists() == before
