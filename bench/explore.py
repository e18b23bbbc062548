"""Exploration: its cost at P = 3, N = 12 with every interleaving kind, what it proves, the mutants it catches, and
the findings' shortest schedules.

    .venv/bin/python -m bench.explore [--parts acceptance,catalogue] [--only NAME,...] [--out bench/results/explore]

Parts (each exploration is `regionchaos.explore`: the search, then its representatives judged by the GX suites, in
this process's Spark session), each written to ``<out>/<part>.json``:
- ``acceptance``: `forced-global-tier2` at parallelism 3 (its seed 3, bound 2, ratio 0.5), ack / decline / silent and
  every interleaving kind (region failover, TaskManager loss, JobManager failover, a crash before the metadata
  commit, between checkpoints and inside the pending one), up to 12 checkpoints, under the FLIP's tier 2, under
  keep-forcing and under the PR's semantics, each judged in its own GX pass (its search and pass wall seconds); and
  keep-forcing at parallelism 4.
- ``catalogue``: every public mutant (`regionchaos mutants`) on a small configuration where its broken line runs,
  beside the correct protocol on the same configuration, and every finding's scenario at a size the explorer
  accepts (or the reason it refuses it), all judged in ONE GX pass (`regionchaos.explore.explore_many`). A mutant
  is caught when the policy says so (`regionchaos.judge.policy`: a representative stands as a violation for the
  correct protocol's settings); a finding is found when a representative's judgement shows it.
Wall times in the record are this machine's, at the time (2 cores, shared).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from regionchaos.explore import Case, explore_many
from regionchaos.explore.cases import ACCEPTANCE, FINDING_CASES, MUTANT_CASES
from regionchaos.explore.scope import refuse
from regionchaos.findings import FINDINGS
from regionchaos.scenario import MUTANTS, ScenarioError, load


def condensed(summary: dict) -> dict:
    keep = ("scenario", "overrides", "mutant", "seed", "max_checkpoints", "states", "schedules", "transitions",
            "fixpoint", "actions", "representatives", "verdicts", "proof", "proof_statement", "unexplained",
            "unknown", "interleavings", "walls", "exit_code", "findings")
    out = {k: summary[k] for k in keep}
    out["drift"] = len(summary["conformance"]["drift"])
    out["outcome"] = {k: summary["outcome"][k] for k in ("kind", "caught", "sentence")}
    out["counterexamples"] = {inv: {k: cx[k] for k in ("checkpoints", "describe", "findings", "declared", "rules",
                                                         "replay")} for inv, cx in summary["counterexamples"].items()}
    return out


def accepted(case: Case) -> str | None:
    """Why the explorer refuses ``case`` (its ScenarioError), or None."""
    try:
        refuse(load(case.scenario, overrides=dict(case.overrides) or None), case.max_checkpoints)
    except ScenarioError as exc:
        return str(exc)
    return None


def acceptance(spark, only) -> dict:
    """Each case explored and judged on its own (its search and GX pass timed apart)."""
    out = {}
    for name, case in ACCEPTANCE.items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        summary = explore_many([case], spark=spark)[0]
        out[name] = {**condensed(summary), "wall_seconds": round(time.perf_counter() - started, 1)}
        print(f"{name}: {summary['states']} states, search {summary['walls']['search']} s, "
              f"GX pass {summary['walls']['judge']} s; {summary['proof_statement']}", file=sys.stderr, flush=True)
    return out


def catalogue(spark, only) -> dict:
    """Every mutant beside the correct protocol on its configuration, and every finding's scenario: ONE GX pass."""
    cases: dict[str, Case] = {}
    refused: dict[str, str] = {}
    for mutant in MUTANTS:
        case = MUTANT_CASES[mutant]
        if only and mutant not in only:
            continue
        why = accepted(case)
        if why:
            refused[f"mutant {mutant}"] = why
            continue
        cases[f"mutant {mutant}"] = Case(case.scenario, case.overrides, mutant, case.max_checkpoints)
        cases[f"correct {mutant}"] = case
    for finding in FINDINGS:
        case = FINDING_CASES.get(finding.id, "no configuration in regionchaos/explore/cases.py yet")
        if only and finding.id not in only:
            continue
        why = case if isinstance(case, str) else accepted(case)
        if why:
            refused[f"finding {finding.id}"] = why
        else:
            cases[f"finding {finding.id}"] = case
    started = time.perf_counter()
    summaries = dict(zip(cases, explore_many(list(cases.values()), spark=spark)))
    wall = round(time.perf_counter() - started, 1)
    out: dict = {"wall_seconds": wall, "mutants": {}, "findings": {}}
    for mutant in MUTANTS:
        if f"mutant {mutant}" in refused:
            out["mutants"][mutant] = {"caught": False, "refused": refused[f"mutant {mutant}"]}
        elif f"mutant {mutant}" in summaries:
            s, base = summaries[f"mutant {mutant}"], summaries[f"correct {mutant}"]
            out["mutants"][mutant] = {**condensed(s), "caught": bool(s["outcome"]["caught"]),
                                      "correct_protocol": condensed(base)["outcome"]}
    for finding in FINDINGS:
        key = f"finding {finding.id}"
        if key in refused:
            out["findings"][finding.id] = {"found": False, "outside": refused[key]}
        elif key in summaries:
            s = summaries[key]
            out["findings"][finding.id] = {**condensed(s), "found": finding.id in s["findings"],
                                           "shortest": s["findings"].get(finding.id)}
    for name, r in {**out["mutants"], **out["findings"]}.items():
        print(f"{name}: {'caught' if r.get('caught') else 'found' if r.get('found') else 'NO'} "
              f"{(r.get('shortest') or {}).get('checkpoints', '')} {r.get('refused') or r.get('outside') or ''}"[:200],
              file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="acceptance,catalogue")
    ap.add_argument("--only", default="", help="comma-separated case names (acceptance case, mutant or finding id)")
    ap.add_argument("--out", help="write each part's record to <out>/<part>.json")
    args = ap.parse_args(argv)
    from regionchaos.judge.engine import judging_session

    spark = judging_session()
    only = {x for x in args.only.split(",") if x}
    parts = {"acceptance": acceptance, "catalogue": catalogue}
    for part in args.parts.split(","):
        record = parts[part](spark, only)
        text = json.dumps(record, indent=1, sort_keys=True, default=str)
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            (Path(args.out) / f"{part}.json").write_text(text + "\n")
        else:
            print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
