"""docker-compose.yml against what docs/COMPOSE.md promises (no Docker engine here).

In:  docker-compose.yml (PyYAML, anchors and merge keys resolved), the tables of
     docs/COMPOSE.md (services, environment variables, volumes, image pins, exceptions),
     requirements.lock, the scripts under docker/ (run here: spark-conf.sh, minio-init.sh with
     a stand-in `mc`, spark-worker-health.py against stand-in Spark UIs on 127.0.0.1),
     scripts/compose-env.sh.
Out: pass/fail: the file and its documentation cannot drift apart silently, and the least
     privilege rules (scoped MinIO users, read-only project mounts, dropped capabilities,
     read-only root file systems, limits, Spark authentication, digests) hold for every service.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
                "depends_on", "healthcheck", "restart", "hostname", "user", "cap_drop", "security_opt",
                "read_only", "tmpfs", "mem_limit", "cpus", "pids_limit"}
_INTERPOLATION = re.compile(r"(?<!\$)\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}")
# the secrets of the stack: none may have a default in the file, all come from .env
SECRETS = {"AIRFLOW_ADMIN_PASSWORD", "AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY", "AIRFLOW_FERNET_KEY",
           "POSTGRES_PASSWORD", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD",
           "MINIO_AIRFLOW_USER", "MINIO_AIRFLOW_PASSWORD", "MINIO_SPARK_USER", "MINIO_SPARK_PASSWORD",
           "SPARK_AUTHENTICATE_SECRET"}
SPARK_WORKERS = ("spark-worker-1", "spark-worker-2")
DOCKER = ROOT / "docker"
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


def bind_mounts(service: dict) -> dict[str, tuple[str, str]]:
    """Container path -> (host path, mode) of each bind mount (a source starting with . or /)."""
    out = {}
    for volume in service.get("volumes", []):
        source, target, *mode = volume.split(":")
        if source.startswith((".", "/")):
            out[target] = (source, mode[0] if mode else "rw")
    return out


def named_volumes(service: dict) -> dict[str, str]:
    """Container path -> volume name of each named volume."""
    return {v.split(":")[1]: v.split(":")[0] for v in service.get("volumes", [])
            if not v.split(":")[0].startswith((".", "/"))}


# what the Airflow containers need to read of the project (container path -> host folder)
AIRFLOW_READS = {"/opt/regionchaos/regionchaos": "./regionchaos", "/opt/regionchaos/dags": "./dags",
                 "/opt/regionchaos/plugins": "./plugins", "/opt/regionchaos/expectations": "./expectations",
                 "/opt/regionchaos/spark_jobs": "./spark_jobs", "/opt/regionchaos/docker": "./docker"}


# -- services, images, ports, health checks ----------------------------------------------

def test_the_documented_services_are_the_services():
    assert {code(row["service"]) for row in doc_table("Services")} == set(SERVICES)
    assert {"postgres", "minio", "minio-init", "airflow-init", *AIRFLOW_SERVICES,
            "spark-master", "spark-worker-1", "spark-worker-2"} == set(SERVICES)


@pytest.mark.parametrize("row", doc_table("Services"), ids=lambda r: code(r["service"]))
def test_each_service_has_the_documented_image_ports_and_health_check(row):
    service = SERVICES[code(row["service"])]
    assert set(service) <= SERVICE_KEYS, set(service) - SERVICE_KEYS
    assert resolve(service["image"]).split("@")[0] == code(row["image"])  # digests: table "Image pins"
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
        assert set(AIRFLOW_READS) <= set(bind_mounts(service)), name
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
    for name in SPARK_WORKERS:
        worker = SERVICES[name]
        assert worker["entrypoint"][-2:] == ["spark-class", "org.apache.spark.deploy.worker.Worker"]
        assert worker["command"][0] == "spark://spark-master:7077"
        assert worker["image"] == SERVICES["airflow-scheduler"]["image"]  # same Python as the driver
        assert worker["hostname"] == name
        assert bind_mounts(worker)["/opt/regionchaos/regionchaos"] == ("./regionchaos", "ro")
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

def test_minio_init_runs_its_script_and_everyone_gets_endpoint_and_bucket_from_env():
    init = SERVICES["minio-init"]
    assert init["entrypoint"] == ["/bin/sh", "/opt/regionchaos/docker/minio-init.sh"]
    assert bind_mounts(init)["/opt/regionchaos/docker"] == ("./docker", "ro")
    assert init["depends_on"]["minio"]["condition"] == "service_healthy"
    for name in (*AIRFLOW_SERVICES, *SPARK_WORKERS):
        e = env(SERVICES[name])
        assert e["REGIONCHAOS_S3_ENDPOINT"] == "http://minio:9000"
        assert e["REGIONCHAOS_BUCKET"].startswith("${REGIONCHAOS_BUCKET")
    assert env(init)["REGIONCHAOS_BUCKET"] == env(SERVICES["airflow-scheduler"])["REGIONCHAOS_BUCKET"]
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
    for name in SPARK_WORKERS:
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
    assert _spark_conf(tmp_path, values["SPARK_AUTHENTICATE_SECRET"], "true").returncode == 0  # one it accepts
    forced = _compose_env("--file", str(target), "--force")
    assert forced.returncode == 0 and _env_file(target)["POSTGRES_PASSWORD"] != values["POSTGRES_PASSWORD"]


def test_compose_env_rejects_an_unknown_argument_and_writes_nothing():
    before = (ROOT / ".env").exists()
    done = _compose_env("--frce")
    assert done.returncode == 2 and "--frce" in done.stderr
    assert (ROOT / ".env").exists() == before


def test_compose_env_update_adds_only_the_missing_variables(tmp_path):
    target = tmp_path / ".env"
    target.write_text("# an .env of the previous compose file\nMINIO_ROOT_USER=kept-user\nMINIO_ROOT_PASSWORD=kept-password-1234\n")
    done = _compose_env("--file", str(target), "--update")
    assert done.returncode == 0, done.stderr
    values = _env_file(target)
    assert values["MINIO_ROOT_USER"] == "kept-user" and values["MINIO_ROOT_PASSWORD"] == "kept-password-1234"
    assert SECRETS <= set(values), SECRETS - set(values)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    again = _compose_env("--file", str(target), "--update")
    assert again.returncode == 0 and _env_file(target) == values  # nothing left to add, nothing changed
    both = _compose_env("--file", str(target), "--update", "--force")
    assert both.returncode == 2 and _env_file(target) == values


# -- 1. MinIO: scoped users; only minio-init sees the root account ----------------------------

ROOT_ACCOUNT = ("MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD")


def _variables_in(value) -> set[str]:
    return {m.group(1) for m in _INTERPOLATION.finditer(json.dumps(value))}


def test_only_minio_and_minio_init_see_the_root_account():
    seen_by = {name for name, service in SERVICES.items()
               if _variables_in({k: v for k, v in service.items() if k != "build"}) & set(ROOT_ACCOUNT)}
    assert seen_by == {"minio", "minio-init"}, seen_by
    # minio-init gets it as mc's alias variable only, not as variables a script could pass on
    init = env(SERVICES["minio-init"])
    assert resolve(init["MC_HOST_local"]) == "http://<MINIO_ROOT_USER>:<MINIO_ROOT_PASSWORD>@minio:9000"
    assert not set(init) & set(ROOT_ACCOUNT)


def test_airflow_and_spark_each_get_their_own_minio_user():
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        e = env(SERVICES[name])
        assert (resolve(e["AWS_ACCESS_KEY_ID"]), resolve(e["AWS_SECRET_ACCESS_KEY"])) == (
            "<MINIO_AIRFLOW_USER>", "<MINIO_AIRFLOW_PASSWORD>"), name
    for name in SPARK_WORKERS:
        e = env(SERVICES[name])
        assert (resolve(e["AWS_ACCESS_KEY_ID"]), resolve(e["AWS_SECRET_ACCESS_KEY"])) == (
            "<MINIO_SPARK_USER>", "<MINIO_SPARK_PASSWORD>"), name
    init = env(SERVICES["minio-init"])  # the users minio-init creates are the ones the services use
    for var in ("MINIO_AIRFLOW_USER", "MINIO_AIRFLOW_PASSWORD", "MINIO_SPARK_USER", "MINIO_SPARK_PASSWORD"):
        assert resolve(init[var]) == f"<{var}>"


def _render(role: str, bucket: str) -> dict:
    return json.loads((DOCKER / "minio" / f"policy-{role}.json").read_text().replace("@BUCKET@", bucket))


def _allowed(policy: dict) -> dict[str, set[str]]:
    """Resource -> the actions the policy allows on it."""
    out: dict[str, set[str]] = {}
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow" and "NotAction" not in statement and "NotResource" not in statement
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for resource in resources:
            out.setdefault(resource, set()).update(actions)
    return out


@pytest.mark.parametrize("role", ["airflow", "spark"])
def test_the_policies_reach_the_bucket_only_with_the_actions_of_the_role(role):
    allowed = _allowed(_render(role, "chaos-bucket"))
    assert set(allowed) <= {"arn:aws:s3:::chaos-bucket", "arn:aws:s3:::chaos-bucket/*"}, allowed
    actions = set().union(*allowed.values())
    assert not any("*" in a for a in actions) and all(a.startswith("s3:") for a in actions), actions
    expected = {
        # Airflow: the runner (HeadBucket/LIST, GET, conditional PUT, DeleteObjects of its own run)
        "airflow": {"arn:aws:s3:::chaos-bucket": {"s3:ListBucket"},
                    "arn:aws:s3:::chaos-bucket/*": {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}},
        # Spark executors: PUT state files and sink transactions, GET swarm table parts
        "spark": {"arn:aws:s3:::chaos-bucket/*": {"s3:GetObject", "s3:PutObject"}},
    }[role]
    assert allowed == expected


FAKE_MC = r"""#!/bin/sh
# A stand-in for mc (sh, so it starts fast): one log line per call, tab-separated:
# MC_HOST_local, then argv; `admin user add` logs its stdin, `admin policy create` keeps the file.
line="$MC_HOST_local"
for arg in "$@"; do line="$line	$arg"; done
printf '%s\n' "$line" >> "$FAKE_MC_LOG"
case "$1 $2 $3" in
  "admin user add") printf 'stdin	%s	%s\n' "$5" "$(cat)" >> "$FAKE_MC_LOG" ;;
  "admin policy create") cp "$6" "$FAKE_MC_LOG.$5.json" ;;
  "admin policy attach")
    case ",$FAKE_MC_ATTACHED," in
      *",$5,"*) echo "mc: <ERROR> Unable to attach the policy: policy change is already in effect" >&2; exit 1 ;;
    esac ;;
  "admin user info") printf 'AccessKey: %s\nStatus: enabled\nPolicyName: %s\n' "$5" "$FAKE_MC_INFO" ;;
esac
"""

INIT_ENV = {"MC_HOST_local": "http://root-user:root-password-0123456789@minio:9000",
            "REGIONCHAOS_BUCKET": "chaos-bucket",
            "MINIO_AIRFLOW_USER": "airflow-user", "MINIO_AIRFLOW_PASSWORD": "airflow-password-0123456789",
            "MINIO_SPARK_USER": "spark-user", "MINIO_SPARK_PASSWORD": "spark-password-0123456789"}


def _minio_init(tmp_path: Path, **extra: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """Run docker/minio-init.sh with the stand-in mc; its calls as {argv, mc_host, stdin, policy}."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "mc").write_text(FAKE_MC)
    (bin_dir / "mc").chmod(0o755)
    log = tmp_path / "mc.log"
    log.unlink(missing_ok=True)
    environment = {"PATH": f"{bin_dir}:/usr/bin:/bin", "TMPDIR": str(tmp_path), "FAKE_MC_LOG": str(log),
                   **INIT_ENV, **extra}
    done = subprocess.run(["sh", str(DOCKER / "minio-init.sh")], env=environment, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)
    calls: list[dict] = []
    for line in (log.read_text().splitlines() if log.exists() else []):
        fields = line.split("\t")
        if fields[0] == "stdin":
            calls[-1]["stdin"] = fields[2]
            continue
        call = {"mc_host": fields[0], "argv": fields[1:]}
        if call["argv"][:3] == ["admin", "policy", "create"]:
            call["policy"] = json.loads(Path(f"{log}.{call['argv'][4]}.json").read_text())
        calls.append(call)
    return done, calls


def test_minio_init_creates_bucket_policies_and_users_with_no_secret_on_a_command_line(tmp_path):
    done, calls = _minio_init(tmp_path)
    assert done.returncode == 0, done.stderr
    argv = [c["argv"] for c in calls]
    secrets_ = ["root-password-0123456789", "airflow-password-0123456789", "spark-password-0123456789"]
    assert not [a for a in argv if any(s in " ".join(a) for s in secrets_)], argv
    assert all(c["mc_host"] == INIT_ENV["MC_HOST_local"] for c in calls)  # the alias comes from the env
    assert ["mb", "--ignore-existing", "local/chaos-bucket"] in argv
    assert ["anonymous", "set", "none", "local/chaos-bucket"] in argv
    created = {c["argv"][4]: c["policy"] for c in calls if c["argv"][:3] == ["admin", "policy", "create"]}
    assert created == {"regionchaos-airflow": _render("airflow", "chaos-bucket"),
                       "regionchaos-spark": _render("spark", "chaos-bucket")}
    added = {c["argv"][4]: c["stdin"] for c in calls if c["argv"][:3] == ["admin", "user", "add"]}
    assert added == {"airflow-user": "airflow-password-0123456789", "spark-user": "spark-password-0123456789"}
    assert ["admin", "policy", "attach", "local", "regionchaos-airflow", "--user", "airflow-user"] in argv
    assert ["admin", "policy", "attach", "local", "regionchaos-spark", "--user", "spark-user"] in argv
    # users are created after the policies they get
    first_attach = next(i for i, a in enumerate(argv) if a[:3] == ["admin", "policy", "attach"])
    assert max(i for i, a in enumerate(argv) if a[:3] == ["admin", "policy", "create"]) < first_attach


def test_minio_init_is_idempotent_and_fails_when_a_policy_cannot_be_attached(tmp_path):
    again, _ = _minio_init(tmp_path, FAKE_MC_ATTACHED="regionchaos-airflow",
                           FAKE_MC_INFO="regionchaos-airflow")
    assert again.returncode == 0, again.stderr  # attached before: fine
    refused, _ = _minio_init(tmp_path, FAKE_MC_ATTACHED="regionchaos-spark", FAKE_MC_INFO="readwrite")
    assert refused.returncode != 0 and "regionchaos-spark" in refused.stderr


@pytest.mark.parametrize("variable, value", [("REGIONCHAOS_BUCKET", "Bad_Bucket"), ("REGIONCHAOS_BUCKET", "a/b"),
                                             ("MINIO_SPARK_PASSWORD", ""), ("MINIO_AIRFLOW_USER", "x y"),
                                             ("MINIO_SPARK_USER", "airflow-user")])
def test_minio_init_refuses_bad_settings_before_calling_mc(tmp_path, variable, value):
    done, calls = _minio_init(tmp_path, **{variable: value})
    assert done.returncode == 2 and variable in done.stderr, done.stderr
    assert calls == []


# -- 2. the project is mounted read-only, folder by folder; .env never ---------------------------

def test_no_container_mounts_the_project_root_or_the_env_file():
    for name, service in SERVICES.items():
        for target, (source, _) in bind_mounts(service).items():
            folder = source.removeprefix("./").split("/")[0]
            assert source not in (".", "./") and folder not in ("", ".env", ".git", ".venv"), (name, source)
            assert source.startswith("./") and (ROOT / source).is_dir(), (name, source)


def test_bind_mounts_are_read_only_and_only_volumes_and_tmpfs_are_writable():
    for name, service in SERVICES.items():
        for target, (source, mode) in bind_mounts(service).items():
            assert mode == "ro", (name, source, target)
    writable = {name: set(named_volumes(service).values()) for name, service in SERVICES.items()}
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        assert bind_mounts(SERVICES[name]) == {t: (s, "ro") for t, s in AIRFLOW_READS.items()}, name
        assert writable[name] == {"airflow-logs", "airflow-auth", "airflow-scratch"}, name
        assert env(SERVICES[name])["REGIONCHAOS_LOCAL_DIR"].startswith("/opt/airflow/scratch/")
    assert writable["postgres"] == {"postgres-db"} and writable["minio"] == {"minio-data"}
    assert not any(writable[n] for n in ("minio-init", "spark-master", *SPARK_WORKERS))


def test_what_the_code_reads_lies_in_the_mounted_folders():
    # the Spark job spark-submit sends, the suites the judge reads, the DAGs and the plugin
    operators = (ROOT / "plugins" / "regionchaos_airflow" / "operators.py").read_text()
    assert 'PROJECT_ROOT / "spark_jobs" / "emulate.py"' in operators
    assert '.parents[2] / "expectations"' in (ROOT / "regionchaos" / "judge" / "suites.py").read_text()
    mounted = set(AIRFLOW_READS)
    e = env(SERVICES["airflow-scheduler"])
    assert {e["AIRFLOW__CORE__DAGS_FOLDER"], e["AIRFLOW__CORE__PLUGINS_FOLDER"]} <= mounted
    assert "/opt/regionchaos/spark_jobs" in mounted and "/opt/regionchaos/expectations" in mounted


# -- 3. capabilities, privileges, read-only root file systems, limits -----------------------------

MEMORY = re.compile(r"^[0-9]+[kmg]$")


def _exceptions(kind: str) -> set[str]:
    """Services docs/COMPOSE.md names as exceptions of one kind (table "Least privilege: exceptions")."""
    return {code(row["service"]) for row in doc_table("Least privilege: exceptions") if row["rule"] == kind}


def test_every_service_drops_all_capabilities_and_cannot_gain_privileges():
    for name, service in SERVICES.items():
        assert service.get("cap_drop") == ["ALL"], name
        assert "cap_add" not in service, name
        assert "no-new-privileges:true" in service.get("security_opt", []), name
        assert not service.get("privileged") and service.get("network_mode") != "host", name


def test_every_service_has_a_read_only_root_file_system_with_a_tmpfs_for_tmp():
    assert _exceptions("read_only") == set()  # none needed today: keep the table honest
    for name, service in SERVICES.items():
        assert service.get("read_only") is True, name
        tmpfs = {entry.split(":")[0]: entry for entry in service.get("tmpfs", [])}
        assert "/tmp" in tmpfs and "size=" in tmpfs["/tmp"], name


def test_every_service_has_memory_cpu_and_process_limits():
    for name, service in SERVICES.items():
        assert MEMORY.match(resolve(str(service.get("mem_limit", "")))), name
        assert 0 < float(resolve(str(service.get("cpus", "0")))) <= 4, name
        assert 0 < int(service.get("pids_limit", 0)) <= 8192, name
    # a worker's limit leaves room for the executor memory it offers, the worker JVM and Python
    worker = SERVICES["spark-worker-1"]
    offered = worker["command"][worker["command"].index("--memory") + 1]
    assert int(resolve(offered)[:-1]) < int(resolve(worker["mem_limit"])[:-1])
    assert resolve(worker["cpus"]) == resolve(worker["command"][worker["command"].index("--cores") + 1])


def _table_with_header(header: str) -> list[dict[str, str]]:
    """The markdown table of docs/COMPOSE.md whose header line starts with ``header``."""
    lines = DOC[DOC.index(header):].split("\n\n", 1)[0].splitlines()
    columns = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(columns, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]


def test_the_documented_limits_are_the_limits():
    documented = {}
    for row in _table_with_header("| service | memory | CPUs | processes | /tmp |"):
        for name in re.findall(r"`([a-z0-9*-]+)`", row["service"]):
            documented[name] = row
    for name, service in SERVICES.items():
        row = documented.get(name) or documented[re.sub(r"-[0-9]+$", "-*", name)]
        memory = re.sub(r"`([A-Z_]+)` \((\w+)\)", r"${\1:-\2}", row["memory"])
        cpus = re.sub(r"`([A-Z_]+)` \((\w+)\)", r"${\1:-\2}", row["CPUs"])
        assert (memory, cpus, row["processes"]) == (
            str(service["mem_limit"]), str(service["cpus"]).removesuffix(".0"), str(service["pids_limit"])), name
        tmpfs = {e.split(":")[0]: e for e in service["tmpfs"]}
        assert tmpfs["/tmp"].endswith("size=" + row["/tmp"].split()[0]), name


def test_no_container_runs_as_root_except_the_documented_ones():
    dockerfile = SERVICES["airflow-apiserver"]["build"]["dockerfile_inline"]
    image_user = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")][-1]
    assert image_user == "airflow"
    as_root = set()
    for name, service in SERVICES.items():
        user = str(service.get("user", image_user if "build" in service else "0"))
        if user.split(":")[0] in ("0", "root"):
            as_root.add(name)
    assert as_root == _exceptions("runs as root") == {"minio"}, as_root


def test_airflow_writes_its_config_file_into_the_tmpfs():
    # every `airflow` command writes airflow.cfg when it is missing; the root file system is read-only
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        assert env(SERVICES[name])["AIRFLOW_CONFIG"].startswith("/tmp/"), name
    assert "--certs-dir" in SERVICES["minio"]["command"]  # MinIO creates its certs folder at start
    certs = SERVICES["minio"]["command"][SERVICES["minio"]["command"].index("--certs-dir") + 1]
    assert certs.startswith("/tmp/")


# -- 4. Spark: spark.authenticate with a secret from .env ------------------------------------------

SPARK_PROCESSES = ("spark-master", *SPARK_WORKERS, "airflow-scheduler")


def test_spark_master_workers_and_the_submitting_scheduler_start_through_spark_conf():
    for name in SPARK_PROCESSES:
        service = SERVICES[name]
        start = [*service["entrypoint"], *([service["command"]] if isinstance(service["command"], str)
                                          else service["command"])]
        i = start.index("/opt/regionchaos/docker/spark-conf.sh")
        assert start[i - 1] == "/bin/sh" and len(start) > i + 1, name
        assert bind_mounts(service)["/opt/regionchaos/docker"] == ("./docker", "ro"), name
        e = env(service)
        assert resolve(e["SPARK_AUTHENTICATE_SECRET"]) == "<SPARK_AUTHENTICATE_SECRET>", name
        assert e["SPARK_CONF_DIR"].startswith("/tmp/"), name  # written at start, into the tmpfs
    # the scheduler still runs Airflow's own entrypoint after it; the master the image's
    assert SERVICES["airflow-scheduler"]["entrypoint"][2:] == ["/usr/bin/dumb-init", "--", "/entrypoint"]
    assert SERVICES["spark-master"]["entrypoint"][0] == "/opt/entrypoint.sh"
    # and nobody else holds the secret
    holders = {n for n, s in SERVICES.items() if "SPARK_AUTHENTICATE_SECRET" in _variables_in(s.get("environment"))}
    assert holders == set(SPARK_PROCESSES)


SECRET = "s3cr3t-" + "x" * 40


def _spark_conf(tmp_path: Path, secret: str | None, *command: str) -> subprocess.CompletedProcess:
    environment = {"PATH": os.environ["PATH"], "SPARK_CONF_DIR": str(tmp_path / "conf")}
    if secret is not None:
        environment["SPARK_AUTHENTICATE_SECRET"] = secret
    return subprocess.run(["sh", str(DOCKER / "spark-conf.sh"), *command], env=environment,
                          capture_output=True, text=True, timeout=30)


def test_spark_conf_writes_the_secret_into_a_private_defaults_file_and_hides_it_from_the_command(tmp_path):
    done = _spark_conf(tmp_path, SECRET, sys.executable, "-c",
                       "import os, sys; print(sorted(os.environ)); print(sys.argv)")
    assert done.returncode == 0, done.stderr
    assert "SPARK_AUTHENTICATE_SECRET" not in done.stdout and SECRET not in done.stdout
    conf_file = tmp_path / "conf" / "spark-defaults.conf"
    conf = dict(line.split(" ", 1) for line in conf_file.read_text().splitlines() if line and not line.startswith("#"))
    assert conf["spark.authenticate"] == "true" and conf["spark.authenticate.secret"] == SECRET
    assert conf["spark.master.rest.enabled"] == "false"  # no unauthenticated REST submissions
    assert stat.S_IMODE(conf_file.stat().st_mode) == 0o600


@pytest.mark.parametrize("secret", [None, "", "short-secret", "x" * 40 + " y", "x" * 40 + "$(id)"])
def test_spark_conf_refuses_a_missing_or_weak_secret_and_starts_nothing(tmp_path, secret):
    marker = tmp_path / "started"
    done = _spark_conf(tmp_path, secret, "touch", str(marker))
    assert done.returncode == 2 and "SPARK_AUTHENTICATE_SECRET" in done.stderr
    assert not marker.exists() and not (tmp_path / "conf" / "spark-defaults.conf").exists()


# -- 5. the worker health check asks the master; no password on mc's command line ------------------

def test_the_worker_health_check_asks_the_master_for_this_worker():
    for name in SPARK_WORKERS:
        worker = SERVICES[name]
        test = worker["healthcheck"]["test"]
        assert test[:3] == ["CMD", "python", "/opt/regionchaos/docker/spark-worker-health.py"], test
        args = dict(zip(test[3::2], test[4::2]))
        webui_port = worker["command"][worker["command"].index("--webui-port") + 1]
        assert args["--worker"] == f"http://127.0.0.1:{webui_port}"
        master_ui = SERVICES["spark-master"]["command"]
        assert args["--master"] == f"http://spark-master:{master_ui[master_ui.index('--webui-port') + 1]}"
        assert "/dev/tcp" not in json.dumps(test)


class _FakeUI:
    """A Spark web UI on 127.0.0.1 answering /json/ with a fixed document (None: 500)."""

    def __init__(self, document):
        self.document = document
        ui = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                if self.path.rstrip("/") != "/json" or ui.document is None:
                    self.send_error(500 if ui.document is None else 404)
                    return
                body = json.dumps(ui.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def spark_uis():
    worker = _FakeUI({"id": "worker-1", "masterurl": "spark://spark-master:7077", "cores": 2})
    master = _FakeUI({"status": "ALIVE", "workers": [{"id": "worker-0", "state": "DEAD"},
                                                     {"id": "worker-1", "state": "ALIVE"}]})
    yield worker, master
    worker.close()
    master.close()


def _health_module():
    spec = importlib.util.spec_from_file_location("spark_worker_health", DOCKER / "spark-worker-health.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_worker_health_is_good_only_when_the_master_lists_the_worker_alive(spark_uis):
    worker, master = spark_uis
    check = _health_module().check
    assert check(worker.url, master.url, 2) is None
    master.document = {"workers": [{"id": "worker-1", "state": "DEAD"}]}
    assert "worker-1 as DEAD" in check(worker.url, master.url, 2)
    master.document = {"workers": [{"id": "worker-0", "state": "ALIVE"}]}
    assert "does not list worker worker-1" in check(worker.url, master.url, 2)
    master.document = None
    assert "master UI" in check(worker.url, master.url, 2)
    master.document = {"workers": [{"id": "worker-1", "state": "ALIVE"}]}
    worker.document = {"id": "worker-1", "masterurl": ""}  # the port is open, the worker never registered
    assert "not registered" in check(worker.url, master.url, 2)
    worker.close()
    assert "worker UI" in check(worker.url, master.url, 2)


def test_worker_health_command_exits_0_when_alive_and_1_otherwise(spark_uis):
    worker, master = spark_uis

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(DOCKER / "spark-worker-health.py"), "--worker", worker.url,
                               "--master", master.url, "--timeout-s", "2"], capture_output=True, text=True, timeout=30)

    assert run().returncode == 0
    master.document = {"workers": [{"id": "worker-1", "state": "DECOMMISSIONED"}]}
    done = run()
    assert done.returncode == 1 and "DECOMMISSIONED" in done.stderr


def test_no_password_on_any_command_line_of_the_file():
    for name, service in SERVICES.items():
        started = json.dumps([service.get("entrypoint"), service.get("command"),
                              service.get("healthcheck", {}).get("test")])
        assert not {v for v in _variables_in(started) if v in SECRETS}, name
        assert "MINIO_ROOT" not in started and "mc alias set" not in started, name


# -- 6. images pinned by digest, or listed with the reason ------------------------------------------

DIGEST = re.compile(r"^[a-z0-9][a-z0-9./_-]*:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$")


def _images() -> dict[str, str]:
    """Every image the stack pulls or builds from (resolved default) -> where it is used."""
    found = {}
    for name, service in SERVICES.items():
        found.setdefault(resolve(service["image"]), name)
        for line in (service.get("build") or {}).get("dockerfile_inline", "").splitlines():
            if line.startswith("FROM "):
                found.setdefault(line.split()[1], f"{name} (build)")
    return found


def test_every_image_is_digest_pinned_or_listed_with_the_reason():
    rows = {code(row["image"]): row for row in doc_table("Image pins")}
    images = _images()
    assert set(rows) == set(images), set(rows) ^ set(images)
    tag_only = set()
    for image, row in rows.items():
        if "@sha256:" in image:
            assert DIGEST.match(image), image
            assert row["pinned"] == "digest", image
        else:
            assert ":" in image and not image.endswith(":latest"), image
            assert row["pinned"] == "tag only" and len(row["reason"]) > 20, image
            tag_only.add(image)
    # what stays tag-pinned is the list: each with its reason, no more
    assert tag_only == {"apache/spark:4.1.3-scala2.13-java17-ubuntu", "apache/airflow:3.3.2-python3.11",
                        "regionchaos-airflow:3.3.2-spark4.1.3"}
    for command in ("docker buildx imagetools inspect", "docker inspect --format"):
        assert command in DOC


def test_the_overridable_images_default_to_their_digests():
    used = _interpolations()
    for variable, service in (("MINIO_IMAGE", "minio"), ("MC_IMAGE", "minio-init")):
        (default,) = used[variable]
        assert DIGEST.match(default) and resolve(SERVICES[service]["image"]) == default
