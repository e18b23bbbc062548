"""Where one GX pass over a deep smoke run spends its time, and what the pass's settings change.

    .venv/bin/python -m bench.judge_profile [--scenario smoke] [--seed 1] [--repeat 3] > bench/results/judge_profile/NAME.md

Emulates the scenario's seed into the embedded S3 server, loads its tables once, then times (after
one warm-up pass, which pays the JVM's and GX's start) for each variant: the GX pass (`gx_checks`,
what a run's validation does) and, per suite, Spark's planning and execution of the suite's one
query, with its jobs and stages (Spark's status tracker). Variants: the suites' jobs one at a time
or `SUITE_WORKERS` at once, and shuffled-hash instead of sort-merge joins on small tables.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from contextlib import contextmanager

from regionchaos import runner
from regionchaos import tables as T
from regionchaos.judge import checks as C
from regionchaos.judge import engine as E
from regionchaos.judge import intake as I
from regionchaos.judge import suites as S
from regionchaos.judge import stats as ST
from regionchaos.scenario import load
from regionchaos.spark import get_spark
from regionchaos.storage import ObjectStore


@contextmanager
def conf(spark, settings: dict):
    old = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


def per_suite(spark, custom, suites, tag: str) -> list[tuple]:
    tracker, out = spark.sparkContext.statusTracker(), []
    for s in suites:
        group = f"{tag}-{s.name}"
        spark.sparkContext.setJobGroup(group, group)
        t0 = time.perf_counter()
        df = spark.sql(custom.violations_query(s.combined_sql(), s.rule_names))
        df._jdf.queryExecution().executedPlan()
        t1 = time.perf_counter()
        df.collect()
        t2 = time.perf_counter()
        jobs = tracker.getJobIdsForGroup(group)
        stages = sum(len(tracker.getJobInfo(j).stageIds) for j in jobs)
        out.append((s.name, t1 - t0, t2 - t1, len(jobs), stages))
    spark.sparkContext.setJobGroup("", "")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="smoke")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"# One GX pass: `bench/judge_profile.py --scenario {args.scenario} --seed {args.seed} --repeat {args.repeat}`\n")
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    with runner.storage_for(None) as config:
        spark = get_spark()
        scenario = load(args.scenario, seed=args.seed)
        run_id = f"judge-profile-{args.scenario}-s{args.seed}"
        store = ObjectStore.for_run(config, run_id)
        t = time.perf_counter()
        runner.start(store, scenario, run_id=run_id, mutant=None, replay="-")
        emulate_s = time.perf_counter() - t
        with T.spill_directory(spark) as spill:
            t = time.perf_counter()
            tables, frames, _ = I.many_runs(spark, [store], spill_dir=spill)
            load_s = time.perf_counter() - t
            rows = ST.table_rows(frames)
            print(f"emulate {emulate_s:.2f} s; tables loaded in {load_s:.2f} s (first load in the JVM); {rows:,} rows\n")
            t = time.perf_counter()
            E.judge(spark, tables, [run_id], total_rows=rows)
            print(f"warm-up GX pass (GX context built, JVM cold): {time.perf_counter() - t:.2f} s\n")
            custom, suites = S.load_custom(), S.load_suites()
            variants = {
                "one suite at a time, sort-merge joins": (1, {}),
                f"{E.SUITE_WORKERS} suites at once, sort-merge joins": (E.SUITE_WORKERS, {}),
                "one suite at a time, shuffled hash joins": (1, {"spark.sql.join.preferSortMergeJoin": "false"}),
                f"{E.SUITE_WORKERS} suites at once, shuffled hash joins": (E.SUITE_WORKERS, {"spark.sql.join.preferSortMergeJoin": "false"}),
            }
            walls: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.repeat):
                for name, (workers, settings) in variants.items():
                    saved = E.SUITE_WORKERS
                    E.SUITE_WORKERS = workers
                    try:
                        with conf(spark, settings):
                            t = time.perf_counter()
                            judged, timings, _ = E.judge(spark, tables, [run_id], total_rows=rows)
                            walls[name].append(time.perf_counter() - t)
                    finally:
                        E.SUITE_WORKERS = saved
                    assert C.merge_verdict(judged[run_id]) in ("valid", "invalid"), judged
            print("| variant | GX pass s (each repetition) | median |\n|---|---|---|")
            for name, w in walls.items():
                print(f"| {name} | {', '.join(f'{x:.2f}' for x in w)} | **{statistics.median(w):.2f}** |")
            print("\nPer suite, one at a time, sort-merge joins (the suite's one query, as the metric runs it):\n")
            tables = E.prepare_tables(tables, rows)
            E.register_views(tables)
            tables["run"].createOrReplaceTempView(custom.BATCH_VIEW)
            with E.tuned_session(spark, rows):
                per_suite(spark, custom, suites, "warm")
                found = per_suite(spark, custom, suites, "timed")
            print("| suite | plan s | execute s | jobs | stages |\n|---|---|---|---|---|")
            for name, plan, run, jobs, stages in found:
                print(f"| {name} | {plan:.2f} | {run:.2f} | {jobs} | {stages} |")
            print(f"| all | {sum(f[1] for f in found):.2f} | {sum(f[2] for f in found):.2f} | "
                  f"{sum(f[3] for f in found)} | {sum(f[4] for f in found)} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
