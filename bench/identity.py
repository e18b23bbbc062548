"""Fingerprints of what runs leave behind, to check that a refactoring changed nothing.

    .venv/bin/python -m bench.identity OUT.json            # after the change, at the same commit:
    .venv/bin/python -m bench.identity OUT2.json && cmp OUT.json OUT2.json

For every catalogue scenario but ``large``, seeds 1-3, mutants none / failed-region-commits /
cleaner-ignores-refs, each with and without the swarm's fault mix (396 runs, about 15 s), the run is
emulated in memory (`regionchaos.runner.emulate_in_memory`: the deep run's data plane on an
in-memory store). One SHA-256 per run covers every object on the store (keys and bytes), every
table row the suites read, and the run's counters without wall times. Exit 0; a run that raises is
recorded as ``raised <type>``.

Compare fingerprints taken at the SAME commit: ``scenario.json`` records the git commit, so any
new commit changes every fingerprint. To compare against HEAD while the change is uncommitted, take
the reference from a worktree (``git worktree add /tmp/ref HEAD``; run there with
``PYTHONPATH=/tmp/ref``). This is how the history, workload and failover rooms were moved
(2026-11-24): 306 of 306 identical. A scenario that pins its fault schedule cannot take the swarm's
fault mix: that combination is recorded as not loadable, not run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from regionchaos import runner  # noqa: E402
from regionchaos.swarm import SWARM_OVERRIDES
from regionchaos.runner import emulate_in_memory  # noqa: E402
from regionchaos.scenario import MUTANTS as MUTANT_NAMES  # noqa: E402
from regionchaos.scenario import ScenarioError, catalogue, load  # noqa: E402
from regionchaos.storage.memory import MemoryStore  # noqa: E402

MUTANTS = (None, "failed-region-commits", "cleaner-ignores-refs")


def fingerprint(store, rows: dict, stats: dict) -> str:
    h = hashlib.sha256()
    for key in store.list_keys(""):
        h.update(key.encode())
        h.update(store.get(key))
    for table in sorted(rows):
        h.update(table.encode())
        h.update(repr(rows[table]).encode())
    counters = {k: v for k, v in stats.items() if "wall" not in k and k != "s3"}
    h.update(json.dumps(counters, sort_keys=True, default=str).encode())
    return h.hexdigest()


def not_loadable(exc: ScenarioError) -> str:
    return f"not loadable: {str(exc).splitlines()[-1].strip()}"


def fingerprints(fingerprint, *, seeds: int, mutants, not_loadable=not_loadable) -> dict[str, str]:
    """``fingerprint(store, rows, stats)`` of every run of the matrix (the module docstring), by
    ``scenario/seed/mutant/with-swarm-mix``; a scenario that cannot be loaded is ``not_loadable(exc)``,
    a run that raises is ``raised <type>``."""
    out = {}
    for name in sorted(n for n in catalogue("emulation") if n != "large"):  # real-Flink runs are not byte-identical
        for seed in range(1, seeds + 1):
            for mutant in mutants:
                for overrides in ({}, dict(SWARM_OVERRIDES)):
                    label = f"{name}/{seed}/{mutant}/{bool(overrides)}"
                    try:
                        scenario = load(name, overrides=overrides, seed=seed)
                    except ScenarioError as exc:  # a pinned schedule takes no swarm mix: not a run
                        out[label] = not_loadable(exc)
                        continue
                    store = MemoryStore.for_run(None, runner.default_run_id(scenario, mutant))
                    try:
                        result, rows = emulate_in_memory(scenario, mutant, store=store)
                    except Exception as exc:  # noqa: BLE001 - recorded, compared like any fingerprint
                        out[label] = f"raised {type(exc).__name__}"
                        continue
                    out[label] = fingerprint(store, rows, result.stats)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="JSON file: run -> fingerprint")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N per scenario (default %(default)s)")
    ap.add_argument("--all-mutants", action="store_true",
                    help="every mutant of regionchaos.scenario.MUTANTS, not only the three above (1,224 runs)")
    args = ap.parse_args()
    mutants = (None, *sorted(MUTANT_NAMES)) if args.all_mutants else MUTANTS
    out = fingerprints(fingerprint, seeds=args.seeds, mutants=mutants)
    args.out.write_text(json.dumps(out, indent=0, sort_keys=True))
    print(f"{len(out)} runs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
