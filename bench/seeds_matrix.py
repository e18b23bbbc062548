"""Every catalogue scenario, 20 seeds each, on the correct protocol under one policy: a run may
fail only the rules of recorded findings that apply to its settings, each violation explained by
such a finding's mechanism (`regionchaos.judge.judgement`'s standing, ``expectations/mechanisms/``; the per-seed
record keeps the rows per finding, ``explained``), and a finding's own scenario must show it on
its own seed.

    .venv/bin/python -m bench.seeds_matrix [--seeds 20] [--scenarios a,b] > bench/results/seeds_matrix/README.md
    .venv/bin/python -m bench.seeds_matrix --scenarios large --batch 1 --drop-runs \
        --jsonl bench/results/seeds_matrix/large_flip.jsonl
    .venv/bin/python -m bench.seeds_matrix --fast --policy pr --jsonl bench/results/seeds_matrix/pr.jsonl

``--fast`` emulates the seeds through the swarm's fast path (`regionchaos.swarm`: seeds
as Spark tasks, in memory, one GX pass over all of a scenario's seeds) with the scenario's
own fault settings (no per-seed fault mix); the rows are the deep run's rows
(`tests/test_swarm.py`), so the verdicts are the same, minutes instead of hours.

Writes a markdown table (one row per scenario) on stdout, progress on stderr, and with
``--jsonl`` one line per judged seed as soon as it is judged (a long matrix that is
stopped keeps what it did; ``--summarize`` prints the table of such files). Exit 1 if any
scenario is off its expectation. The default list is the emulated catalogue without `large`
(1,024 regions: minutes per seed; real-Flink scenarios, backend flink, are refused: the matrix
emulates); run it on its own with ``--batch 1`` (one run's tables in Spark at a time) and
``--drop-runs`` (the embedded server keeps objects in memory).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

from rich.console import Console

from regionchaos.findings import allowed_failures
from regionchaos.judge.judgement import FINDING, VALID, judgement_of_record
from regionchaos.scenario import catalogue, load
from regionchaos.seedmatrix import Cell, judge_cells


def fast_seeds(name: str, seeds: list[int], overrides: dict, console, partitions: int | None,
               batch: int, mix: bool = False, on_result=None) -> list[dict]:
    """``seeds`` of scenario ``name`` through the swarm's fast path (consecutive seeds, at most
    ``batch`` of them, become one swarm each: one GX pass), scenario fault settings as written
    plus ``overrides``. Each swarm's summary stays in ``.runs/swarms/`` (errors of unknown checks);
    ``on_result(run)`` is called for each seed as soon as its swarm is judged."""
    from regionchaos.swarm import fast_swarm

    runs, start = [], 0
    seeds = sorted(seeds)
    while start < len(seeds):
        end = start + 1
        while end < len(seeds) and seeds[end] == seeds[end - 1] + 1 and end - start < batch:
            end += 1
        result = fast_swarm(name, end - start, first_seed=seeds[start], overrides=overrides, mix=mix,
                            console=console, partitions=partitions and min(partitions, end - start),
                            local_dir=".runs")
        console.print(f"{name}: {result['judged']} seeds in {result['wall_seconds']} s "
                      f"({result['verdicts']}), swarm {result['swarm_id']}")
        for run in result["runs"]:
            if on_result is not None:
                on_result(run)
            runs.append(run)
        start = end
    return runs


POLICIES = {  # scenario overrides per policy; "flip" is the catalogue as written
    "flip": {},
    "keep-forcing": {"execution.checkpointing.region.forced-global-failure": "keep-forcing"},
    # the PR's handler has one tier 2 of its own (its forced-global abort resets): a scenario that pins the
    # FLIP's alternative (keep-forcing, e.g. ack-loss) runs it as reset-counter, which the PR does anyway
    "pr": {"execution.checkpointing.region.semantics": "pr",
           "execution.checkpointing.region.forced-global-failure": "reset-counter"},
}


def policy_overrides(policy: str, name: str, mix: bool = False) -> dict:
    """The overrides ``policy`` applies to scenario ``name``. keep-forcing is the FLIP's alternative tier 2:
    a scenario that pins the PR's semantics runs as written under it (the PR's handler has one tier 2 of
    its own, and the scenario refuses the combination: regionchaos.scenario)."""
    overrides = dict(POLICIES[policy])
    if policy == "keep-forcing" and load(name).flink.semantics == "pr":
        overrides = {}
    return dict(overrides, **({"faults.swarm": True} if mix else {}))
_RUN_ID = re.compile(r"^(?P<scenario>.+)-s(?P<seed>\d+)-")


def table_row(name: str, runs: list[dict], wall: float | None, overrides: dict | None = None) -> tuple[str, bool]:
    """One markdown row for a scenario's judged seeds, and whether it is off its expectation:
    every failure must be a declared finding's rule (`regionchaos.findings`) under the
    settings the seed ran with, and a scenario marked ``expect: invalid`` must fail its own."""
    sc = load(name, overrides=overrides)
    judged = [(r, judgement_of_record(r, scenario=load(name, overrides=overrides, seed=int(r["seed"])),
                                      must_show=int(r["seed"]) == sc.seed)) for r in runs]
    off = [(r, j.why) for r, j in judged if j.standing not in (VALID, FINDING)]
    verdicts = {v: sum(r["verdict"] == v for r in runs) for v in ("valid", "invalid", "unknown")}
    # the failed rules (invariant.rule) where the records have them, else the failed invariants
    failed = sorted({name for r in runs for name in (r["failed_rules"] if "failed_rules" in r else r["failed"])})
    detail = "; ".join(f"seed {r['seed']}: {why}" for r, why in off[:5])
    seeds = sorted(r["seed"] for r in runs)
    span = f"{seeds[0]}-{seeds[-1]}" if seeds and seeds == list(range(seeds[0], seeds[-1] + 1)) else ",".join(map(str, seeds))
    allowed = sorted(allowed_failures(sc))
    expected = sc.expect.verdict + (f" ({sc.expect.invariant})" if sc.expect.invariant else "")
    if sc.expect.verdict == "invalid" and sc.expect.invariant not in allowed_failures(sc):
        expected = "valid (its finding does not apply under this policy)"
    expected += f"; may fail: {', '.join(allowed)}" if allowed else ""
    row = (f"| {name} | {expected} | {len(runs)} ({span}) | {verdicts['valid']} | {verdicts['invalid']} "
           f"| {verdicts['unknown']} | {', '.join(failed) or '-'} | {'ok' if not off else 'OFF: ' + detail} "
           f"| {'-' if wall is None else f'{wall:.0f}'} |")
    return row, bool(off)


def print_table(rows: list[str]) -> None:
    print("| scenario | expected | seeds | valid | invalid | unknown | failed rules | result | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
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
        first = next(iter(runs.values()))
        overrides = policy_overrides(first.get("policy", "flip"), name, bool(first.get("mix")))
        row, off = table_row(name, [runs[k] for k in sorted(runs)], None, overrides or None)
        rows.append(row)
        bad += off
    print(f"From: {', '.join(paths)} (`.venv/bin/python -m bench.seeds_matrix --summarize ...`)\n")
    print_table(rows)
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--scenarios", help="comma-separated names (default: the catalogue minus large)")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--batch", type=int, default=25, help="runs judged in one pass of the suites (default %(default)s; "
                   "with --fast, seeds per swarm)")
    p.add_argument("--jsonl", help="append one JSON line per judged seed to this file")
    p.add_argument("--drop-runs", action="store_true", help="delete each run's objects once judged (big runs)")
    p.add_argument("--fast", action="store_true", help="emulate through the swarm's fast path (in memory, "
                   "seeds as Spark tasks, one GX pass per scenario)")
    p.add_argument("--partitions", type=int, help="--fast: Spark tasks per scenario (default: the swarm's)")
    p.add_argument("--mix", action="store_true", help="--fast: each seed draws its own fault mix within the "
                   "scenario's bounds (faults.swarm, as `regionchaos swarm`) instead of the scenario's own rates")
    p.add_argument("--skip-findings", action="store_true", help="leave out the scenarios marked expect: invalid "
                   "(the findings' own reproducers)")
    p.add_argument("--summarize", nargs="+", metavar="JSONL", help="only print the table of these --jsonl files")
    p.add_argument("--policy", choices=sorted(POLICIES), default="flip",
                   help="the regional-checkpoint rules every scenario runs under (default: flip, the FLIP as "
                        "proposed, its tier 2 included; keep-forcing: the dev list's alternative; pr: the "
                        "implementation PR's semantics)")
    args = p.parse_args()
    if args.summarize:
        return summarize(args.summarize)
    names = args.scenarios.split(",") if args.scenarios else [n for n in catalogue("emulation") if n != "large"]
    real = sorted(set(names) & set(catalogue("flink")))
    if real:  # the matrix emulates; a real-Flink run draws its own faults on a cluster (regionchaos run)
        p.error(f"--scenarios: {', '.join(real)} run on real Flink (backend flink); the seeds matrix only emulates")
    if args.skip_findings:
        names = [n for n in names if load(n).expect.verdict != "invalid"]
    if args.mix and not args.fast:
        p.error("--mix needs --fast")
    console = Console(stderr=True)
    if args.mix:  # a pinned schedule cannot take a drawn mix (the swarm refuses the combination): left out, said so
        pinned = [n for n in names if load(n).faults.schedule]
        names = [n for n in names if n not in pinned]
        if pinned:
            console.print(f"--mix leaves out {', '.join(pinned)}: a pinned schedule draws no fault mix")
    rows, bad = [], 0
    for name in names:
        started = time.perf_counter()
        overrides = policy_overrides(args.policy, name, args.mix)

        def record(result: dict, name: str = name, started: float = started) -> None:
            if args.jsonl:
                keep = {k: result[k] for k in ("run_id", "seed", "verdict", "failed", "failed_rules", "unknown")}
                keep["explained"] = result.get("explained")
                keep.update({k: result[k] for k in ("unknown_errors", "error") if result.get(k)})
                keep.update(scenario=name, policy=args.policy, elapsed_s=round(time.perf_counter() - started, 1))
                if args.mix:
                    keep["mix"] = True
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(keep, sort_keys=True) + "\n")

        seeds = list(range(args.first_seed, args.first_seed + args.seeds))
        own = load(name).seed  # a finding's scenario must show it on its own seed: judge that one too
        if load(name).expect.verdict == "invalid" and own not in seeds:
            seeds.append(own)
        if args.fast:
            runs = fast_seeds(name, seeds, overrides, console, args.partitions, args.batch, mix=args.mix,
                              on_result=record)
        else:
            runs = judge_cells([Cell(name, seed, overrides or None) for seed in seeds], console=console,
                               batch=args.batch, on_result=record, keep_runs=not args.drop_runs)
        row, off = table_row(name, runs, time.perf_counter() - started, overrides or None)
        rows.append(row)
        bad += off
    print(f"Policy: {args.policy}. Command: `.venv/bin/python -m bench.seeds_matrix {' '.join(sys.argv[1:])}`\n")
    print_table(rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
