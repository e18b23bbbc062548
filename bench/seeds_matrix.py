"""Every catalogue scenario not marked `expect: invalid` must be valid on the correct
protocol for 20 seeds each; every finding must fail for its stated invariant.

    .venv/bin/python bench/seeds_matrix.py [--seeds 20] [--scenarios a,b] > bench/seeds_matrix.md
    .venv/bin/python bench/seeds_matrix.py --scenarios large --batch 1 --drop-runs --jsonl large.jsonl

Writes a markdown table (one row per scenario) on stdout, progress on stderr, and with
``--jsonl`` one line per judged seed as soon as it is judged (a long matrix that is
stopped keeps what it did; ``--summarize`` prints the table of such files). Exit 1 if any
scenario is off its expectation. The default list is the catalogue without `large`
(1,024 regions: minutes per seed); run it on its own with ``--batch 1`` (one run's tables
in Spark at a time) and ``--drop-runs`` (the embedded server keeps objects in memory).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

from rich.console import Console

from regionchaos.scenario import catalogue, load
from regionchaos.swarm import judge_seeds


_RUN_ID = re.compile(r"^(?P<scenario>.+)-s(?P<seed>\d+)-")


def table_row(name: str, runs: list[dict], wall: float | None) -> tuple[str, bool]:
    """One markdown row for a scenario's judged seeds, and whether it is off its expectation."""
    sc = load(name)
    if sc.expect.verdict == "invalid":
        off = [r for r in runs if r["verdict"] != "invalid" or sc.expect.invariant not in r["failed"]]
    else:
        off = [r for r in runs if r["verdict"] != "valid"]
    verdicts = {v: sum(r["verdict"] == v for r in runs) for v in ("valid", "invalid", "unknown")}
    detail = "; ".join(f"seed {r['seed']}: {r['verdict']} {','.join(r['failed'] + r['unknown'])}" for r in off[:5])
    seeds = sorted(r["seed"] for r in runs)
    span = f"{seeds[0]}-{seeds[-1]}" if seeds and seeds == list(range(seeds[0], seeds[-1] + 1)) else ",".join(map(str, seeds))
    expected = sc.expect.verdict + (f" ({sc.expect.invariant})" if sc.expect.invariant else "")
    row = (f"| {name} | {expected} | {len(runs)} ({span}) | {verdicts['valid']} | {verdicts['invalid']} "
           f"| {verdicts['unknown']} | {'ok' if not off else 'OFF: ' + detail} | {'-' if wall is None else f'{wall:.0f}'} |")
    return row, bool(off)


def print_table(rows: list[str]) -> None:
    print("| scenario | expected | seeds | valid | invalid | unknown | result | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def summarize(paths: list[str]) -> int:
    """The table from ``--jsonl`` files (several processes may have shared a scenario's seeds)."""
    by_scenario: dict[str, dict[int, dict]] = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    name = r.get("scenario") or _RUN_ID.match(r["run_id"])["scenario"]
                    by_scenario.setdefault(name, {})[int(r["seed"])] = r
    rows, bad = [], 0
    for name, runs in by_scenario.items():
        row, off = table_row(name, [runs[k] for k in sorted(runs)], None)
        rows.append(row)
        bad += off
    print(f"From: {', '.join(paths)} (`.venv/bin/python bench/seeds_matrix.py --summarize ...`)\n")
    print_table(rows)
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--scenarios", help="comma-separated names (default: the catalogue minus large)")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--batch", type=int, default=25, help="runs judged in one pass of the suites (default %(default)s)")
    p.add_argument("--jsonl", help="append one JSON line per judged seed to this file")
    p.add_argument("--drop-runs", action="store_true", help="delete each run's objects once judged (big runs)")
    p.add_argument("--summarize", nargs="+", metavar="JSONL", help="only print the table of these --jsonl files")
    args = p.parse_args()
    if args.summarize:
        return summarize(args.summarize)
    names = args.scenarios.split(",") if args.scenarios else [n for n in catalogue() if n != "large"]
    console = Console(stderr=True)
    rows, bad = [], 0
    for name in names:
        started = time.perf_counter()

        def record(result: dict, name: str = name, started: float = started) -> None:
            if args.jsonl:
                keep = {k: result[k] for k in ("run_id", "seed", "verdict", "failed", "unknown")}
                keep.update(scenario=name, elapsed_s=round(time.perf_counter() - started, 1))
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(keep, sort_keys=True) + "\n")

        runs = judge_seeds(name, range(args.first_seed, args.first_seed + args.seeds), console=console,
                           batch=args.batch, on_result=record, keep_runs=not args.drop_runs)
        row, off = table_row(name, runs, time.perf_counter() - started)
        rows.append(row)
        bad += off
    print(f"Command: `.venv/bin/python bench/seeds_matrix.py {' '.join(sys.argv[1:])}`\n")
    print_table(rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
