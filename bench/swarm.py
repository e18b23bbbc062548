"""The swarm's fast path at size: `regionchaos swarm --seeds N --scenario S [--mutant M] --json`,
one process, as a user runs it, with the process tree's peak RSS sampled.

In:  --seeds (default 10,000), --scenario (default smoke), --mutant, --partitions.
Out: one JSON record appended to --out-json (default bench/results/swarm/swarm.json): the command, commit,
     seeds, wall seconds (of the whole command, Spark and the embedded S3 server included),
     seeds per minute, peak RSS of the process tree (MiB), the swarm's own phase times
     (emulate job, reading the tables, GX), rows, verdict counts and failing seeds.
     Exit: the command's exit code.

DESIGN.md's target: 10,000 smoke seeds judged in <= 3 minutes on the 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 180  # DESIGN.md: 10,000 smoke seeds judged in <= 3 minutes


def tree_rss_mib(proc: psutil.Process) -> float:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def run_sampled(cmd: list[str], cwd: Path = ROOT, env: dict | None = None) -> tuple[str, int, float, float]:
    """Run ``cmd`` from ``cwd`` (the project root), sampling its process tree's RSS twice a second:
    (stdout, exit code, wall seconds, peak RSS in MiB). The study and A/B benches use it too."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True, env=env)
    peak = [0.0]
    watched = psutil.Process(proc.pid)

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_mib(watched))
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    return out, proc.returncode, wall, peak[0]


def class_archive() -> str | None:
    """The Spark drivers' class archive a command started now maps (`regionchaos.jvmcds`), None without one:
    records keep it, since it moves a deep smoke run by about 2 s (bench/results/probes/README.md)."""
    from regionchaos import jvmcds

    path = jvmcds.in_use()
    return str(path) if path else None


def plan_rule() -> str | None:
    """The judge's plan rule a command started now loads (`regionchaos.sparkrules`: built now if missing, as the
    command would), None without one (no JDK, or switched off): it moves a small pass by a fifth
    (bench/results/exchanges/README.md)."""
    from regionchaos import sparkrules

    path = sparkrules.ensure()
    return str(path) if path else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10_000)
    ap.add_argument("--scenario", default="smoke")
    ap.add_argument("--mutant")
    ap.add_argument("--partitions", type=int)
    ap.add_argument("--out-json", type=Path, default=ROOT / "bench" / "results" / "swarm" / "swarm.json")
    args = ap.parse_args(argv)
    cmd = [sys.executable, "-m", "regionchaos.cli", "swarm", "--seeds", str(args.seeds), "--scenario", args.scenario,
           "--json"]
    if args.mutant:
        cmd += ["--mutant", args.mutant]
    if args.partitions:
        cmd += ["--partitions", str(args.partitions)]
    archive, rule = class_archive(), plan_rule()
    out, returncode, wall, peak_mib = run_sampled(cmd)
    result = json.loads(out) if out.strip() else {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    record = {
        "command": " ".join(["regionchaos", *cmd[3:]]), "commit": commit, "exit": returncode,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": psutil.cpu_count(), "load_1min_at_end": round(psutil.getloadavg()[0], 2),
        "seeds": args.seeds, "wall_s": round(wall, 1), "seeds_per_minute": round(60 * args.seeds / wall, 1),
        "peak_rss_mib": round(peak_mib), "target_s": TARGET_S, "met": wall <= TARGET_S and returncode in (0, 1),
        "walls": result.get("walls"), "rows": result.get("rows"), "partitions": result.get("partitions"),
        "verdicts": result.get("verdicts"), "failing": [(f["seed"], f["failed"]) for f in result.get("failing", [])],
        "known_findings": len(result.get("known_findings", [])),
        "class_archive": archive, "plan_rule": rule,
    }
    records = json.loads(args.out_json.read_text()) if args.out_json.exists() else []
    args.out_json.write_text(json.dumps([*records, record], indent=1) + "\n")
    print(json.dumps(record, indent=1))
    return returncode


if __name__ == "__main__":
    sys.exit(main())
