"""A rule rewritten for speed must judge as before: its old and new SQL, the same rows on many runs.

    .venv/bin/python -m bench.rule_diff SUITE.RULE [--against REV] [--seeds 3] [--large]

The old SQL is the rule's file at git revision ``REV`` (default HEAD, so: the uncommitted rewrite
against the committed rule), the new one the file in the working tree. The corpus, emulated into the
embedded S3 server and read back as every judge reads it (`regionchaos.judge.intake.many_runs`, one batch): every
emulated catalogue scenario but ``large`` at seeds 1..SEEDS (the findings' own scenarios among them), and
each of them with every mutant at seed 1 (a run that cannot start is skipped and counted).
``--large``: instead, ``large`` seed 1 alone (where a rule's cost shows; few violations).
Both queries run under the judge's settings for that many rows (`regionchaos.judge.engine.prepare_tables`,
`regionchaos.judge.engine.tuned_session`); every output row, every column (``detail`` included), is compared as a
multiset. Prints the runs, how many have violating rows, each side's rows and fastest time of two;
exit 0 when identical, 1 when not (with rows only one side gives) or when a side's SQL raises, 2 on
bad input.

Why: a rule's rewrite changes no test's expectation when it is right, and a rule that stops
reporting is caught by its tamper test only for the one edit that test makes. The
rewrite of ``notifications.commit_upon_notification`` was checked this way (308 runs, 13 with
violations; ``large``): bench/results/rule_diff/README.md.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def old_sql(rule_path: Path, rev: str) -> str | None:
    """The rule's file at ``rev`` (git show), or None when that revision has no such file."""
    rel = rule_path.relative_to(ROOT).as_posix()
    done = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def corpus(seeds: int, large: bool) -> list[tuple[str, int, str | None]]:
    """(scenario, seed, mutant) of every run to compare on (see the module docstring)."""
    from regionchaos.scenario import MUTANTS, catalogue

    if large:
        return [("large", 1, None)]
    names = [n for n in catalogue("emulation") if n != "large"]
    return ([(n, s, None) for n in names for s in range(1, seeds + 1)]
            + [(n, 1, m) for n in names for m in MUTANTS])


def rows(spark, sql: str) -> tuple[collections.Counter, float]:
    """The rule's output rows as a multiset of string tuples, and the fastest of two runs."""
    from regionchaos.judge.suites import strip_comments  # as the judge reads a rule's file

    body = strip_comments(sql)
    best, out = float("inf"), collections.Counter()
    for _ in range(2):
        started = time.perf_counter()
        out = collections.Counter(tuple("" if v is None else str(v) for v in r)
                                  for r in spark.sql(body.replace("{batch}", "rc_run")).collect())
        best = min(best, time.perf_counter() - started)
    return out, best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rule", help="SUITE.RULE, e.g. notifications.commit_upon_notification")
    ap.add_argument("--against", default="HEAD", help="git revision of the old SQL (default HEAD)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per catalogue scenario (default 3)")
    ap.add_argument("--large", action="store_true", help="large seed 1 alone instead of the corpus")
    args = ap.parse_args(argv)
    suite, _, rule = args.rule.partition(".")
    path = ROOT / "expectations" / "sql" / suite / f"{rule}.sql"
    if not rule or not path.is_file():
        ap.error(f"rule {args.rule}: no expectations/sql/<suite>/<rule>.sql of that name")
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    before, after = old_sql(path, args.against), path.read_text()
    if before is None:
        ap.error(f"--against {args.against}: no {path.relative_to(ROOT).as_posix()} at that revision")

    from bench.rule_costs import judge_views

    from regionchaos import runner
    from regionchaos.scenario import load
    from regionchaos.spark import get_spark
    from regionchaos.storage import ObjectStore

    with runner.storage_for(None) as config:
        spark = get_spark()
        stores, skipped = [], 0
        for i, (name, seed, mutant) in enumerate(corpus(args.seeds, args.large)):
            store = ObjectStore.for_run(config, f"rule-diff-{i}")
            try:
                runner.start(store, load(name, seed=seed), run_id=f"rule-diff-{i}", mutant=mutant, replay="-")
            except Exception:  # noqa: BLE001 - a mutant that cannot run this scenario: not part of the corpus
                skipped += 1
                continue
            stores.append(store)
        with judge_views(spark, stores) as (_, total):
            measured = {}
            for side, sql in (("old", before), ("new", after)):
                try:
                    measured[side] = rows(spark, sql)
                except Exception as exc:  # noqa: BLE001 - a rule that does not run is a difference
                    first = (str(exc).splitlines() or [""])[0][:500]
                    print(f"{args.rule}: the {side} SQL raised {type(exc).__name__}: {first}")
                    return 1
    (old, t_old), (new, t_new) = measured["old"], measured["new"]
    print(f"{args.rule}: {len(stores)} runs ({skipped} skipped), {total:,} rows; runs with violating rows: "
          f"{len({r[0] for r in old})} old, {len({r[0] for r in new})} new")
    print(f"old ({args.against}): {sum(old.values())} rows, {t_old:.2f} s; new (working tree): "
          f"{sum(new.values())} rows, {t_new:.2f} s")
    if old == new:
        print("identical")
        return 0
    for label, side in (("only old", old - new), ("only new", new - old)):
        for row in list(side.elements())[:10]:
            print(f"{label}: {row}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
