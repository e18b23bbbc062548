"""What the one-partition shuffles of a GX pass cost: the judge's plan rule on and off.

    .venv/bin/python -m bench.exchanges [--scenario smoke] [--seed 1] [--mutant M] [--repeat 3] > bench/results/exchanges/NAME.md

On a run's small tables (one partition each, `regionchaos.judge.engine.prepare_tables`) Spark still puts a
shuffle between most joins: the output of an inner sort-merge join has a `PartitioningCollection` of its
children's partitionings, and `EnsureRequirements` keeps a join's children unshuffled only when each
child's partitioning *is* `SinglePartition`, so every join above another join shuffles both sides, from
one partition into one partition. The judge's plan rule (`regionchaos.sparkrules`,
``regionchaos/java/SinglePartitionShuffles.java``) drops those shuffles in a small pass. This script
measures it, in one process whose session has the rule loaded, switching it per pass
(``REGIONCHAOS_SPARK_RULES``, which `sparkrules.pass_conf` reads): on one emulated run, per variant and
repetition, one whole GX pass (`regionchaos.judge.engine.judge`), whose per-rule results must be the same with and without
the rule (checked; exit 1 if not), then per suite the planning and execution time of the suite's one query,
its exchanges (in the executed plan) and stages (Spark's status tracker).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import contextmanager

from regionchaos import runner, sparkrules
from regionchaos import tables as T
from regionchaos.judge import engine as E
from regionchaos.judge import intake as I
from regionchaos.judge import suites as S
from regionchaos.judge import stats as ST
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore


@contextmanager
def rule(on: bool):
    """The plan rule on or off for the passes (and `E.tuned_session`s) entered inside."""
    old = os.environ.get(sparkrules.SWITCH_ENV)
    os.environ[sparkrules.SWITCH_ENV] = "on" if on else "off"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(sparkrules.SWITCH_ENV, None)
        else:
            os.environ[sparkrules.SWITCH_ENV] = old


def per_suite(spark, custom, suites, tag: str) -> list[tuple]:
    tracker, out = spark.sparkContext.statusTracker(), []
    for s in suites:
        group = f"{tag}-{s.name}"
        spark.sparkContext.setJobGroup(group, group)
        t0 = time.perf_counter()
        df = spark.sql(custom.violations_query(s.combined_sql(), s.rule_names))
        plan = df._jdf.queryExecution().executedPlan().toString()
        t1 = time.perf_counter()
        df.collect()
        t2 = time.perf_counter()
        stages = sum(len(tracker.getJobInfo(j).stageIds) for j in tracker.getJobIdsForGroup(group))
        out.append((s.name, t1 - t0, t2 - t1, plan.count("Exchange"), stages))
    spark.sparkContext.setJobGroup("", "")
    return out


def rule_counts(per_run: dict) -> dict:
    return {(run, c["name"]): (c.get("success"), c.get("rules")) for run, checks in per_run.items() for c in checks}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="smoke")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutant", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"# Shuffles of a GX pass: `bench/exchanges.py --scenario {args.scenario} --seed {args.seed} "
          f"--mutant {args.mutant} --repeat {args.repeat}`\n")
    print(f"load average before: {os.getloadavg()[0]:.2f}; JAVA_TOOL_OPTIONS={os.environ.get('JAVA_TOOL_OPTIONS', '')!r}\n")
    with runner.storage_for(None) as config:
        spark = E.judging_session()
        if sparkrules.EXTENSION_CLASS not in (spark.conf.get("spark.sql.extensions", None) or ""):
            print(f"the session has no plan rule: {sparkrules.last_error or 'switched off'}", file=sys.stderr)
            return 2
        scenario = load(args.scenario, seed=args.seed)
        run_id = f"bench-exchanges-{args.scenario}-s{args.seed}-{args.mutant or 'correct'}"
        store = ObjectStore.for_run(config, run_id)
        runner.start(store, scenario, run_id=run_id, mutant=args.mutant, replay="-")
        custom, suites = S.load_custom(), S.load_suites()
        with T.spill_directory(spark) as spill:
            tables, frames, _ = I.many_runs(spark, [store], spill_dir=spill)
            rows = ST.table_rows(frames)
            print(f"{rows:,} rows\n")
            results, passes = {}, {False: [], True: []}
            for _ in range(args.repeat + 1):  # the first round warms the JVM and GX; not reported
                for on in (False, True):
                    with rule(on):
                        t = time.perf_counter()
                        per_run = E.judge(spark, tables, [run_id], total_rows=rows)[0]
                        passes[on].append(time.perf_counter() - t)
                        results.setdefault(on, rule_counts(per_run))
            same = results[False] == results[True]
            small = E.prepare_tables(tables, rows)
            E.register_views(small)
            small["run"].createOrReplaceTempView(custom.BATCH_VIEW)
            table: dict[bool, list] = {False: [], True: []}
            for _ in range(args.repeat):
                for on in (False, True):
                    with rule(on), E.tuned_session(spark, rows):
                        table[on].append(per_suite(spark, custom, suites, f"{on}-{len(table[on])}"))
    print("| variant | GX pass s (each repetition after a warm-up) | plan s | execute s | exchanges | stages |")
    print("|---|---|---|---|---|---|")
    for on in (False, True):
        reps = table[on]
        plan = [sum(r[1] for r in rep) for rep in reps]
        run = [sum(r[2] for r in rep) for rep in reps]
        print(f"| {'the plan rule on' if on else 'as Spark plans it'} | "
              f"{', '.join(f'{x:.2f}' for x in passes[on][1:])} | {', '.join(f'{x:.2f}' for x in plan)} | "
              f"{', '.join(f'{x:.2f}' for x in run)} | {sum(r[3] for r in reps[-1])} | {sum(r[4] for r in reps[-1])} |")
    print("\nPer suite (last repetition): as planned / with the rule\n")
    print("| suite | exchanges | stages | execute s |\n|---|---|---|---|")
    for a, b in zip(table[False][-1], table[True][-1]):
        print(f"| {a[0]} | {a[3]} / {b[3]} | {a[4]} / {b[4]} | {a[2]:.2f} / {b[2]:.2f} |")
    print(f"\nper-rule results identical with and without the rule: {same}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
