"""The swarm beside the code before a change: `regionchaos swarm --seeds N --scenario S --json` from two
checkouts, alternated in one sitting (machines here differ by up to 1.6x from one hour to the next).

    .venv/bin/python -m bench.swarm_ab --before /path/to/checkout-of-base --rounds 2 [--seeds 2000] \
        [--out-json bench/results/swarm_ab/swarm_ab.json]

In:  the checkout to compare against (``--before``: a git worktree of the earlier commit; it runs on this
     project's virtualenv with its own sources first on PYTHONPATH, so the same libraries judge both), the
     seeds and scenario, how many rounds (each runs before, then after).
Out: one JSON record (appended to --out-json): per run its side, commit, wall seconds of the whole command,
     the swarm's own seconds and phase times, verdict counts; per side the median; and the ratio after/before.
     Exit 1 when the median ratio is above --limit (1.25: no slower than the code before by more than 25 %).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.swarm import ROOT, run_sampled


def commit(path: Path) -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path, capture_output=True, text=True).stdout.strip()


def one(side: str, checkout: Path, seeds: int, scenario: str) -> dict:
    """One swarm from ``checkout`` (its sources first on the path: ``python -m`` from there)."""
    cmd = [sys.executable, "-m", "regionchaos.cli", "swarm", "--seeds", str(seeds), "--scenario", scenario, "--json"]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out, code, wall, peak = run_sampled(cmd, cwd=checkout, env=env)
    doc = json.loads(out) if out.strip() else {}
    return {"side": side, "commit": commit(checkout), "exit": code, "wall_seconds": round(wall, 1),
            "swarm_seconds": doc.get("wall_seconds"), "walls": doc.get("walls"), "verdicts": doc.get("verdicts"),
            "peak_rss_mib": round(peak)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", type=Path, required=True, help="a checkout (git worktree) of the code before")
    p.add_argument("--seeds", type=int, default=2000)
    p.add_argument("--scenario", default="smoke")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--limit", type=float, default=1.25)
    p.add_argument("--out-json", type=Path, default=ROOT / "bench" / "results" / "swarm_ab" / "swarm_ab.json")
    args = p.parse_args(argv)
    runs = []
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for r in range(args.rounds):
        for side, checkout in (("before", args.before.resolve()), ("after", ROOT)):
            run = one(side, checkout, args.seeds, args.scenario)
            runs.append(run)
            print(f"round {r + 1} {side} ({run['commit']}): {run['wall_seconds']} s, swarm {run['swarm_seconds']} s, "
                  f"exit {run['exit']}", file=sys.stderr)
    median = {side: statistics.median(x["wall_seconds"] for x in runs if x["side"] == side) for side in ("before", "after")}
    record = {"started": started, "seeds": args.seeds, "scenario": args.scenario, "runs": runs, "median_wall_seconds": median,
              "ratio": round(median["after"] / median["before"], 3), "limit": args.limit,
              "command": f"python -m bench.swarm_ab --before CHECKOUT --rounds {args.rounds} --seeds {args.seeds}"}
    args.out_json.parent.mkdir(parents=True, exist_ok=True)
    with args.out_json.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(json.dumps({k: record[k] for k in ("median_wall_seconds", "ratio", "limit")}))
    return 0 if record["ratio"] <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
