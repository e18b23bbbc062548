"""Where the test suite's CPU goes: a command run under a /proc sampler, its CPU by kind of process.

    .venv/bin/python -m bench.suite_cpu [--out bench/results/suite_cpu/NAME.json] -- COMMAND...
    e.g. (a fresh clone, as CI runs it):
    git clone -q /work/main /tmp/clone && .venv/bin/python -m bench.suite_cpu -- bash -c 'cd /tmp/clone && CI=true bash .ci/run'

The suite keeps both cores busy, so its wall time follows the CPU it spends; this says who spends it.
Every 0.5 s the sampler reads each process's CPU time (``/proc/PID/stat``: user + system) and its
command line, keeping per process the highest CPU seen and the last command line it had (a JVM started
by ``spark-submit`` is a bash script first; a process that is exiting has none, and keeps its last). At the end: the machine's busy and idle CPU seconds
(``/proc/stat``), the command's wall time and exit code, and the CPU per kind of process (`kind`): the
Spark JVMs (the test workers' own drivers, drivers started by subprocesses, the standalone cluster's
daemons and executors), Python (pytest's workers and controller, whose embedded S3 server runs in it;
Spark's Python workers), Airflow's processes by sub-command, Chromium, and what is not the suite's
(kernel threads such as ``kdamond``, the sandbox's agent). Processes that live less than the sampling
interval are missed; the totals are lower bounds. Linux only.

The same code took 1,128 to 1,389 busy CPU s on this machine on different hours (Chromium and Airflow,
untouched, moved with it), so the record also holds a calibration: the CPU seconds of one fixed
single-threaded Python loop (`CALIBRATION`, the median of three runs), before and after the command
(``--no-calibration`` skips it). It catches only part of the machine's swings: on one day the loop moved 4-7 %
while the suite's CPU moved 16 %, so it tells a slower machine, not how much.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


CALIBRATION = "import time\ns = 0\nfor i in range(30_000_000):\n    s += i\nprint(time.process_time())"


def calibration_cpu_s() -> float:
    """The median CPU seconds of `CALIBRATION` over three runs, each in a fresh interpreter."""
    runs = sorted(float(subprocess.run([sys.executable, "-c", CALIBRATION], capture_output=True, text=True,
                                       check=True).stdout) for _ in range(3))
    return round(runs[1], 3)


def busy_idle() -> tuple[float, float]:
    """The machine's busy and idle CPU seconds since boot (/proc/stat's first line)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / TICK, idle / TICK


def proc_stat(pid: int) -> tuple[str, list[str]]:
    """A process's name and the fields of ``/proc/PID/stat`` after it (state first: ``[3]`` its session,
    ``[11]`` and ``[12]`` user and system time in ticks, ``[19]`` its start time); OSError when it is gone."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def cpu_seconds(fields: list[str]) -> float:
    """User + system CPU seconds from `proc_stat`'s fields."""
    return (int(fields[11]) + int(fields[12])) / TICK


def sample(seen: dict[int, tuple[float, str]]) -> None:
    """One look at every process: its CPU seconds and command line, kept where the CPU grew."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            name, fields = proc_stat(pid)
            cpu = cpu_seconds(fields)
            if pid in seen and seen[pid][0] >= cpu:
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            if not cmd:  # an exiting process (keep the command line it had) or a kernel thread (its name)
                cmd = seen[pid][1] if pid in seen else "[" + name + "]"
            seen[pid] = (cpu, cmd[:500])
        except (OSError, ValueError, IndexError):
            continue


def kind(cmd: str) -> str:
    """The kind of process a command line is (see the module docstring)."""
    if cmd.startswith("[pytest-xdist"):  # xdist's workers retitle themselves "[pytest-xdist running] TEST" / "idle"
        return "Python: pytest worker"
    if cmd.startswith("["):
        return "not the suite: kernel thread " + re.sub(r"[/:]\d+.*", "", cmd)
    if "process_api" in cmd or "binary_backend" in cmd:
        return "not the suite: sandbox agent"
    if re.search(r"(^|/)java\s", cmd) or " org.apache.spark." in cmd:
        if "deploy.master.Master" in cmd or "deploy.worker.Worker" in cmd:
            return "JVM: standalone cluster daemon"
        if "CoarseGrainedExecutorBackend" in cmd:
            return "JVM: cluster executor"
        return "JVM: Spark driver"
    if "pyspark/daemon" in cmd or "pyspark.daemon" in cmd or "pyspark/worker" in cmd:
        return "Python: Spark's Python workers"
    if "chrom" in cmd:
        return "Chromium"
    m = re.search(r"\bairflow ([a-z-]+)", cmd)
    if m and "pytest" not in cmd:
        return f"Airflow: airflow {m.group(1)}"
    if "execnet" in cmd or "xdist" in cmd or "import sys;exec(eval(" in cmd:
        return "Python: pytest worker"
    if "pytest" in cmd:
        return "Python: pytest controller (embedded S3)"
    if "regionchaos" in cmd or "spark_jobs/" in cmd:
        return "Python: regionchaos subprocess"
    return "other: " + cmd.split(" ", 1)[0].rsplit("/", 1)[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write the totals and every process as JSON here")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--no-calibration", action="store_true", help="skip the machine's calibration loop")
    ap.add_argument("command", nargs="+", help="the command to run (after --)")
    args = ap.parse_args()
    calibration = {"before": calibration_cpu_s()} if not args.no_calibration else {}
    seen: dict[int, tuple[float, str]] = {}
    sample(seen)
    before = dict(seen)  # processes already running: only what they spend from now on counts
    done = threading.Event()

    def loop() -> None:
        while not done.is_set():
            sample(seen)
            time.sleep(args.interval)

    sampler = threading.Thread(target=loop, daemon=True)
    busy0, idle0 = busy_idle()
    started = time.monotonic()
    sampler.start()
    code = subprocess.call(args.command)
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    busy1, idle1 = busy_idle()
    if calibration:
        calibration["after"] = calibration_cpu_s()
    spent: Counter = Counter()
    count: Counter = Counter()
    for pid, (cpu, cmd) in seen.items():
        if pid == os.getpid():
            continue
        base = before.get(pid, (0.0, ""))[0]
        if cpu - base > 0:
            spent[kind(cmd)] += cpu - base
            count[kind(cmd)] += 1
    out = {"command": args.command, "exit": code, "wall_s": round(wall, 1),
           "machine_busy_cpu_s": round(busy1 - busy0, 1), "machine_idle_cpu_s": round(idle1 - idle0, 1),
           "sampled_cpu_s": round(sum(spent.values()), 1), "calibration_cpu_s": calibration,
           "by_kind": {k: {"cpu_s": round(v, 1), "processes": count[k]} for k, v in spent.most_common()},
           "processes": sorted(([round(cpu - before.get(pid, (0.0, ""))[0], 1), cmd[:200]]
                                for pid, (cpu, cmd) in seen.items() if pid != os.getpid()), reverse=True)[:200]}
    print(f"exit {code}, wall {out['wall_s']} s, machine busy {out['machine_busy_cpu_s']} CPU s, "
          f"idle {out['machine_idle_cpu_s']} CPU s, sampled {out['sampled_cpu_s']} CPU s"
          + (f"; calibration {calibration['before']} s before, {calibration['after']} s after" if calibration else ""))
    print("| kind of process | CPU s | processes |\n|---|---|---|")
    for k, v in out["by_kind"].items():
        print(f"| {k} | {v['cpu_s']} | {v['processes']} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
