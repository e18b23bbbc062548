"""Every catalogue scenario not marked `expect: invalid` must be valid on the correct
protocol for 20 seeds each; every finding must fail for its stated invariant.

    .venv/bin/python bench/seeds_matrix.py [--seeds 20] [--scenarios a,b] > bench/seeds_matrix.md

Writes a markdown table (one row per scenario) on stdout, progress on stderr. Exit 1 if
any scenario is off its expectation. `large` is left out (it is the performance run).
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console

from regionchaos.scenario import catalogue, load
from regionchaos.swarm import judge_seeds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--scenarios", help="comma-separated names (default: the catalogue minus large)")
    args = p.parse_args()
    names = args.scenarios.split(",") if args.scenarios else [n for n in catalogue() if n != "large"]
    console = Console(stderr=True)
    rows, bad = [], 0
    for name in names:
        sc = load(name)
        started = time.perf_counter()
        runs = judge_seeds(name, range(1, args.seeds + 1), console=console)
        wall = time.perf_counter() - started
        if sc.expect.verdict == "invalid":
            off = [r for r in runs if r["verdict"] != "invalid" or sc.expect.invariant not in r["failed"]]
        else:
            off = [r for r in runs if r["verdict"] != "valid"]
        bad += bool(off)
        verdicts = {v: sum(r["verdict"] == v for r in runs) for v in ("valid", "invalid", "unknown")}
        detail = "; ".join(f"seed {r['seed']}: {r['verdict']} {','.join(r['failed'] + r['unknown'])}" for r in off[:5])
        rows.append(f"| {name} | {sc.expect.verdict}{' (' + sc.expect.invariant + ')' if sc.expect.invariant else ''} "
                    f"| {len(runs)} | {verdicts['valid']} | {verdicts['invalid']} | {verdicts['unknown']} "
                    f"| {'ok' if not off else 'OFF: ' + detail} | {wall:.0f} |")
    print(f"Command: `.venv/bin/python bench/seeds_matrix.py --seeds {args.seeds}`\n")
    print("| scenario | expected | seeds | valid | invalid | unknown | result | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
