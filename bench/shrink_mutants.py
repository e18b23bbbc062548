"""Shrinking, shown on mutants: each mutant's pinned failing case (`expectations/mutant_cases.yaml`) shrunk by
`regionchaos shrink`, then the shrunk file replayed as a deep run by `regionchaos run`.

    .venv/bin/python -m bench.shrink_mutants [--mutants a,b,c] > bench/results/shrink_mutants/README.md

Writes the shrunk scenario files to ``bench/results/shrink_mutants/shrunk/<mutant>.yaml`` and a markdown table on
stdout: the size before and after (faults, fault-phase checkpoints, parallelism), rounds,
schedules judged, wall time, and whether the deep replay of the shrunk file fails the same
invariant (exit 1). Exit 1 if any shrink fails or any replay does not fail the invariant.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from bench.mutant_swarm import CASES
from regionchaos.run import set_args

ROOT = Path(__file__).resolve().parents[1]

DEFAULT = ("failed-region-commits", "ignore-failure-ratio", "fallback-to-aborted", "cleaner-ignores-refs")
CLI = str(ROOT / ".venv" / "bin" / "regionchaos")


def shrink_one(mutant: str, out_dir: Path) -> dict:
    scenario, seed, overrides, suites = CASES[mutant]
    invariant = next(iter(suites))
    out = out_dir / f"{mutant}.yaml"
    sets = set_args(overrides)
    command = [CLI, "shrink", "--scenario", scenario, "--seed", str(seed), *sets, "--mutant", mutant,
               "--invariant", invariant, "--out", str(out.relative_to(ROOT))]
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={"COLUMNS": "200", **_env()})
    row = {"mutant": mutant, "scenario": scenario, "seed": seed, "overrides": overrides, "invariant": invariant,
           "command": " ".join(command[1:]).replace(CLI, "regionchaos"), "exit": proc.returncode,
           "wall_s": round(time.perf_counter() - started, 1)}
    m = re.search(r"shrunk (\d+) faults / (\d+) checkpoints / parallelism (\d+) to (\d+) / (\d+) / (\d+) in (\d+) "
                  r"rounds \((\d+) schedules judged", proc.stdout)
    if proc.returncode != 0 or not m:
        row["error"] = (proc.stdout + proc.stderr)[-2000:]
        return row
    b = list(map(int, m.groups()))
    row.update(before=b[0:3], after=b[3:6], rounds=b[6], judged=b[7], file=str(out.relative_to(ROOT)))
    replay = [CLI, "run", "--scenario", str(out.relative_to(ROOT)), "--mutant", mutant, "--json",
              "--local-dir", "/tmp/regionchaos-shrink-replays"]
    deep = subprocess.run(replay, cwd=ROOT, capture_output=True, text=True, env=_env())
    summary = json.loads(deep.stdout) if deep.stdout.strip().startswith("{") else {}
    row.update(replay_command=" ".join(replay[1:6]).replace(CLI, "regionchaos"), replay_exit=deep.returncode,
               replay_failed=[c["name"] for c in summary.get("checks", []) if c.get("success") is False])
    return row


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("REGIONCHAOS_")}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mutants", default=",".join(DEFAULT))
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "results" / "shrink_mutants" / "shrunk"))
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "shrink_mutants" / "shrink_mutants.json"))
    args = p.parse_args()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for mutant in args.mutants.split(","):
        print(f"shrinking {mutant} ...", file=sys.stderr, flush=True)
        rows.append(shrink_one(mutant, out_dir))
        print(json.dumps(rows[-1])[:400], file=sys.stderr, flush=True)
    Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    print(f"Command: `.venv/bin/python -m bench.shrink_mutants {' '.join(sys.argv[1:])}`\n")
    print("| mutant | case | invariant | before (faults / checkpoints / parallelism) | after | rounds | "
          "schedules judged | shrink wall s | deep replay of the shrunk file |")
    print("|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for r in rows:
        if "error" in r:
            bad += 1
            print(f"| {r['mutant']} | {r['scenario']} seed {r['seed']} | {r['invariant']} | FAILED (exit {r['exit']}) "
                  "| | | | | |")
            continue
        ok = r["replay_exit"] == 1 and r["invariant"] in r["replay_failed"]
        bad += not ok
        print(f"| {r['mutant']} | {r['scenario']} seed {r['seed']} | {r['invariant']} "
              f"| {' / '.join(map(str, r['before']))} | {' / '.join(map(str, r['after']))} | {r['rounds']} "
              f"| {r['judged']} | {r['wall_s']:.0f} | exit {r['replay_exit']}, fails {', '.join(r['replay_failed'])}"
              f"{'' if ok else ' (NOT the invariant)'} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
