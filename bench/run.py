"""Run the benchmarks as a user runs the commands, N times each, and record the medians.

    .venv/bin/python -m bench.run [--only large,smoke,swarm] [--repeat 3] [--swarm-seeds 1000]
    # writes bench/results/run/run.json and bench/results/run/README.md (use --out-json / --out-md to change)

Each benchmark is one CLI command (``regionchaos run --scenario large --json``, ...) in its own
process with the embedded S3 server and a local Spark session, its process tree's peak RSS
sampled twice a second (`bench/swarm.run_sampled`). The phases come from the command's own
summary (``stats.wall_seconds`` of a run, ``walls`` of a swarm). Per benchmark the record keeps
every repetition, their medians, the 1-minute load average before and after each, and the
target it is held against (DESIGN.md); the top-level ``"large"`` entry is the medians of the
``large`` benchmark: ``{"wall_s", "phases_s", "emulate_s", "validate_s", "report_s", "peak_rss_mib"}``.
``wall_s`` is the whole process (interpreter and JVM start, storage server, exit); ``phases_s`` is
emulate + validate + report, what DESIGN.md's `large` and deep `smoke` targets (<= 60 s, <= 10 s) time.

A repetition whose command fails (exit code other than 0 valid / 1 invalid) is recorded with
its exit code and excluded from the medians; a benchmark with no good repetition has none.
Nothing here is a test: it measures, it does not assert.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import psutil

from bench.swarm import class_archive, plan_rule, run_sampled

ROOT = Path(__file__).resolve().parent.parent

GOOD_EXITS = (0, 1)  # valid / invariant violated: the command did its job either way


def benchmarks(swarm_seeds: int) -> dict[str, dict]:
    """name -> the command (after ``regionchaos``), the phases to read, the target."""
    return {
        "large": {
            "args": ["run", "--scenario", "large", "--json"],
            "phases": {"emulate_s": "emulate", "validate_s": "validate", "report_s": "report"},
            "target": {"phases_s": 60, "peak_rss_mib": 3072},
            "phases_total": True,
            "what": "1,024 regions x 200 checkpoints with faults: emulate + validate + report",
        },
        "smoke": {
            "args": ["run", "--scenario", "smoke", "--json"],
            "phases": {"emulate_s": "emulate", "validate_s": "validate", "report_s": "report"},
            "target": {"phases_s": 10},
            "phases_total": True,
            "what": "the default deep run (4 regions x 12 checkpoints)",
        },
        "swarm": {
            "args": ["swarm", "--seeds", str(swarm_seeds), "--scenario", "smoke", "--json"],
            "phases": {"emulate_s": "emulate_job", "read_s": "read_tables", "validate_s": "gx_validate"},
            "target": {"seeds_per_minute": 10000 / 3},
            "what": f"{swarm_seeds} smoke seeds on the fast path, one GX pass",
            "seeds": swarm_seeds,
        },
    }


def one_run(name: str, spec: dict) -> dict:
    cmd = [sys.executable, "-m", "regionchaos.cli", *spec["args"]]
    load_before = psutil.getloadavg()[0]
    out, code, wall, peak = run_sampled(cmd)
    rec = {"exit": code, "wall_s": round(wall, 1), "peak_rss_mib": round(peak),
           "load_1min_before": round(load_before, 2), "load_1min_after": round(psutil.getloadavg()[0], 2)}
    try:
        summary = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        summary = {}
    walls = summary.get("walls") or (summary.get("stats") or {}).get("wall_seconds") or {}
    for key, phase in spec["phases"].items():
        if phase in walls:
            rec[key] = round(walls[phase], 1)
    if spec.get("phases_total") and all(key in rec for key in spec["phases"]):
        rec["phases_s"] = round(sum(rec[key] for key in spec["phases"]), 1)  # DESIGN.md's emulate + validate + report
    rec["verdict"] = summary.get("verdict") or summary.get("verdicts")
    if "seeds" in spec:
        rec["seeds_per_minute"] = round(60 * spec["seeds"] / wall, 1)
    return rec


def medians(runs: list[dict]) -> dict:
    good = [r for r in runs if r["exit"] in GOOD_EXITS]
    keys = sorted({k for r in good for k, v in r.items() if isinstance(v, (int, float)) and k != "exit"})
    return {k: round(statistics.median(r[k] for r in good if k in r), 1) for k in keys if any(k in r for r in good)}


def versions() -> dict:
    out = {"python": platform.python_version()}
    for dist in ("pyspark", "great_expectations", "apache-airflow", "boto3", "moto"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    java = subprocess.run(["java", "-version"], capture_output=True, text=True)
    out["java"] = (java.stderr or java.stdout).splitlines()[0] if java.returncode == 0 else "unavailable"
    return out


def machine() -> dict:
    return {"cores": psutil.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "platform": platform.platform()}


def markdown(results: dict) -> str:
    lines = [
        "# Benchmark results (`bench/run.py`)",
        "",
        f"Command: `{results['command']}` at commit {results['commit']}, {results['when']}.",
        f"Machine: {results['machine']['cores']} cores, {results['machine']['memory_gib']} GiB, "
        f"{results['machine']['platform']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ".",
        f"Spark drivers' class archive (`python -m regionchaos.jvmcds`): {results.get('class_archive') or 'none'}.",
        f"The judge's plan rule (`regionchaos.sparkrules`): {results.get('plan_rule') or 'none'}.",
        "",
        f"Each benchmark ran {results['repeat']} times, one after another, each in its own process (embedded S3, "
        "local Spark); the table gives medians of the good repetitions. Load averages are the 1-minute load "
        "before and after each repetition.",
        "",
        "| benchmark | command | process wall s | emulate + validate + report s | emulate s | validate s | other phases "
        "| peak RSS MiB | target | met | repetitions (process wall s) | load before/after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, bench in results["benchmarks"].items():
        med = bench["median"]
        other = ", ".join(f"{k[:-2]} {med[k]}" for k in ("report_s", "read_s", "seeds_per_minute") if k in med)
        target = ", ".join(f"{k} <= {v}" if k != "seeds_per_minute" else f"{k} >= {v}"
                           for k, v in bench["target"].items()) or "-"
        met = "-" if bench["met"] is None else ("yes" if bench["met"] else "**no**")
        reps = ", ".join(str(r["wall_s"]) + ("" if r["exit"] in GOOD_EXITS else f" (exit {r['exit']})")
                         for r in bench["runs"])
        loads = "; ".join(f"{r['load_1min_before']}/{r['load_1min_after']}" for r in bench["runs"])
        lines.append(f"| {name} | `{bench['command']}` | {med.get('wall_s', '-')} | {med.get('phases_s', '-')} | "
                     f"{med.get('emulate_s', '-')} | "
                     f"{med.get('validate_s', '-')} | {other or '-'} | {med.get('peak_rss_mib', '-')} | {target} | "
                     f"{met} | {reps} | {loads} |")
    return "\n".join(lines) + "\n"


def met(target: dict, med: dict) -> bool | None:
    if not target or not med:
        return None
    return all(med.get(k, float("inf")) <= v if k != "seeds_per_minute" else med.get(k, 0) >= v
               for k, v in target.items())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="writes bench/results/run/run.json and bench/results/run/README.md by default")
    ap.add_argument("--only", help="comma-separated benchmarks (default: large,smoke,swarm)")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions per benchmark (default %(default)s)")
    ap.add_argument("--swarm-seeds", type=int, default=1000, help="seeds of the swarm benchmark (default %(default)s)")
    ap.add_argument("--out-json", type=Path, default=ROOT / "bench" / "results" / "run" / "run.json")
    ap.add_argument("--out-md", type=Path, default=ROOT / "bench" / "results" / "run" / "README.md")
    args = ap.parse_args(argv)
    specs = benchmarks(args.swarm_seeds)
    names = args.only.split(",") if args.only else list(specs)
    unknown = [n for n in names if n not in specs]
    if unknown or args.repeat < 1:
        print(f"bench/run.py: --only: unknown benchmark(s) {unknown}, choose from {list(specs)}" if unknown
              else "bench.run: --repeat must be >= 1", file=sys.stderr)
        return 2
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    results = {"command": " ".join([".venv/bin/python -m bench.run", *(argv if argv is not None else sys.argv[1:])]),
               "commit": commit, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
               "versions": versions(), "class_archive": class_archive(), "plan_rule": plan_rule(),
               "repeat": args.repeat, "benchmarks": {}}
    for name in names:
        spec = specs[name]
        runs = []
        for i in range(args.repeat):
            print(f"[bench] {name} {i + 1}/{args.repeat}: regionchaos {' '.join(spec['args'])}", file=sys.stderr, flush=True)
            runs.append(one_run(name, spec))
            print(f"[bench]   {runs[-1]}", file=sys.stderr, flush=True)
        med = medians(runs)
        results["benchmarks"][name] = {"command": "regionchaos " + " ".join(spec["args"]), "what": spec["what"],
                                       "runs": runs, "median": med, "target": spec["target"],
                                       "met": met(spec["target"], med)}
    if "large" in results["benchmarks"]:
        med = results["benchmarks"]["large"]["median"]
        results["large"] = {k: med.get(k) for k in ("wall_s", "phases_s", "emulate_s", "validate_s", "report_s",
                                                     "peak_rss_mib")}
    args.out_json.write_text(json.dumps(results, indent=1) + "\n")
    args.out_md.write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
