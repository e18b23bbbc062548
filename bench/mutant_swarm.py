"""Seeds to detection: for each mutant, how many swarm seeds it takes to catch it through the
invariant it is known to break.

    .venv/bin/python -m bench.mutant_swarm [--budget 1000] [--step 200] [--mutants a,b] \
        [--json bench/results/mutant_swarm/mutant_swarm.json] > bench/results/mutant_swarm/README.md

Per mutant (its base scenario and overrides are its pinned case, `expectations/mutant_cases.yaml`,
whose suites are the invariants it is known to break), the swarm's fast path runs the mutant
and the correct protocol on the same seeds, each seed drawing its own fault mix
(`faults.swarm`), in steps of ``--step`` seeds up to ``--budget``. A seed **detects** the
mutant when the mutant's run fails one of the mutant's invariants and the correct protocol's
run of the same seed does not fail it (so a recorded finding, such as F1 under the FLIP's tier
2, is never counted as a detection). The table gives the first detecting seed, seeds to
detection, and how many of the judged seeds detect it. Exit 1 if a mutant survives the budget.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import yaml
from rich.console import Console

from regionchaos.runner import storage_for
from regionchaos.spark import get_spark
from regionchaos.swarm import fast_swarm

CASES_FILE = Path(__file__).resolve().parents[1] / "expectations" / "mutant_cases.yaml"


def mutant_cases() -> dict[str, tuple[str, int, dict, dict[str, list[str]]]]:
    """Mutant -> (scenario, seed, overrides, {invariant suite it must fail: its rules}), as pinned in
    `CASES_FILE` (the cases tests/test_mutants.py asserts); where a case names the scenario to swarm
    (``swarm``: its pinned case is a schedule, which draws no faults), that scenario as written."""
    cases = yaml.safe_load(CASES_FILE.read_text())
    return {name: ((c["swarm"], c["seed"], {}, c["fails"]) if "swarm" in c else
                   (c["scenario"], c["seed"], c.get("set", {}), c["fails"])) for name, c in cases.items()}


CASES = mutant_cases()


def detections(mutant_runs: list[dict], correct_runs: list[dict], invariants: set[str]) -> list[dict]:
    """Seeds where the mutant fails one of ``invariants`` that the correct protocol does not."""
    correct = {r["seed"]: set(r["failed"]) for r in correct_runs}
    out = []
    for r in mutant_runs:
        caught = (set(r["failed"]) & invariants) - correct.get(r["seed"], set())
        if r["verdict"] == "invalid" and caught:
            out.append({"seed": r["seed"], "through": sorted(caught), "replay": r["replay"]})
    return out


def hunt(mutant: str, budget: int, step: int, first_seed: int, storage, spark, console) -> dict:
    scenario, _, overrides, suites = CASES[mutant]
    invariants = set(suites)
    started = time.perf_counter()
    found: list[dict] = []
    judged = unknown = 0
    seed = first_seed
    while judged < budget and not found:
        count = min(step, budget - judged)
        swarms = {}
        for m in (mutant, None):
            swarms[m] = fast_swarm(scenario, count, first_seed=seed, mutant=m, overrides=overrides, storage=storage,
                                   spark=spark)
            unknown += swarms[m]["unknown"]
        found = detections(swarms[mutant]["runs"], swarms[None]["runs"], invariants)
        console.print(f"{mutant}: seeds {seed}..{seed + count - 1}: {len(found)} detecting "
                      f"({time.perf_counter() - started:.0f} s)")
        judged += count
        seed += count
    first = min((d["seed"] for d in found), default=None)
    return {"mutant": mutant, "scenario": scenario, "overrides": overrides, "invariants": sorted(invariants),
            "first_seed": first_seed, "judged": judged, "unknown": unknown,
            "first_detecting_seed": first, "seeds_to_detection": None if first is None else first - first_seed + 1,
            "detecting_in_last_step": len(found), "last_step_seeds": count,
            "example": found[0] if found else None, "wall_s": round(time.perf_counter() - started, 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--budget", type=int, default=1000, help="most seeds per mutant (default %(default)s)")
    p.add_argument("--step", type=int, default=200, help="seeds per swarm until detection (default %(default)s)")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--mutants", help="comma-separated (default: every pinned case)")
    p.add_argument("--json", help="write the rows to this JSON file")
    args = p.parse_args()
    names = args.mutants.split(",") if args.mutants else list(CASES)
    console = Console(stderr=True)
    rows = []
    started = time.perf_counter()
    with storage_for(None) as storage:
        spark = get_spark()
        for name in names:
            rows.append(hunt(name, args.budget, args.step, args.first_seed, storage, spark, console))
    wall = round(time.perf_counter() - started, 1)
    command = f".venv/bin/python -m bench.mutant_swarm {' '.join(sys.argv[1:])}".strip()
    if args.json:
        Path(args.json).write_text(json.dumps({"command": command, "wall_s": wall, "rows": rows}, indent=1) + "\n")
    print(f"Command: `{command}` ({wall:.0f} s)\n")
    print("| mutant | base scenario | invariants | seeds to detection | detecting / judged (last step) | "
          "first detecting seed: failed through | wall s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ex = r["example"]
        base = r["scenario"] + (" " + json.dumps(r["overrides"]) if r["overrides"] else "")
        took = r["seeds_to_detection"] or "SURVIVED {}".format(r["judged"])
        caught = "seed {}: {}".format(ex["seed"], ", ".join(ex["through"])) if ex else "-"
        print(f"| {r['mutant']} | {base} | {', '.join(r['invariants'])} | {took} "
              f"| {r['detecting_in_last_step']} / {r['last_step_seeds']} | {caught} | {r['wall_s']:.0f} |")
    return 1 if any(r["first_detecting_seed"] is None for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
