"""Anchor benchmark: a real Apache Flink job next to this project's emulation, same shape.

    .venv/bin/python -m bench.flink_anchor [--seconds 60] [--parallelism 16] [--checkpoints 200]
                                          [--json bench/results/flink_anchor/flink_anchor.json]
                                          [--md bench/results/flink_anchor/README.md]

NOT part of CI or the tests. It answers one question: how many subtask-checkpoints per second
does real Flink complete on this machine, compared with how many the emulation (and the whole
emulate + validate + report run) gets through?

Flink side: a virtualenv at bench/.flink-venv (created on the first run, reused after) with the
pinned ``apache-flink`` from PyPI. For each ``--job``, a child process runs a small PyFlink program
(embedded below) on a local MiniCluster: a rate-limited ``datagen`` source -> keyBy -> a keyed
counter, parallelism P, for ``--seconds`` after all tasks run, with checkpointing as fast as Flink
allows (10 ms interval, the minimum Flink accepts; min pause 0; ``--max-concurrent`` concurrent
checkpoints; aligned, exactly-once; HashMap state, filesystem checkpoint storage in a temp dir; no
faults). The keyed counter is a Python KeyedProcessFunction with a ValueState, its Python run in the
JVM (``python``, thread mode) or in Python worker processes (``python-process``, Beam), or SQL's
``GROUP BY k COUNT(*)`` (``sql``, JVM only). The REST API, bound to 127.0.0.1, gives the completed
checkpoints, each checkpoint's acknowledged subtasks and the vertices' parallelism.
Flink subtask-checkpoints/s = sum over completed checkpoints of acknowledged subtasks / seconds
from "all tasks RUNNING" to the final statistics request.

Project side: ``regionchaos run --scenario smoke`` at the same parallelism, fault-free
(decline, timeout and subtask_crash set to 0; the other fault kinds are 0 in ``smoke``),
``--checkpoints`` fault-phase checkpoints (+ the scenario's heal checkpoints), ``--json``.
Subtask-checkpoints = completed checkpoints (stats global + regional) x tasks per checkpoint
(the emulator's job graph: a source and a process vertex, each of parallelism P, so 2P),
divided by the emulation seconds (``wall_seconds.emulate``) and by the end-to-end seconds
(emulate + validate + report).

Out: one JSON object on stdout (and to ``--json PATH``), a markdown table and how to read it with
``--md PATH`` (``--from-json PATH --md PATH`` re-renders it from a stored JSON without running).
Exit codes: 0 measured, 2 set-up failed (venv, pip install, no Java), 3 a side failed to run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "bench" / ".flink-venv"
FLINK_VERSION = "2.2.0"  # PyPI apache-flink; PyFlink 2.x: Python 3.9-3.12, Java 11/17/21
REGIONCHAOS = ROOT / ".venv" / "bin" / "regionchaos"
PROJECT_TASK_VERTICES = 2  # regionchaos.emulator.job_graph: a "source" and a "process" vertex of parallelism P

# The PyFlink program the child process runs (written to a temp file, run with the venv's python).
JOB = r'''
import collections, json, sys, time, urllib.request

args = json.loads(sys.argv[1])
t_import = time.time()
from pyflink.common import Configuration, Types
from pyflink.datastream import StreamExecutionEnvironment, CheckpointingMode
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor
from pyflink.table import StreamTableEnvironment
import pyflink


def log(msg):
    print(f"[flink-job {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Counter(KeyedProcessFunction):
    """ValueState counter per key; emits nothing (the sink only terminates the graph)."""

    def open(self, ctx: RuntimeContext):
        self.count = ctx.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        return iter(())


P = args["parallelism"]
port = args["rest_port"]
conf = Configuration()
for k, v in {
    "rest.bind-address": "127.0.0.1", "rest.address": "127.0.0.1",
    "rest.port": str(port), "rest.bind-port": str(port),
    "jobmanager.bind-host": "127.0.0.1", "jobmanager.rpc.address": "127.0.0.1",
    "taskmanager.bind-host": "127.0.0.1", "taskmanager.host": "127.0.0.1",
    "taskmanager.numberOfTaskSlots": str(P), "parallelism.default": str(P),
    "python.executable": sys.executable, "python.client.executable": sys.executable,
    "python.execution-mode": "process" if args["job"] == "python-process" else "thread",
    "execution.checkpointing.interval": f"{args['interval_ms']} ms",
    "execution.checkpointing.min-pause": "0 ms",
    "execution.checkpointing.max-concurrent-checkpoints": str(args["max_concurrent"]),
    "execution.checkpointing.mode": "EXACTLY_ONCE",
    "execution.checkpointing.unaligned.enabled": "false",
    "execution.checkpointing.tolerable-failed-checkpoints": "1000000",
    "execution.checkpointing.storage": "filesystem",
    "execution.checkpointing.dir": args["checkpoint_dir"],
    "web.checkpoints.history": "1000000",
    "web.refresh-interval": "100",
    "rest.cache.checkpoint-statistics.timeout": "100 ms",
}.items():
    conf.set_string(k, v)

env = StreamExecutionEnvironment.get_execution_environment(conf)
env.set_parallelism(P)
env.enable_checkpointing(args["interval_ms"], CheckpointingMode.EXACTLY_ONCE)
cc = env.get_checkpoint_config()
cc.set_min_pause_between_checkpoints(0)
cc.set_max_concurrent_checkpoints(args["max_concurrent"])
cc.set_tolerable_checkpoint_failure_number(1000000)

t_env = StreamTableEnvironment.create(env)
t_env.execute_sql(f"""
    CREATE TABLE src (k INT, v BIGINT) WITH (
        'connector' = 'datagen', 'rows-per-second' = '{args["rate"]}',
        'fields.k.min' = '0', 'fields.k.max' = '{args["keys"] - 1}')""")
if args["job"].startswith("python"):  # DataStream API: a Python KeyedProcessFunction with a ValueState counter
    stream = t_env.to_data_stream(t_env.from_path("src"))
    (stream.key_by(lambda row: row[0], key_type=Types.INT())
           .process(Counter(), output_type=Types.LONG()).name("counter")
           .print().name("sink"))
else:  # the same shape in the JVM only: SQL GROUP BY k COUNT(*) (a keyed ValueState accumulator per key)
    t_env.execute_sql("CREATE TABLE snk (k INT, c BIGINT) WITH ('connector' = 'blackhole')")

base = f"http://127.0.0.1:{port}"


def get(path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.loads(r.read())


t_submit = time.time()
if args["job"].startswith("python"):
    client = env.execute_async("flink-anchor-" + args["job"])
else:
    client = t_env.execute_sql("INSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k").get_job_client()
job_id = str(client.get_job_id())
log(f"submitted job {job_id}, REST on {base}")
deadline = time.time() + args["startup_timeout"]
job = None
while time.time() < deadline:
    try:
        job = get(f"/jobs/{job_id}")
        if job["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"]):
            break
    except Exception as exc:  # the REST endpoint may not be up yet
        job = {"error": repr(exc)}
    time.sleep(0.1)
else:
    log(f"tasks not all RUNNING after {args['startup_timeout']} s: {str(job)[:1500]}")
    try:
        exc = get(f"/jobs/{job_id}/exceptions")
        log("root exception: " + str(exc.get("rootException") or exc.get("exceptionHistory"))[:6000])
    except Exception as e:
        log(f"no exceptions from REST: {e!r}")
    sys.exit(3)
t0 = time.time()
try:
    counts_at_running = get(f"/jobs/{job_id}/checkpoints")["counts"]
except Exception as exc:
    counts_at_running = {"error": repr(exc)}
log(f"all tasks RUNNING after {t0 - t_submit:.1f} s; measuring for {args['seconds']} s")
progress = []
while time.time() < t0 + args["seconds"]:
    time.sleep(min(5.0, max(0.0, t0 + args["seconds"] - time.time())))
    c = get(f"/jobs/{job_id}/checkpoints")["counts"]
    progress.append({"t": round(time.time() - t0, 1), **c})
    log(f"t={time.time() - t0:5.1f}s checkpoints {c}")
t1 = time.time()
stats = get(f"/jobs/{job_id}/checkpoints")
t1_done = time.time()
job = get(f"/jobs/{job_id}")
ck_config = get(f"/jobs/{job_id}/checkpoints/config")
config_seen = get(f"/jobs/{job_id}/jobmanager/config")
try:
    taskmanagers = get("/taskmanagers")
except Exception as exc:
    taskmanagers = {"error": repr(exc)}
import os
ck_root = args["checkpoint_dir"].removeprefix("file://")
ck_files = sorted(os.path.relpath(os.path.join(d, f), ck_root) for d, _, fs in os.walk(ck_root) for f in fs)
ck_bytes = sum(os.path.getsize(os.path.join(ck_root, f)) for f in ck_files if os.path.exists(os.path.join(ck_root, f)))
log("cancelling")
try:
    client.cancel().result()
except Exception as exc:
    log(f"cancel: {exc!r}")
history = stats.get("history", [])
completed = [h for h in history if h.get("status") == "COMPLETED"]
seen = {e["key"]: e["value"] for e in config_seen} if isinstance(config_seen, list) else {}
result = {
    "flink_version": getattr(pyflink, "__version__", None),
    "job_id": job_id,
    "rest": base,
    "t_submit": t_submit, "t_running": t0, "t_stats": t1, "t_stats_received": t1_done,
    "startup_seconds": round(t0 - t_submit, 3),
    "job": args["job"],
    "counts": stats.get("counts"),
    "counts_at_running": counts_at_running,
    "summary": stats.get("summary"),
    "history_len": len(history),
    "completed_in_history": len(completed),
    "acks_completed_in_history": sum(h.get("num_acknowledged_subtasks", 0) for h in completed),
    "failures_in_window": dict(collections.Counter(
        (h.get("failure_message") or "?")[:300] for h in history
        if h.get("status") == "FAILED" and h["trigger_timestamp"] >= t0 * 1000)),
    "completed_in_history_after_running": sum(1 for h in completed if h["latest_ack_timestamp"] >= t0 * 1000),
    "acks_completed_in_history_after_running": sum(h.get("num_acknowledged_subtasks", 0) for h in completed
                                                   if h["latest_ack_timestamp"] >= t0 * 1000),
    "num_subtasks_per_checkpoint": sorted({h.get("num_subtasks") for h in completed}),
    "acks_per_completed_checkpoint": sorted({h.get("num_acknowledged_subtasks") for h in completed}),
    "first_trigger_ms": min((h["trigger_timestamp"] for h in completed), default=None),
    "last_ack_ms": max((h["latest_ack_timestamp"] for h in completed), default=None),
    "e2e_duration_ms": {"min": min((h["end_to_end_duration"] for h in completed), default=None),
                        "max": max((h["end_to_end_duration"] for h in completed), default=None),
                        "mean": round(sum(h["end_to_end_duration"] for h in completed) / len(completed), 1)
                        if completed else None},
    "vertices": [{"name": v["name"], "parallelism": v["parallelism"]} for v in job["vertices"]],
    "checkpoint_config": ck_config,
    "config_seen": {k: seen.get(k) for k in ("rest.bind-address", "rest.port", "rest.bind-port",
                     "execution.checkpointing.interval", "execution.checkpointing.min-pause",
                     "execution.checkpointing.max-concurrent-checkpoints",
                     "execution.checkpointing.storage", "execution.checkpointing.dir",
                     "python.execution-mode", "taskmanager.numberOfTaskSlots")},
    "taskmanagers": [{"id": t.get("id"), "slots": t.get("slotsNumber")} for t in taskmanagers.get("taskmanagers", [])]
                    if isinstance(taskmanagers, dict) else taskmanagers,
    "progress": progress,
    "checkpoint_dir_at_snapshot": {"files": len(ck_files), "bytes": ck_bytes, "first_files": ck_files[:10]},
}
with open(args["out"], "w") as f:
    json.dump(result, f, indent=1)
log("done")
'''


def fail(code: int, message: str) -> None:
    print(f"flink_anchor: {message}", file=sys.stderr)
    sys.exit(code)


def say(message: str) -> None:
    print(f"[flink_anchor {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java_version(env: dict) -> str:
    java = Path(env["JAVA_HOME"]) / "bin" / "java" if env.get("JAVA_HOME") else shutil.which("java")
    if not java:
        return "none"
    out = subprocess.run([str(java), "-version"], capture_output=True, text=True, env=env)
    return f"{java}: " + " | ".join(line.strip() for line in out.stderr.splitlines())


def pick_python() -> str:
    for candidate in ("/usr/bin/python3.11",):
        if Path(candidate).exists():
            return candidate
    return sys.executable


def ensure_venv() -> Path:
    """bench/.flink-venv with apache-flink==FLINK_VERSION; created once, reused after."""
    python = VENV / "bin" / "python"
    marker = VENV / f".installed-apache-flink-{FLINK_VERSION}"
    if marker.exists() and python.exists():
        say(f"reusing {VENV} (apache-flink {FLINK_VERSION})")
        return python
    if not python.exists():
        base = pick_python()
        say(f"creating {VENV} with {base}")
        out = subprocess.run([base, "-m", "venv", str(VENV)], capture_output=True, text=True)
        if out.returncode != 0:
            fail(2, f"could not create the virtualenv {VENV} with {base} -m venv:\n{out.stdout}{out.stderr}")
    say(f"pip install apache-flink=={FLINK_VERSION} into {VENV} (a few hundred MB, minutes)")
    log = VENV / "pip-install.log"
    started = time.perf_counter()
    with open(log, "w") as f:
        for cmd in ([str(python), "-m", "pip", "install", "-U", "pip", "setuptools", "wheel"],
                    [str(python), "-m", "pip", "install", f"apache-flink=={FLINK_VERSION}"]):
            f.write(f"$ {shlex.join(cmd)}\n")
            f.flush()
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
            if rc != 0:
                tail = "".join(log.read_text().splitlines(keepends=True)[-30:])
                fail(2, f"pip install failed (exit {rc}): {shlex.join(cmd)}\nlast lines of {log}:\n{tail}")
    check = subprocess.run([str(python), "-c", "import pyflink, pyflink.datastream; print(pyflink.__file__)"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        fail(2, f"apache-flink installed but `import pyflink` fails:\n{check.stderr[-3000:]}")
    marker.write_text(f"apache-flink=={FLINK_VERSION} installed in {time.perf_counter() - started:.0f} s\n")
    say(f"installed in {time.perf_counter() - started:.0f} s")
    return python


def listening_sockets(pids: set[int], netns_of: int | None = None) -> list[str]:
    """`ss -ltnp` lines of the given processes (which addresses the Flink servers listen on), in the
    network namespace of process ``netns_of`` if given."""
    cmd = ["ss", "-ltnpH"] if netns_of is None else ["nsenter", "-t", str(netns_of), "-n", "ss", "-ltnpH"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ["ss not available"]
    return [" ".join(line.split()[3:4] + line.split()[5:]) for line in out.splitlines()
            if any(f"pid={p}," in line for p in pids)]


def process_names(pids: set[int]) -> dict[str, int]:
    """How many processes of each name (/proc/PID/comm) the child's tree holds."""
    names: dict[str, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        names[name] = names.get(name, 0) + 1
    return names


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        out.add(pid)
        todo += children.get(pid, [])
    return out


def run_flink(python: Path, args, env: dict, job_kind: str) -> dict:
    """One Flink job (``job_kind`` python or sql) in a child process of the Flink venv."""
    from bench.large_emulate import tree_rss_bytes

    env = dict(env)
    # PyFlink on a MiniCluster defaults to "loopback": a gRPC worker pool in the client process, bound to [::].
    # "process" (PyFlink's own switch, _python_worker_execution_mode) turns it off: the thread-mode and SQL jobs
    # then run no Python worker at all, and the python-process job gets one Python worker process per slot
    # (shared by the slot's Python operators), started by the JVM as on a real cluster.
    env["_python_worker_execution_mode"] = "process"
    if job_kind == "python":
        # thread mode: pemja embeds the base interpreter, which does not see the venv's packages by itself
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              capture_output=True, text=True).stdout.strip()
        env["PYTHONPATH"] = os.pathsep.join(x for x in (site, env.get("PYTHONPATH")) if x)
    # python-process: Beam's gRPC servers (data, control, state, logging per Python worker) bind to all
    # interfaces and have no bind-address option, so that job runs in a network namespace of its own that
    # has nothing but a loopback interface (unshare -n).
    netns = job_kind == "python-process"
    with tempfile.TemporaryDirectory(prefix="flink-anchor-") as tmp:
        job = Path(tmp) / "flink_anchor_job.py"
        job.write_text(JOB)
        out = Path(tmp) / "result.json"
        params = {"job": job_kind, "parallelism": args.parallelism, "seconds": args.seconds,
                  "rest_port": free_port(), "interval_ms": args.interval_ms, "max_concurrent": args.max_concurrent,
                  "rate": args.rate, "keys": args.keys, "startup_timeout": args.startup_timeout,
                  "checkpoint_dir": f"file://{tmp}/checkpoints", "out": str(out)}
        cmd = [str(python), str(job), json.dumps(params)]
        if netns:
            cmd = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"] + cmd
        say(f"Flink side ({job_kind} job): {args.seconds} s at parallelism {args.parallelism} "
            f"(REST 127.0.0.1:{params['rest_port']})")
        started = time.perf_counter()
        with open(Path(tmp) / "stdout", "w") as so, open(Path(tmp) / "stderr", "w") as se:
            proc = subprocess.Popen(cmd, stdout=so, stderr=se, text=True, env=env, start_new_session=True)
        peak_rss, sockets, load_during, next_load, processes = 0, [], [], 0.0, {}
        measuring_since = None
        deadline = time.time() + args.seconds + 600
        while proc.poll() is None and time.time() < deadline:
            peak_rss = max(peak_rss, tree_rss_bytes(proc.pid))
            elapsed = time.perf_counter() - started
            if measuring_since is None and "measuring for" in (Path(tmp) / "stderr").read_text(errors="replace"):
                measuring_since = elapsed
            if not sockets and measuring_since is not None and elapsed > measuring_since + min(5, args.seconds / 2):
                tree = descendants(proc.pid)
                sockets = listening_sockets(tree, netns_of=proc.pid if netns else None)
                processes = process_names(tree)  # which addresses the job's servers listen on
            if elapsed >= next_load:
                load_during.append(round(os.getloadavg()[0], 2))
                next_load += 10
            time.sleep(0.5)
        timed_out = proc.poll() is None
        if timed_out:
            os.killpg(proc.pid, signal.SIGKILL)  # the child's own session: JVM and Python workers
        proc.wait()
        wall = time.perf_counter() - started
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # stray Python workers of the child, if any
        except (ProcessLookupError, PermissionError):
            pass
        stderr = (Path(tmp) / "stderr").read_text(errors="replace")
        stdout = (Path(tmp) / "stdout").read_text(errors="replace")
        if timed_out:
            fail(3, f"the Flink job did not finish within {args.seconds + 600} s; stderr tail:\n{stderr[-4000:]}")
        if proc.returncode != 0 or not out.exists():
            fail(3, f"the Flink job failed (exit {proc.returncode}): {shlex.join(cmd)}\n"
                    f"stderr tail:\n{stderr[-6000:]}\nstdout tail:\n{stdout[-2000:]}")
        result = json.loads(out.read_text())
    result["wall_seconds_child_process"] = round(wall, 2)
    result["peak_rss_mib_process_tree"] = round(peak_rss / 2**20)
    result["listening_sockets"] = sockets
    result["processes_while_measuring"] = processes
    result["loadavg_1m_samples"] = load_during
    result["child_log"] = [line for line in stderr.splitlines() if line.startswith("[flink-job")]
    result["command"] = shlex.join(cmd[:-1] + ["<params>"])
    result["network_namespace"] = "own (unshare -n, loopback only)" if netns else "host"
    result["params"] = params
    result["env"] = {k: env[k] for k in ("_python_worker_execution_mode", "JAVA_HOME", "PYTHONPATH") if k in env}
    return result


def flink_figures(r: dict) -> dict:
    counts, at_running = r.get("counts") or {}, r.get("counts_at_running") or {}
    subtasks = sum(v["parallelism"] for v in r["vertices"])
    window = r["t_stats"] - r["t_running"]
    if r["completed_in_history"] == counts.get("completed"):  # the history holds every completed checkpoint
        completed = r["completed_in_history_after_running"]
        acks = r["acks_completed_in_history_after_running"]
        how = ("the COMPLETED checkpoints of the REST history whose last ack falls in the window, and the sum of "
               "their num_acknowledged_subtasks")
    else:  # history truncated: every completed checkpoint was acknowledged by all subtasks
        completed = counts.get("completed", 0) - at_running.get("completed", 0)
        acks, how = completed * subtasks, "completed x total subtasks (REST history shorter than the completed count)"
    return {
        "completed_checkpoints": completed,
        "failed_checkpoints": counts.get("failed", 0) - at_running.get("failed", 0),
        "failed_before_running": at_running.get("failed"),
        "in_progress_at_snapshot": counts.get("in_progress"),
        "subtasks_per_checkpoint": subtasks,
        "subtask_checkpoints": acks,
        "subtask_checkpoints_how": how,
        "window_seconds": round(window, 3),
        "window_how": "from all tasks RUNNING (REST polled every 0.1 s) to the final /checkpoints request",
        "checkpoints_per_second": round(completed / window, 2) if window > 0 else None,
        "subtask_checkpoints_per_second": round(acks / window, 1) if window > 0 else None,
    }


def run_project(args) -> dict:
    from regionchaos.run import set_args

    sets = {"topology.parallelism": args.parallelism, "checkpoints": args.checkpoints,
            "faults.decline": 0, "faults.timeout": 0, "faults.subtask_crash": 0}
    cmd = [str(REGIONCHAOS), "run", "--scenario", "smoke", *set_args(sets)]
    cmd += ["--json", "--local-dir", str(Path(tempfile.gettempdir()) / "flink-anchor-runs")]
    say(f"project side: {shlex.join(cmd)}")
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    try:
        summary = json.loads(proc.stdout)
    except json.JSONDecodeError:
        fail(3, f"regionchaos run printed no JSON summary (exit {proc.returncode}); stderr tail:\n{proc.stderr[-4000:]}")
    st = summary["stats"]
    walls = st["wall_seconds"]
    p = args.parallelism  # fault-free and no rescale in smoke: the parallelism never changes
    tasks = PROJECT_TASK_VERTICES * p
    completed = st.get("global", 0) + st.get("regional", 0)
    responses = (st.get("table_rows") or {}).get("task_responses")  # one row per task and checkpoint
    e2e = walls["emulate"] + walls["validate"] + walls["report"]
    git = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=ROOT)
    return {
        "command": shlex.join(cmd),
        "git_describe": git.stdout.strip() or None,
        "exit_code": proc.returncode,
        "verdict": summary.get("verdict"),
        "run_id": summary.get("run_id"),
        "wall_seconds_process": round(wall, 2),
        "wall_seconds": walls,
        "stats": {k: v for k, v in st.items() if k not in ("s3", "wall_seconds")},
        "s3_requests": (st.get("s3") or {}).get("requests"),
        "s3_requests_by_op": (st.get("s3") or {}).get("requests_by_op"),
        "data_plane": {k: v for k, v in ((st.get("s3") or {}).get("dataplane") or {}).items()
                       if k in ("s3_requests", "s3_requests_by_op", "state_files", "txn_files", "flushes",
                                "wall_seconds_data_plane", "wall_seconds_by_phase")},
        "completed_checkpoints": completed,
        "tasks_per_checkpoint": tasks,
        "subtask_checkpoints": completed * tasks,
        "task_responses_rows": responses,
        "task_responses_match": responses == completed * tasks,
        "subtask_checkpoints_how": f"(stats.global + stats.regional) x {PROJECT_TASK_VERTICES} vertices x parallelism {p}"
                                   " (fault-free: every checkpoint is global, every task acknowledges)",
        "emulate_seconds": walls["emulate"],
        "end_to_end_seconds": round(e2e, 3),
        "subtask_checkpoints_per_second_emulation": round(completed * tasks / walls["emulate"], 1),
        "subtask_checkpoints_per_second_end_to_end": round(completed * tasks / e2e, 1),
        "stderr_tail": proc.stderr[-600:],
    }


JOB_KINDS = ("python", "python-process", "sql")
JOB_LABEL = {"python": "Flink: Python KeyedProcessFunction, thread mode",
             "python-process": "Flink: Python KeyedProcessFunction, process mode",
             "sql": "Flink: SQL GROUP BY (JVM only)"}


def markdown(doc: dict) -> str:
    p, m, a = doc["project"], doc["machine"], doc["args"]
    jobs = list(doc["flink"])
    head = "| | " + " | ".join(JOB_LABEL[j] for j in jobs) + " | emulation only | emulate + validate + report |"
    def row(name, flink_cells, emu, e2e):
        return f"| {name} | " + " | ".join(str(c) for c in flink_cells) + f" | {emu} | {e2e} |"
    fig = {j: doc["flink"][j]["figures"] for j in jobs}
    lines = [
        "# Flink anchor: real Flink vs the emulation, subtask-checkpoints per second",
        "",
        f"Command: `{doc['command_line']}`",
        "",
        *([f"Re-rendered from its JSON with `{doc['re_rendered']['command_line']}` ({doc['re_rendered']['what']})", ""]
          if doc.get("re_rendered") else []),
        f"Started {doc['started_at']}, {doc['wall_seconds_total']} s in all. Machine: {m['cpu_count']} CPUs, "
        f"{m['mem_total_gib']} GiB; 1-minute load average {m['loadavg_1m_before']} before, "
        + ", ".join(f"{m['loadavg_1m_after_flink'][j]} after the {j} Flink job" for j in jobs)
        + f", {m['loadavg_1m_after']} at the end. Java: {m['java'].split(': ', 1)[-1].split(' | ')[0]}; "
        f"apache-flink {doc['flink'][jobs[0]]['flink_version']} (Python {m['flink_venv_python']}); "
        f"project Python {m['python']}.",
        "",
        head,
        "|---|" + "---|" * (len(jobs) + 2),
        row("parallelism / subtasks per checkpoint", [f"{a['parallelism']} / {fig[j]['subtasks_per_checkpoint']}" for j in jobs],
            f"{a['parallelism']} / {p['tasks_per_checkpoint']}", "same run"),
        row("completed checkpoints (failed)", [f"{fig[j]['completed_checkpoints']} ({fig[j]['failed_checkpoints']})" for j in jobs],
            f"{p['completed_checkpoints']} ({p['stats'].get('aborted', 0)})", "same run"),
        row("subtask-checkpoints", [fig[j]["subtask_checkpoints"] for j in jobs], p["subtask_checkpoints"],
            p["subtask_checkpoints"]),
        row("seconds", [f"{fig[j]['window_seconds']} (window)" for j in jobs], p["emulate_seconds"], p["end_to_end_seconds"]),
        row("checkpoints / s", [fig[j]["checkpoints_per_second"] for j in jobs],
            round(p["completed_checkpoints"] / p["emulate_seconds"], 2),
            round(p["completed_checkpoints"] / p["end_to_end_seconds"], 2)),
        row("**subtask-checkpoints / s**", [f"**{fig[j]['subtask_checkpoints_per_second']}**" for j in jobs],
            f"**{p['subtask_checkpoints_per_second_emulation']}**", f"**{p['subtask_checkpoints_per_second_end_to_end']}**"),
    ]
    for j in jobs:
        r = doc["ratios"][j]
        lines.append(row(f"ratio {j} Flink / column", ["1" if k == j else "" for k in jobs],
                         f"**{r['flink_over_emulation']}**", f"**{r['flink_over_end_to_end']}**"))
    lines += [
        row("checkpoint end-to-end ms (min / mean / max)",
            [" / ".join(str(doc["flink"][j]["e2e_duration_ms"][k]) for k in ("min", "mean", "max")) for j in jobs],
            "emulated time", ""),
        row("peak RSS, process tree", [f"{doc['flink'][j]['peak_rss_mib_process_tree']} MiB" for j in jobs], "", ""),
        "",
    ]
    return "\n".join(lines)


def ratios_of(flink: dict, project: dict) -> dict:
    out = {}
    for kind, f in flink.items():
        rate = f["figures"]["subtask_checkpoints_per_second"]
        out[kind] = {
            "flink_over_emulation": round(rate / project["subtask_checkpoints_per_second_emulation"], 3),
            "flink_over_end_to_end": round(rate / project["subtask_checkpoints_per_second_end_to_end"], 3),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=60, help="how long each Flink job checkpoints (default 60)")
    parser.add_argument("--parallelism", type=int, default=16, help="both sides (default 16)")
    parser.add_argument("--checkpoints", type=int, default=200,
                        help="project side: fault-phase checkpoints (the scenario adds its heal checkpoints; default 200)")
    parser.add_argument("--job", default=",".join(JOB_KINDS),
                        help="comma-separated Flink jobs to run, in order (default: all three): python = DataStream "
                             "API, datagen -> keyBy -> a Python KeyedProcessFunction with a ValueState counter, "
                             "Python in the JVM (python.execution-mode thread, pemja); python-process = the same "
                             "with one Python worker process per slot (Beam; run in a loopback-"
                             "only network namespace); sql = the same graph in the JVM only (GROUP BY k COUNT(*))")
    parser.add_argument("--interval-ms", type=int, default=10,
                        help="Flink checkpoint interval (default 10, the minimum Flink accepts)")
    parser.add_argument("--max-concurrent", type=int, default=100, help="Flink max concurrent checkpoints (default 100)")
    parser.add_argument("--rate", type=int, default=1000, help="Flink datagen rows per second, all subtasks (default 1000)")
    parser.add_argument("--keys", type=int, default=1000, help="distinct keys (default 1000)")
    parser.add_argument("--startup-timeout", type=int, default=300,
                        help="seconds a Flink job may take until all its tasks run (default 300)")
    parser.add_argument("--skip-project", action="store_true", help="only the Flink side (no ratios, no --md)")
    parser.add_argument("--setup-only", action="store_true", help="create/check the venv and exit")
    parser.add_argument("--from-json", metavar="PATH",
                        help="run nothing: re-render --md from a JSON this script wrote earlier")
    parser.add_argument("--json", metavar="PATH", help="also write the JSON object here")
    parser.add_argument("--md", metavar="PATH", help="write a markdown table here")
    args = parser.parse_args()
    exe = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable
    command_line = shlex.join([exe, os.path.relpath(os.path.abspath(__file__), ROOT)] + sys.argv[1:])
    if args.from_json:
        if not args.md:
            fail(2, "--from-json needs --md PATH")
        doc = json.loads(Path(args.from_json).read_text())
        for f in doc["flink"].values():
            f["figures"] = flink_figures(f)
        doc["ratios"] = ratios_of(doc["flink"], doc["project"])
        doc["re_rendered"] = {"command_line": command_line, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                              "what": "figures and ratios recomputed from the stored raw fields; nothing was run"}
        if args.json:
            Path(args.json).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        Path(args.md).write_text(markdown(doc) + reading(doc))
        return
    if args.seconds < 1 or args.parallelism < 1 or args.checkpoints < 1:
        fail(2, "--seconds, --parallelism and --checkpoints must be >= 1")
    if args.interval_ms < 10:
        fail(2, "--interval-ms: Flink rejects checkpoint intervals below 10 ms")
    jobs = [j.strip() for j in args.job.split(",") if j.strip()]
    unknown = [j for j in jobs if j not in JOB_KINDS]
    if unknown or not jobs:
        fail(2, f"--job: unknown job(s) {unknown}; known: {', '.join(JOB_KINDS)}")
    if "python-process" in jobs and not (shutil.which("unshare") and shutil.which("ip")):
        fail(2, "--job python-process needs unshare and ip (util-linux, iproute2) for its loopback-only namespace")
    if args.md and args.skip_project:
        fail(2, "--md needs the project side (drop --skip-project)")

    env = dict(os.environ)
    if not env.get("JAVA_HOME") and not shutil.which("java"):
        fail(2, "no Java: set JAVA_HOME or put java (11, 17 or 21) on PATH")
    python = ensure_venv()
    if args.setup_only:
        return
    if not args.skip_project and not REGIONCHAOS.exists():
        fail(2, f"{REGIONCHAOS} not found: run scripts/test.sh or scripts/demo.sh once to set up the project venv")

    machine = {
        "cpu_count": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "loadavg_1m_before": round(os.getloadavg()[0], 2),
        "java": java_version(env),
        "python": platform.python_version(),
        "flink_venv_python": subprocess.run([str(python), "-c", "import platform; print(platform.python_version())"],
                                            capture_output=True, text=True).stdout.strip(),
        "platform": platform.platform(),
        "mem_total_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "loadavg_1m_after_flink": {},
    }
    started = time.time()
    flink = {}
    for kind in jobs:
        flink[kind] = run_flink(python, args, env, kind)
        flink[kind]["figures"] = flink_figures(flink[kind])
        machine["loadavg_1m_after_flink"][kind] = round(os.getloadavg()[0], 2)
        say(f"{kind} job: {flink[kind]['figures']['subtask_checkpoints_per_second']} subtask-checkpoints/s")
    project = None if args.skip_project else run_project(args)
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    machine["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    ratios = ratios_of(flink, project) if project else {}
    doc = {
        "command_line": command_line,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "wall_seconds_total": round(time.time() - started, 1),
        "args": vars(args),
        "machine": machine,
        "flink": flink,
        "project": project,
        "ratios": ratios,
    }
    text = json.dumps(doc, indent=1, default=str)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    if args.md:
        Path(args.md).write_text(markdown(doc) + reading(doc))


def reading(doc: dict) -> str:
    """How to read the ratio: what each side does per checkpoint that the other does not."""
    p, a = doc["project"], doc["args"]
    dp = p.get("data_plane") or {}
    puts = (dp.get("s3_requests_by_op") or {}).get("PutObject")
    jobs = list(doc["flink"])
    ck = {j: doc["flink"][j].get("checkpoint_dir_at_snapshot", {}) for j in jobs}
    w = p["wall_seconds"]
    return f"""
Settings. Flink: a local MiniCluster (one TaskManager, {a['parallelism']} slots), datagen at {a['rate']} rows/s over
{a['keys']} keys, keyBy, a keyed counter, checkpoint interval {a['interval_ms']} ms (Flink rejects less), min pause 0,
at most {a['max_concurrent']} concurrent checkpoints, aligned exactly-once, HashMap state backend, filesystem
checkpoint storage in a temp dir, no faults, {a['seconds']} s per job after all tasks ran. REST, RPC and blob server on
127.0.0.1 (`listening_sockets` in the JSON); the process-mode job ran in a loopback-only network namespace because
Beam's gRPC servers bind to all interfaces. Project: `{p['command']}` (verdict {p['verdict']}).
Subtask-checkpoints: Flink, the acknowledged subtasks of every checkpoint completed in the window (REST history);
project, completed checkpoints x {p['tasks_per_checkpoint']} tasks (the emulator's source and process vertices),
equal to its `task_responses` rows: {p['task_responses_match']}.

How to read the ratio (below 1: the emulation got through more subtask-checkpoints per wall second than Flink):
- Flink does per checkpoint real work that the emulation only books: trigger RPCs to {a['parallelism']} source
  tasks, barriers through the all-to-all keyBy exchange, aligned on {a['parallelism']} input channels per task while
  records flow, a snapshot of the keyed state and source splits, acks to the JobManager, and one `_metadata` file with
  the small state inlined (at the end the checkpoint directories held only `_metadata` files: {'; '.join(
      f"{j} {ck[j].get('files')} file(s), {ck[j].get('bytes', 0) / 1024:.0f} KiB" for j in jobs)}). Process mode adds a
  flush of each Python operator's bundle over Beam's gRPC at every barrier, and one Python worker process per slot
  ({a['parallelism']} + the client) competing for {doc['machine']['cpu_count']} cores: the slowest job here.
- The emulation does per checkpoint what Flink does not: the FLIP-600 regional decision rules, an event log, fault
  draws, and S3 PUTs over HTTP to the embedded server ({puts} data-plane PUTs for {p['completed_checkpoints']}
  checkpoints: {dp.get('state_files')} merged state files, one per TaskManager, {dp.get('txn_files')} sink
  transaction files, metadata and commit markers; data plane {dp.get('wall_seconds_data_plane')} s of the
  {p['emulate_seconds']} s). Its time is emulated: upload and ack times are drawn, never waited for, and records are
  offset ranges per split, not events flowing through operators.
- End to end adds validation ({w.get('validate')} s: re-read the run from S3, build the tables, the GX suites) and the
  report ({w.get('report')} s), largely a fixed cost per run (`bench/results/scaling/README.md`: ~12-20 s plus a part that grows
  with the rows), so the end-to-end rate rises with more checkpoints per run; Flink does not judge its own checkpoints at all.
- Neither side had the {doc['machine']['cpu_count']} cores to itself (load averages above; the jobs ran one after the
  other, under different load). Flink triggered every {a['interval_ms']} ms while its checkpoints took tens to
  thousands of ms end to end, so its rates describe a busy {doc['machine']['cpu_count']}-core MiniCluster, not a
  cluster. Treat the ratios as order-of-magnitude anchors.
"""

if __name__ == "__main__":
    main()
