"""The global-vs-regional study at size: `regionchaos study ... --json` as a user runs it, with
the process tree's peak RSS sampled, then its table written as Markdown.

In:  the study's options, passed through (default: the CLI's defaults); --name for the output.
Out: bench/results/study/<name>.json (the command, commit, wall seconds of the whole command, peak
     RSS of the process tree, the study's rows), bench/results/study/<name>.md (the table, per
     parallelism), and the study page copied to bench/results/study/<name>.html. Exit: the command's
     exit code.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from bench.swarm import run_sampled

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "study"


def table(rows: list[dict]) -> list[str]:
    out = ["| parallelism | p | policy | attempts | success rate | closed form | staleness mean | staleness max "
           "| records replayed | region failovers | global failovers | retained MiB | S3 requests |",
           "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["parallelism"], r["probability"])):
        if "error" in r:
            out.append(f"| {r['parallelism']} | {r['probability']} | {r['policy']} | error: {r['error']} |")
            continue
        closed = f"{r['closed_form']:.3f}" if "closed_form" in r else ""
        out.append(f"| {r['parallelism']} | {r['probability']} | {r['policy']} | {r['attempts']} | "
                   f"{r['success_rate']:.3f} ± {r['success_rate_se']:.3f} | {closed} | {r['staleness_mean']:.2f} | "
                   f"{r['staleness_max']} | {r['records_replayed']:.0f} | {r['region_failovers']:.1f} | {r.get('global_failovers', float('nan')):.1f} | "
                   f"{r['retained_bytes'] / 2**20:.2f} | {r['s3_requests']:.0f} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", default="study")
    args, passthrough = ap.parse_known_args(argv)
    cmd = [sys.executable, "-m", "regionchaos.cli", "study", *passthrough, "--json", "--local-dir", "/tmp/bench-study"]
    out, returncode, wall, peak_mib = run_sampled(cmd)
    result = json.loads(out)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    shown = "regionchaos study " + " ".join(passthrough)
    record = {"command": shown, "commit": commit, "wall_seconds": round(wall, 1), "peak_rss_mib": round(peak_mib),
              "study_id": result["study_id"], "plan": result["plan"], "errors": result["errors"], "rows": result["rows"]}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(record, indent=1) + "\n")
    shutil.copy(result["local"], RESULTS / f"{args.name}.html")
    lines = [f"# Global vs regional: `{shown}`", "",
             f"Command: `.venv/bin/python -m bench.study --name {args.name} {' '.join(passthrough)}` at commit "
             f"`{commit[:10]}`: {len(result['plan']['policies'])} policies, {result['plan']['seeds']} seeds per cell, "
             f"{result['plan']['checkpoints']} checkpoints per run, region crash probability {result['plan']['crash']}; "
             f"wall {wall:.0f} s for the whole command, peak RSS of the process tree {peak_mib:.0f} MiB, "
             f"{result['errors']} runs raised. The page: `bench/results/study/{args.name}.html`.", "", *table(result["rows"])]
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print(f"wall {wall:.0f} s, peak RSS {peak_mib:.0f} MiB, {result['errors']} errors -> bench/results/study/{args.name}.md")
    return returncode


if __name__ == "__main__":
    sys.exit(main())
