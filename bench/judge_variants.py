"""A warm GX pass under other join strategies, and how a pass's cost grows with the runs judged.

    .venv/bin/python -m bench.judge_variants [--runs 2] [--mutant-every 2] [--repeat 3] [--scale]

Emulates smoke seeds 1..RUNS into the embedded S3 server (every MUTANT_EVERY-th seed with the mutant
failed-region-commits, so the pass has failing rules and their tagging queries), loads their tables once,
then times `regionchaos.judge.engine.judge` (one GX pass, what every path's judging does) after a warm-up pass, for each
variant of the small-tables settings (`regionchaos.judge.engine.tuned_session`): as now, broadcast joins allowed (100 MB),
shuffled-hash joins forced. Reports the JVM's CPU seconds (the driver's process, psutil) and the wall time,
median over the repetitions, and checks every variant gives the same verdicts and rule counts.
``--scale``: instead, the pass as now over the first 1/8, 1/4, 1/2 and all of the runs.
"""
from __future__ import annotations

import argparse
import statistics
import time
from contextlib import contextmanager

from regionchaos import runner
from regionchaos import tables as T
from regionchaos.judge import checks as C
from regionchaos.judge import engine as E
from regionchaos.judge import intake as I
from regionchaos.judge import stats as ST
from regionchaos.scenario import load
from regionchaos.spark import get_spark
from regionchaos.storage import ObjectStore

from bench.judge_profile import conf  # settings set for a block, then restored
from bench.jvm_per_test import jvm_cpu_seconds

MUTANT = "failed-region-commits"
VARIANTS = {
    "as now": {},
    "broadcast joins (threshold 100 MB)": {"spark.sql.autoBroadcastJoinThreshold": "100MB"},
    "shuffled-hash joins forced": {"spark.sql.join.forceApplyShuffledHashJoin": "true"},
}


@contextmanager
def settings_over_tuned(extra: dict):
    """`regionchaos.judge.engine.tuned_session` with ``extra`` set on top, for the duration of the block."""
    original = E.tuned_session

    @contextmanager
    def tuned(spark, total_rows):
        with original(spark, total_rows), conf(spark, extra):
            yield

    E.tuned_session = tuned
    try:
        yield
    finally:
        E.tuned_session = original


def timed_pass(spark, tables, run_ids, rows) -> tuple[float, float, dict]:
    cpu, wall = jvm_cpu_seconds(), time.perf_counter()
    judged, _, _ = E.judge(spark, tables, run_ids, total_rows=rows)
    outcome = {r: (C.merge_verdict(checks), tuple(sorted((c["name"], c["success"], c.get("unexpected_count"))
                                                         for c in checks))) for r, checks in judged.items()}
    return jvm_cpu_seconds() - cpu, time.perf_counter() - wall, outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--mutant-every", type=int, default=2, help="every N-th seed with the mutant (0: none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", action="store_true", help="the pass as now over growing shares of the runs")
    args = ap.parse_args()
    with runner.storage_for(None) as config:
        spark = get_spark()
        stores, run_ids = [], []
        for seed in range(1, args.runs + 1):
            mutant = MUTANT if args.mutant_every and seed % args.mutant_every == 0 else None
            run_id = f"judge-variants-s{seed}-{mutant or 'none'}"
            store = ObjectStore.for_run(config, run_id)
            runner.start(store, load("smoke", seed=seed), run_id=run_id, mutant=mutant, replay="-")
            stores.append(store)
            run_ids.append(run_id)
        with T.spill_directory(spark) as spill:
            if args.scale:
                print("| runs | rows | JVM CPU s | wall s |\n|---|---|---|---|")
                for n in sorted({max(1, args.runs // 8), max(1, args.runs // 4), max(1, args.runs // 2), args.runs}):
                    tables, frames, arts = I.many_runs(spark, stores[:n], spill_dir=spill)
                    rows = ST.table_rows(frames)
                    timed_pass(spark, tables, list(arts), rows)  # warm-up
                    runs = [timed_pass(spark, tables, list(arts), rows)[:2] for _ in range(args.repeat)]
                    print(f"| {n} | {rows:,} | {statistics.median(c for c, _ in runs):.1f} | "
                          f"{statistics.median(w for _, w in runs):.1f} |")
                return
            tables, frames, arts = I.many_runs(spark, stores, spill_dir=spill)
            rows = ST.table_rows(frames)
            timed_pass(spark, tables, list(arts), rows)  # warm-up: the JVM's and GX's start
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
            reference = None
            for _ in range(args.repeat):
                for name, extra in VARIANTS.items():
                    with settings_over_tuned(extra):
                        cpu, wall, outcome = timed_pass(spark, tables, list(arts), rows)
                    reference = reference or outcome
                    if outcome != reference:
                        raise SystemExit(f"{name}: other verdicts or counts than the first variant")
                    results[name].append((cpu, wall))
            print(f"{args.runs} smoke runs, {rows:,} rows; warm passes, median of {args.repeat}\n")
            print("| variant | JVM CPU s | wall s |\n|---|---|---|")
            for name, runs in results.items():
                print(f"| {name} | {statistics.median(c for c, _ in runs):.1f} | "
                      f"{statistics.median(w for _, w in runs):.1f} |")


if __name__ == "__main__":
    main()
