"""Why a seed's verdict moved between two seeds-matrix records: the old record's code and this code take the
same decisions once this code runs with the old defaults, or they part only after a split assignment was held.

    .venv/bin/python -m bench.matrix_changes --before /path/to/checkout-of-the-old-record --policy pr \
        [--old bench/results/seeds_matrix/pr.jsonl@93e5381] [--new bench/results/seeds_matrix/pr.jsonl]

In:  two per-seed records of `bench.seeds_matrix` for one policy (``--old`` may name a file at a commit,
     ``PATH@COMMIT``, read with ``git show``), and a checkout of the old record's code (``--before``: a git worktree;
     it runs on this project's virtualenv with its own sources first on PYTHONPATH).
Out: for every seed both records hold whose verdict or failed rules differ, the decisions (id, status, abort
     reason of each ``checkpoint_decided``) of the old code under the policy, and of this code under the policy plus
     the old defaults (`OLD_DEFAULTS`, where the scenario's YAML does not set the key), emulated in memory; each
     changed seed falls in one class:
     - ``same-decisions``: the same decisions: the move is the change of defaults to Flink's (which changes the schedule)
       and what the new model shows on the same decisions; the new rows are each tagged by a finding's mechanism
       in the new record when its matrix row is as expected;
     - ``after-hold``: the same decisions until the first ``split_held`` (the PR's gateway closed by a fallback
       notification, F16), then others: the held split is read later or never, so the job's length differs;
     - ``other``: neither, printed with the first differing decisions. Exit 1 if any.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from bench.seeds_matrix import policy_overrides

ROOT = Path(__file__).resolve().parent.parent
# the defaults before they became Flink's (tolerable-failed-checkpoints was unlimited when unset: its bound here)
OLD_DEFAULTS = {"execution.checkpointing.region.max-failure-ratio": 0.5,
                "execution.checkpointing.region.max-consecutive-failures": 3,
                "execution.checkpointing.tolerable-failed-checkpoints": 10000}
# run in either checkout: JSON lines of jobs in, JSON lines of decisions out (both codes have these names)
DECISIONS = """
import json, sys
from regionchaos.scenario import load
from tests import memrun
for line in sys.stdin:
    job = json.loads(line)
    key = [job["scenario"], job["seed"]]
    try:
        result, _ = memrun.emulate(load(job["scenario"], job["overrides"] or None, seed=job["seed"]))
    except Exception as exc:
        print(json.dumps({"key": key, "error": repr(exc)[:300]}), flush=True)
        continue
    events = result.events
    held = next((i for i, e in enumerate(events) if e["kind"] == "split_held"), None)
    print(json.dumps({"key": key, "decisions": [[e["checkpoint_id"], e["status"], e.get("reason")] for e in events
                                                if e["kind"] == "checkpoint_decided"],
                      "decided_before_hold": None if held is None else
                      sum(1 for e in events[:held] if e["kind"] == "checkpoint_decided")}), flush=True)
"""


def read_record(spec: str) -> dict[tuple[str, int], dict]:
    if "@" in spec:
        path, rev = spec.rsplit("@", 1)
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
    else:
        text = Path(spec).read_text()
    return {(r["scenario"], r["seed"]): r for r in map(json.loads, text.splitlines()) if r}


def moved(a: dict, b: dict) -> bool:
    return a["verdict"] != b["verdict"] or set(a.get("failed_rules", a["failed"])) != set(b.get("failed_rules", b["failed"]))


def decisions(tree: Path, jobs: list[dict]) -> dict[tuple[str, int], dict]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", DECISIONS], cwd=tree, env=env, capture_output=True, text=True,
                         input="\n".join(map(json.dumps, jobs)), check=True)
    return {tuple(r["key"]): r for r in map(json.loads, out.stdout.splitlines())}


def classify(policy: str, old: dict, new: dict, before: Path) -> dict[str, list]:
    changed = [k for k in sorted(set(old) & set(new)) if moved(old[k], new[k])]
    pinned = {name: set((yaml.safe_load((ROOT / "regionchaos" / "catalogue" / f"{name}.yaml").read_text())
                         .get("flink") or {})) for name, _ in changed}
    jobs_old = [{"scenario": s, "seed": n, "overrides": policy_overrides(policy, s)} for s, n in changed]
    jobs_new = [{"scenario": s, "seed": n, "overrides": {**{k: v for k, v in OLD_DEFAULTS.items() if k not in pinned[s]},
                                                         **policy_overrides(policy, s)}} for s, n in changed]
    o, n = decisions(before, jobs_old), decisions(ROOT, jobs_new)
    out: dict[str, list] = {"same-decisions": [], "after-hold": [], "other": []}
    for k in changed:
        od, nd = o[k].get("decisions"), n[k].get("decisions")
        if od is not None and od == nd:
            out["same-decisions"].append(k)
            continue
        first = next((i for i, (x, y) in enumerate(zip(od or [], nd or [])) if x != y), min(len(od or []), len(nd or [])))
        hold = n[k].get("decided_before_hold")
        if od is not None and nd is not None and hold is not None and first >= hold:
            out["after-hold"].append(k)
        else:
            out["other"].append((k, o[k].get("error") or (od or [])[first:first + 3],
                                 n[k].get("error") or (nd or [])[first:first + 3]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the old record's code")
    ap.add_argument("--policy", choices=("flip", "keep-forcing", "pr"), required=True)
    ap.add_argument("--old", help="the old record (PATH or PATH@COMMIT; default: the policy's file at 93e5381)")
    ap.add_argument("--new", help="the new record (default: bench/results/seeds_matrix/<policy>.jsonl)")
    args = ap.parse_args(argv)
    if not (args.before / "regionchaos").is_dir():
        ap.error(f"--before {args.before}: not a checkout of this project (no regionchaos/ in it)")
    old = read_record(args.old or f"bench/results/seeds_matrix/{args.policy}.jsonl@93e5381")
    new = read_record(args.new or str(ROOT / "bench" / "results" / "seeds_matrix" / f"{args.policy}.jsonl"))
    out = classify(args.policy, old, new, args.before)
    total = sum(map(len, out.values()))
    print(f"{args.policy}: {len(set(old) & set(new))} seeds in both records, {total} moved: "
          f"{len(out['same-decisions'])} take the old decisions under the old defaults, {len(out['after-hold'])} the same "
          f"decisions until a split assignment is held, {len(out['other'])} neither")
    groups: dict[tuple[str, str], list[int]] = {}
    for kind in ("same-decisions", "after-hold"):
        for name, seed in out[kind]:
            groups.setdefault((name, kind), []).append(seed)
    for (name, kind), seeds in sorted(groups.items()):
        print(f"  {name}: {len(seeds)} ({kind}; seeds {', '.join(map(str, seeds))})")
    for k, od, nd in out["other"]:
        print(f"  OTHER {k}: old {od} new {nd}")
    return 1 if out["other"] else 0


if __name__ == "__main__":
    sys.exit(main())
