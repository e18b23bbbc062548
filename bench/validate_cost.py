"""Benchmark: what judging a run costs, the GX suites vs the same rule SQL as plain Spark SQL.

    .venv/bin/python -m bench.validate_cost --scenario smoke [--seed 1] [--repeat 3]
    .venv/bin/python -m bench.validate_cost --scenario large --repeat 2

In:  a catalogue scenario (emulated in-process into an embedded S3 server first), or an existing
     run (``--s3-endpoint URL --run-id ID``); the shared local Spark session.
Out: one JSON object on stdout: emulation seconds, reading the artifacts (S3 requests), building
     the tables (pandas, then Spark), and per repetition the wall seconds of
     - ``gx``: every suite through Great Expectations (`regionchaos.judge.engine.judge`, no Data
       Docs), and
     - ``plain``: the same rule SQL straight through ``spark.sql`` (`plain_sql_checks`),
     alternating (gx, plain, gx, plain, ...) so both see the same warm JVM; then one full
     `validate_run` (GX + Data Docs + upload). Both paths must agree on every check.
The 1-minute load average before and after is included: the machines here are shared. Write-up of
the committed runs: bench/results/validate_cost/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import ExitStack, nullcontext


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="smoke")
    p.add_argument("--seed", type=int)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--s3-endpoint", help="judge an existing run at this endpoint (with --run-id)")
    p.add_argument("--run-id")
    p.add_argument("--bucket", default="regionchaos")
    args = p.parse_args(argv)

    from regionchaos import plain_sql, runner
    from regionchaos import tables as T
    from regionchaos.judge import checks, engine, runs, stats
    from regionchaos.scenario import load
    from regionchaos.spark import get_spark
    from regionchaos.storage import EmbeddedS3, ObjectStore, StorageConfig

    out: dict = {"scenario": args.scenario, "load_1m_before": round(os.getloadavg()[0], 2)}
    embedded = EmbeddedS3(bucket=args.bucket) if not args.s3_endpoint else None
    with embedded if embedded is not None else nullcontext(), ExitStack() as stack:
        config = embedded.config if embedded is not None else StorageConfig(endpoint_url=args.s3_endpoint,
                                                                             bucket=args.bucket)
        if args.run_id and args.s3_endpoint:
            run_id = args.run_id
        else:
            scenario = load(args.scenario, seed=args.seed)
            run_id = args.run_id or f"bench-{scenario.name}-s{scenario.seed}"
            store = ObjectStore.for_run(config, run_id)
            started = time.perf_counter()
            runner.start(store, scenario, run_id=run_id, mutant=None, replay="bench")
            out["emulate_s"] = round(time.perf_counter() - started, 1)
        store = ObjectStore.for_run(config, run_id)
        started = time.perf_counter()
        spark = get_spark()
        out["spark_start_s"] = round(time.perf_counter() - started, 1)

        started = time.perf_counter()
        art = T.read_run(store, run_id)
        out["read_s"] = round(time.perf_counter() - started, 1)
        out["read_requests"] = art.requests
        started = time.perf_counter()
        frames = T.build_frames(art)
        out["build_frames_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        spill_dir = stack.enter_context(T.spill_directory(spark))
        tables = {name: T.to_spark(spark, name, f, spill_dir=spill_dir) for name, f in frames.items()}
        out["to_spark_s"] = round(time.perf_counter() - started, 1)
        rows = stats.table_rows(frames)
        out["table_rows"] = {name: len(f) for name, f in frames.items()}
        del frames, art  # judge_deep_run below builds its own

        started = time.perf_counter()
        engine.GXValidator.get()
        out["gx_build_suites_s"] = round(time.perf_counter() - started, 1)
        gx_s, plain_s, verdicts = [], [], set()
        for _ in range(args.repeat):
            started = time.perf_counter()
            gx = engine.judge(spark, tables, [run_id], total_rows=rows)[0]
            gx_s.append(round(time.perf_counter() - started, 1))
            started = time.perf_counter()
            plain = plain_sql.plain_sql_checks(spark, tables, [run_id], total_rows=rows)
            plain_s.append(round(time.perf_counter() - started, 1))
            a = [(c["name"], c["success"], c["unexpected_count"]) for c in gx[run_id]]
            b = [(c["name"], c["success"], c["unexpected_count"]) for c in plain[run_id]]
            if a != b:
                print(json.dumps({"error": "GX and plain SQL disagree", "gx": a, "plain": b}), file=sys.stderr)
                return 1
            verdicts.add(checks.merge_verdict(gx[run_id]))
        out["gx_s"], out["plain_sql_s"] = gx_s, plain_s
        out["gx_over_plain_best"] = round(min(gx_s) / max(0.1, min(plain_s)), 2)
        out["verdict"] = sorted(verdicts)
        started = time.perf_counter()
        full = runs.judge_deep_run(spark, store, run_id, scenario=load(args.scenario, seed=args.seed), mutant=None)
        out["validate_run_s"] = round(time.perf_counter() - started, 1)
        out["validate_run_walls"] = full.wall_seconds
    out["load_1m_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
