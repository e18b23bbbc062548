"""Benchmark: how the cost of a run grows with the number of regions and of checkpoints.

    .venv/bin/python -m bench.scaling [--regions 64,256,1024,4096] [--checkpoints 50]
                                      [--vary-checkpoints 25,50,100,200 --at-regions 256]
                                      [--plain-sql] > bench/results/scaling/README.md

In:  the `large` scenario (1 region per source subtask, file merging over 8 TaskManagers,
     the same fault rates), with ``topology.parallelism`` = ``workload.splits`` = regions and
     ``checkpoints`` overridden per point; embedded S3; the shared local Spark session.
Out: a markdown table on stdout, one row per point: wall seconds to emulate (control plane
     and the data plane in this process, writing to the embedded S3 server), to judge the run
     (all suites through GX, or ``--plain-sql``: the same rule SQL without GX), the verdict,
     subtask-checkpoints, records and S3 requests, and the peak RSS of the process tree.
     Progress on stderr. Exit 1 if a point is not valid (the correct protocol must be).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bench.large_emulate import PeakRss


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--regions", type=_ints, default=[64, 256, 1024, 4096], help="parallelism = regions (default %(default)s)")
    p.add_argument("--checkpoints", type=int, default=50, help="checkpoints for the regions sweep (default %(default)s)")
    p.add_argument("--vary-checkpoints", type=_ints, default=[25, 50, 100, 200],
                   help="checkpoints for the second sweep (default %(default)s; empty string: skip)")
    p.add_argument("--at-regions", type=int, default=256, help="regions for the checkpoints sweep (default %(default)s)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--plain-sql", action="store_true", help="judge with plain Spark SQL instead of GX")
    args = p.parse_args(argv)

    from rich.console import Console

    from regionchaos import runner
    from regionchaos.scenario import load
    from regionchaos.spark import get_spark
    from regionchaos.storage import EmbeddedS3, ObjectStore
    from regionchaos import tables as T
    from regionchaos.judge import intake
    from regionchaos.judge.runs import judge_stores
    from regionchaos.judge.stats import table_rows
    from regionchaos.plain_sql import plain_sql_results

    def judged(spark, store, run_id: str) -> dict:
        """The run's checks and verdict: GX's (the judge), or the same rules as plain Spark SQL."""
        if not args.plain_sql:
            judgement = judge_stores(spark, [store])[run_id]
            return {"checks": judgement.checks, "verdict": judgement.verdict}
        with T.spill_directory(spark) as spill:
            tables, frames, _ = intake.many_runs(spark, [store], spill_dir=spill)
            return plain_sql_results(spark, tables, [run_id], total_rows=table_rows(frames))[run_id]

    console = Console(stderr=True)
    points = [(r, args.checkpoints) for r in args.regions]
    points += [(args.at_regions, c) for c in args.vary_checkpoints if (args.at_regions, c) not in points]
    rows, bad = [], 0
    load_before = os.getloadavg()[0]
    with EmbeddedS3() as s3:
        spark = get_spark()
        for regions, checkpoints in points:
            overrides = {"topology.parallelism": regions, "workload.splits": regions, "checkpoints": checkpoints}
            scenario = load("large", overrides=overrides, seed=args.seed)
            run_id = f"scaling-r{regions}-c{checkpoints}-s{args.seed}"
            store = ObjectStore.for_run(s3.config, run_id)
            console.print(f"regions {regions}, checkpoints {checkpoints}: emulating ...")
            with PeakRss() as rss:
                started = time.perf_counter()
                result, _ = runner.start(store, scenario, run_id=run_id, mutant=None, replay="bench")
                emulate_s = time.perf_counter() - started
                s3_requests = store.stats.as_dict()["requests"]
                console.print(f"  emulated in {emulate_s:.1f} s; judging ...")
                started = time.perf_counter()
                verdict = judged(spark, store, run_id)
                judge_s = time.perf_counter() - started
            st = result.stats
            failed = [c["name"] for c in verdict["checks"] if c.get("success") is not True]
            bad += verdict["verdict"] != "valid"
            rows.append(f"| {regions} | {checkpoints} | {regions * st['triggered']:,} | {st['records_in']:,} "
                        f"| {st['global']}/{st['regional']}/{st['aborted']} | {s3_requests} | {emulate_s:.1f} "
                        f"| {judge_s:.1f} | {emulate_s + judge_s:.1f} | {rss.peak / 2**20:,.0f} "
                        f"| {verdict['verdict']}{' ' + ','.join(failed) if failed else ''} |")
            console.print(f"  judged in {judge_s:.1f} s: {verdict['verdict']}")
    judge = "plain Spark SQL" if args.plain_sql else "GX suites"
    print(f"Command: `{' '.join(['.venv/bin/python -m bench.scaling', *(argv if argv is not None else sys.argv[1:])])}`\n")
    print(f"Judged with: {judge}. 1-minute load average before {load_before:.1f}, after {os.getloadavg()[0]:.1f}.\n")
    print("| regions | checkpoints | subtask-checkpoints | records | global/regional/aborted | S3 requests (emulate) "
          "| emulate s | judge s | total s | peak RSS MiB | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
