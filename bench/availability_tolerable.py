"""The Availability hazard (finding F9): how often does a regional checkpoint's abort fail
the job through ``execution.checkpointing.tolerable-failed-checkpoints``?

In:  a catalogue scenario, a number of seeds and decline rates (per subtask and checkpoint; no
     timeouts or crashes, so every job failure comes from the failure accounting).
Out: one JSON line per (decline rate, semantics, tolerable, regional on/off): checkpoints
     decided, job failures (global restores the emulator makes for an outcome ``job_failed``),
     runs with at least one, forced checkpoints aborted, ratio aborts, REGIONAL completions.
     Each run is emulated into an in-memory store (`regionchaos.runner.emulate_in_memory`, the
     swarm's fast path: the real data plane, a dict for a bucket; no S3 server, no Spark).

    .venv/bin/python -m bench.availability_tolerable regional-basic 20 0.02,0.05,0.1 \
        > bench/results/availability_tolerable/regional-basic.jsonl
"""

from __future__ import annotations

import argparse
import json

from regionchaos.runner import emulate_in_memory
from regionchaos.scenario import load

CAUSE = "checkpoint tolerable failure threshold exceeded"
CONFIGS = (("flip", 0, True), ("pr", 0, True), ("pr", 1, True), ("pr", 3, True), ("pr", 0, False))


def measure(scenario: str, seed: int, semantics: str, tolerable: int, region: bool, decline_rate: float) -> dict:
    sc = load(scenario, seed=seed, overrides={
        "flink.execution.checkpointing.region.semantics": semantics,
        "flink.execution.checkpointing.region.enabled": region,
        "flink.execution.checkpointing.tolerable-failed-checkpoints": tolerable,
        "faults.decline": decline_rate, "faults.timeout": 0.0, "faults.subtask_crash": 0.0})
    result, _ = emulate_in_memory(sc, None, rows=False)
    decided = [e for e in result.events if e["kind"] == "checkpoint_decided"]
    aborted = [d for d in decided if d["status"] == "ABORTED"]
    return {"checkpoints": len(decided),
            "job_failures": sum(e["kind"] == "global_restore" and e.get("cause") == CAUSE for e in result.events),
            "forced_aborts": sum(bool(d["forced_global"]) for d in aborted),
            "ratio_aborts": sum(d["reason"] == "failure-ratio-exceeded" for d in aborted),
            "regional_completed": result.stats["regional"]}


def main(scenario: str, seeds: int, rates: str) -> None:
    for rate in (float(r) for r in rates.split(",")):
        for semantics, tolerable, region in CONFIGS:
            rows = [measure(scenario, s, semantics, tolerable, region, rate) for s in range(1, seeds + 1)]
            total = {k: sum(r[k] for r in rows) for k in rows[0]}
            print(json.dumps({"scenario": scenario, "decline": rate, "semantics": semantics, "tolerable": tolerable,
                              "regional": region, "seeds": seeds, **total,
                              "runs_with_job_failure": sum(r["job_failures"] > 0 for r in rows)}), flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="availability_tolerable.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", help="a catalogue scenario, e.g. regional-basic")
    p.add_argument("seeds", type=int, help="seeds 1..SEEDS per configuration")
    p.add_argument("rates", help="decline rates, comma-separated, e.g. 0.02,0.05,0.1")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error(f"seeds: must be at least 1, got {args.seeds}")
    try:
        rates = [float(r) for r in args.rates.split(",")]
    except ValueError:
        p.error(f"rates: not comma-separated numbers: {args.rates!r}")
    if any(not 0 <= r <= 1 for r in rates):
        p.error(f"rates: each must be between 0 and 1, got {args.rates}")
    return args


if __name__ == "__main__":
    _args = parse_args()
    main(_args.scenario, _args.seeds, _args.rates)
