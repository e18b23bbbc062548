"""What each suite and each rule of the judge costs on one run's tables: where a pass's time goes.

    .venv/bin/python -m bench.rule_costs [--scenario large] [--seed 1] [--repeat 2] [--top 4] [--out-json PATH]

Emulates the scenario's run into the embedded S3 server, reads its tables back as every judge does
(`regionchaos.judge.intake.many_runs`), then under the judge's session settings for that many rows
(`regionchaos.judge.engine.prepare_tables`, `tuned_session`) runs each suite's query (its rules' union, as the
GX pass runs it, without GX) ``--repeat`` times one after another, and each rule of the ``--top`` dearest
suites on its own. Prints the rows per table, the emulation's and the reading's time, then per suite
and per rule the fastest wall time and the JVM's CPU seconds of that repetition (the first repetition
warms the JVM; with ``--repeat 1`` it is all there is), dearest first, as Markdown.

What it is for: a rule whose cost grows faster than its tables (an inequality join over a big table)
shows up here at a large scale long before it shows in a pass over small runs: on `large`,
``notifications.commit_upon_notification`` took 17 of the suites' 40 s (bench/results/rule_costs/).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from bench.jvm_per_test import jvm_cpu_seconds


def timed(spark, custom, sql: str, rules: tuple[str, ...], repeat: int) -> tuple[float, float]:
    """(fastest wall s, JVM CPU s of that repetition) of one `collect_violations` of ``sql``."""
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        cpu, wall = jvm_cpu_seconds(), time.perf_counter()
        custom.collect_violations(spark, sql, rules, batch_view="rc_run")
        best = min(best, (time.perf_counter() - wall, jvm_cpu_seconds() - cpu))
    return best


@contextmanager
def judge_views(spark, stores: list):
    """The stores' runs read back as every judge reads them (`regionchaos.judge.intake.many_runs`, one batch), registered as
    the rules' views (``rc_<table>``, ``rc_run``) under the judge's settings for that many rows; yields the
    frames (pandas) and the total rows. Also used by bench/rule_diff.py."""
    from regionchaos import tables as T
    from regionchaos.judge import engine as E
    from regionchaos.judge import intake as I
    from regionchaos.judge import stats as ST

    with T.spill_directory(spark) as spill:
        tables, frames, _ = I.many_runs(spark, stores, spill_dir=spill)
        total = ST.table_rows(frames)
        E.register_views(E.prepare_tables(tables, total))
        with E.tuned_session(spark, total):
            yield frames, total


def measure(scenario: str, seed: int, repeat: int, top: int) -> dict:
    from regionchaos import runner
    from regionchaos.judge import suites as S
    from regionchaos.scenario import load
    from regionchaos.spark import get_spark
    from regionchaos.storage import ObjectStore

    with runner.storage_for(None) as config:
        spark = get_spark()
        run_id = f"bench-rule-costs-{scenario}-s{seed}"
        store = ObjectStore.for_run(config, run_id)
        started = time.perf_counter()
        runner.start(store, load(scenario, seed=seed), run_id=run_id, mutant=None, replay="-")
        emulated = time.perf_counter() - started
        custom, suites = S.load_custom(), S.load_suites()
        started = time.perf_counter()
        with judge_views(spark, [store]) as (frames, _):
            out = {"scenario": scenario, "seed": seed, "rows": {name: len(f) for name, f in frames.items()},
                   "emulate_s": emulated, "load_s": time.perf_counter() - started, "suites": {}, "rules": {}}
            for suite in suites:
                out["suites"][suite.name] = timed(spark, custom, suite.combined_sql(), suite.rule_names, repeat)
                print(f"{suite.name}: {out['suites'][suite.name][0]:.2f} s", file=sys.stderr, flush=True)
            dearest = sorted(out["suites"], key=lambda name: -out["suites"][name][0])[:top]
            for suite in (s for s in suites if s.name in dearest):
                for rule, sql in suite.rule_parts().items():
                    out["rules"][f"{suite.name}.{rule}"] = timed(spark, custom, sql, (rule,), repeat)
    return out


def markdown(result: dict, repeat: int, top: int) -> str:
    lines = [f"`{result['scenario']}` seed {result['seed']}: {sum(result['rows'].values()):,} rows "
             f"({', '.join(f'{n} {c:,}' for n, c in sorted(result['rows'].items(), key=lambda kv: -kv[1]) if c)})",
             "", f"Emulating the run (`runner.start`, embedded S3) took {result['emulate_s']:.1f} s, reading its "
             f"tables back (`regionchaos.judge.intake.many_runs`) {result['load_s']:.1f} s.",
             "", f"Per suite, fastest of {repeat} (wall s, JVM CPU s of that repetition):", "",
             "| suite | wall s | JVM CPU s |", "|---|---|---|"]
    for name, (wall, cpu) in sorted(result["suites"].items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} |")
    lines.append(f"| all | {sum(w for w, _ in result['suites'].values()):.2f} | "
                 f"{sum(c for _, c in result['suites'].values()):.2f} |")
    lines += ["", f"Per rule of the {top} dearest suites, each alone:", "", "| rule | wall s | JVM CPU s |",
              "|---|---|---|"]
    for name, (wall, cpu) in sorted(result["rules"].items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from regionchaos.scenario import catalogue

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="large", help="a catalogue scenario (default: large)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2, help="repetitions per query; the fastest counts (default 2)")
    ap.add_argument("--top", type=int, default=4, help="suites whose rules are also timed alone (default 4)")
    ap.add_argument("--out-json", help="also write the measurements here")
    args = ap.parse_args(argv)
    if args.scenario not in catalogue("emulation"):
        ap.error(f"--scenario {args.scenario}: not an emulated catalogue scenario "
                 f"({', '.join(catalogue('emulation'))})")
    if args.repeat < 1 or args.top < 0:
        ap.error("--repeat must be at least 1 and --top at least 0")
    result = measure(args.scenario, args.seed, args.repeat, args.top)
    print(f"# Rule costs: `bench/rule_costs.py --scenario {args.scenario} --seed {args.seed} "
          f"--repeat {args.repeat} --top {args.top}`\n")
    print(markdown(result, args.repeat, args.top))
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
