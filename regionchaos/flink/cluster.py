"""A standalone Flink cluster on 127.0.0.1: 1 JobManager and K TaskManagers, started, killed and stopped from Python.

In:  a `FlinkDist`, a scratch folder (the cluster's conf/, log/, pid/, tmp/ go under it), a `ClusterSpec`.
Out: a running cluster: its REST client (`rest`), `submit` (``flink run -d``, ``-s CHK`` to resume),
     `kill` (SIGKILL of one process: ``jm``, ``tm-0``...), `start_jobmanager` / `start_taskmanager`
     (replacements), `live_taskmanagers`. Used as a context manager it stops EVERY process it started
     (SIGTERM, then SIGKILL after a grace period), also on an error, Ctrl-C or SIGTERM; `started_pids`
     lists them all for checking.

Every listening socket is on loopback (``*.bind-host``, ``rest.bind-address``) and every port is chosen
free when the cluster (JobManager RPC, REST, blob) or a TaskManager (its RPC and data ports) starts, so
clusters never clash with each other or with fixed defaults (8081, 6123). The processes run in the
foreground (``jobmanager.sh start-foreground`` execs the JVM: the child's pid is the JVM's) in their own
session, their console output in ``log/NAME.out``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from regionchaos.flink.dist import FlinkDist
from regionchaos.flink.rest import FlinkRest, wait_until

LOOPBACK = "127.0.0.1"
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class ClusterSpec:
    """The cluster's shape: TaskManagers, slots each, memory per process, heartbeats (ms)."""

    taskmanagers: int = 2
    slots: int = 2
    process_memory: str = "1g"
    heartbeat_interval_ms: int = 2000  # lower is unsafe on 2 cores
    heartbeat_timeout_ms: int = 10000  # without these, one TM kill causes several restarts
    extra: dict[str, str] = field(default_factory=dict)


def free_port() -> int:
    """A port nothing listens on now on 127.0.0.1 (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def cluster_config(spec: ClusterSpec, ports: dict[str, int], scratch: Path) -> dict[str, str]:
    """The config.yaml keys of a loopback cluster with these ports (flat keys, string values)."""
    conf = {
        "jobmanager.rpc.address": LOOPBACK, "jobmanager.bind-host": LOOPBACK,
        "jobmanager.rpc.port": str(ports["rpc"]),
        "taskmanager.host": LOOPBACK, "taskmanager.bind-host": LOOPBACK,
        "rest.address": LOOPBACK, "rest.bind-address": LOOPBACK, "rest.port": str(ports["rest"]),
        "blob.server.port": str(ports["blob"]),
        "jobmanager.memory.process.size": spec.process_memory,
        "taskmanager.memory.process.size": spec.process_memory,
        "taskmanager.numberOfTaskSlots": str(spec.slots),
        "taskmanager.memory.managed.fraction": "0.2",
        "heartbeat.interval": str(spec.heartbeat_interval_ms),
        "heartbeat.timeout": str(spec.heartbeat_timeout_ms),
        "web.refresh-interval": "500",
        "rest.cache.checkpoint-statistics.timeout": "500 ms",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "1000",
        "restart-strategy.fixed-delay.delay": "1 s",
        # a TaskManager that lost its JobManager retries the new one after error-delay (default 10 s:
        # measured here, it doubled the time a JobManager kill takes to resume)
        "cluster.registration.error-delay": "1000",
        "cluster.registration.max-timeout": "5000",
        "io.tmp.dirs": str(scratch / "tmp"),
    }
    conf.update(spec.extra)
    return conf


def dist_defaults(dist: FlinkDist) -> dict[str, str]:
    """The distribution's own conf/config.yaml, flattened to dotted keys (its env.java.opts.all opens
    the JDK modules Flink needs; another distribution may carry other defaults)."""
    path = dist.home / "conf" / "config.yaml"
    tree = yaml.safe_load(path.read_text()) if path.is_file() else None
    return _flatten(tree or {})


def _flatten(tree: dict, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = str(value)
    return flat


def write_conf_dir(dist: FlinkDist, conf_dir: Path, conf: dict[str, str]) -> None:
    """conf_dir/config.yaml: the distribution's defaults overlaid by conf, beside its logging files."""
    conf_dir.mkdir(parents=True, exist_ok=True)
    for source in (dist.home / "conf").iterdir():
        if source.name.startswith(("log4j", "logback")):
            shutil.copy(source, conf_dir / source.name)
    merged = {**dist_defaults(dist), **conf}
    lines = [f"{key}: {_yaml_string(value)}" for key, value in sorted(merged.items())]
    (conf_dir / "config.yaml").write_text("\n".join(lines) + "\n")


def _yaml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class FlinkCluster:
    """One loopback cluster; see the module docstring."""

    def __init__(self, dist: FlinkDist, scratch: Path, spec: ClusterSpec | None = None) -> None:
        self.dist, self.scratch, self.spec = dist, Path(scratch), spec or ClusterSpec()
        self.conf_dir, self.log_dir = self.scratch / "conf", self.scratch / "log"
        self.ports = {"rpc": free_port(), "rest": free_port(), "blob": free_port()}
        self.rest = FlinkRest(self.ports["rest"])
        self.processes: dict[str, subprocess.Popen] = {}
        self.started_pids: list[int] = []
        self._tm_count = 0
        self._jm_count = 0
        self._old_sigterm = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, timeout_s: float = 90.0) -> FlinkCluster:
        for sub in ("log", "pid", "tmp"):
            (self.scratch / sub).mkdir(parents=True, exist_ok=True)
        write_conf_dir(self.dist, self.conf_dir, cluster_config(self.spec, self.ports, self.scratch))
        self.start_jobmanager()
        for _ in range(self.spec.taskmanagers):
            self.start_taskmanager()
        self.wait_registered(self.spec.taskmanagers, timeout_s)
        return self

    def __enter__(self) -> FlinkCluster:
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, _raise_exit)
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def stop(self) -> None:
        """SIGTERM every process still running, SIGKILL what is left after STOP_GRACE_S, reap all."""
        running = [proc for proc in self.processes.values() if proc.poll() is None]
        for proc in running:
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in running:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()

    # -- processes ---------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(FLINK_CONF_DIR=str(self.conf_dir), FLINK_LOG_DIR=str(self.log_dir),
                   FLINK_PID_DIR=str(self.scratch / "pid"))
        env.pop("FLINK_HOME", None)  # the scripts find their own home
        return env

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        with open(self.log_dir / f"{name}.out", "ab") as out:
            proc = subprocess.Popen(argv, env=self._env(), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes[name] = proc
        self.started_pids.append(proc.pid)
        return proc

    def start_jobmanager(self) -> str:
        """Start a JobManager (the first, or a replacement after a kill); its name (``jm-N``)."""
        name = f"jm-{self._jm_count}"
        self._jm_count += 1
        self._spawn(name, [str(self.dist.bin("jobmanager.sh")), "start-foreground"])
        return name

    def start_taskmanager(self) -> str:
        """Start a TaskManager on free RPC and data ports; its name (``tm-N``, also its resource id)."""
        name = f"tm-{self._tm_count}"
        self._tm_count += 1
        self._spawn(name, [str(self.dist.bin("taskmanager.sh")), "start-foreground",
                           "-D", f"taskmanager.resource-id={name}",
                           "-D", f"taskmanager.rpc.port={free_port()}",
                           "-D", f"taskmanager.data.port={free_port()}"])
        return name

    def kill(self, name: str) -> None:
        """kill -9 one process (``jm-N`` or ``tm-N``) and reap it."""
        proc = self.processes[name]
        _signal_group(proc, signal.SIGKILL)
        proc.wait()

    def live(self, prefix: str) -> list[str]:
        return [name for name, proc in self.processes.items() if name.startswith(prefix) and proc.poll() is None]

    def live_taskmanagers(self) -> list[str]:
        return self.live("tm-")

    def wait_registered(self, taskmanagers: int, timeout_s: float = 90.0) -> None:
        """Until the REST endpoint answers and `taskmanagers` TaskManagers are registered."""
        def probe() -> bool | None:
            self._check_alive()
            return True if self.rest.overview().get("taskmanagers", 0) >= taskmanagers else None
        wait_until(probe, timeout_s, f"{taskmanagers} TaskManagers registered at {self.rest.base}")

    def _check_alive(self) -> None:
        for name in self.live("jm-") or ["jm-?"]:
            if name == "jm-?":
                raise RuntimeError(f"no JobManager running; see {self.log_dir}")

    # -- jobs --------------------------------------------------------------------------------
    def submit(self, jar: Path, main_class: str, args: list[str], conf: dict[str, str],
               restore_from: Path | None = None, timeout_s: float = 120.0) -> str:
        """``flink run -d`` the jar's main class with -D conf (from a checkpoint with -s); the job id."""
        argv = [str(self.dist.bin("flink")), "run", "-d", "-c", main_class]
        for key, value in sorted(conf.items()):
            argv += ["-D", f"{key}={value}"]
        if restore_from is not None:
            argv += ["-s", str(restore_from)]
        done = subprocess.run([*argv, str(jar), *args], env=self._env(), capture_output=True, text=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL)
        match = re.search(r"JobID ([0-9a-f]{32})", done.stdout)
        if done.returncode != 0 or not match:
            tail = (done.stdout + done.stderr).strip()[-2000:]
            raise RuntimeError(f"flink run failed (exit {done.returncode}): {tail}")
        return match.group(1)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # its own session: the JVM and anything it started
    except (ProcessLookupError, PermissionError):
        pass


def _raise_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
