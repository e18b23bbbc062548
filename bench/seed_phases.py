"""Where one swarm seed's time goes inside its Spark task, by phase, and the same against other code.

    .venv/bin/python -m bench.seed_phases [--seeds 300] [--scenario smoke] [--repeat 2] \
        [--against DIR] [--out-json PATH]

Each seed goes through what `regionchaos.swarm.emulate_seed_tables` does in a task, timed phase by
phase in one process (no Spark, no S3: the in-memory store the swarm's seeds use):
- ``scenario``: the scenario with the seed and the swarm's fault mix (`from_dict`), its run id and store;
- ``emulate``: `runner.start` (the emulation, its artifacts PUT on the in-memory store);
- ``read``: `tables.read_run` (the raw artifacts read back and decoded);
- ``rows``: `tables.build_rows` (the suites' table rows);
- ``arrow``: `swarm.seed_tables` (the rows as Arrow tables of the tables' schemas).
One seed (not counted) is run first: imports and first-call caches. Printed: milliseconds per seed
per phase, the median over ``--repeat`` processes.

``--against DIR``: DIR is another checkout of this repository (``git worktree add /tmp/ref COMMIT``);
the processes alternate between this checkout's code and DIR's (one process each per repetition,
this venv's libraries for both), so both see the same machine minute by minute: on the shared 2-core
machines here its speed drifts by a quarter within the hour, and only side-by-side rows compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PHASES = ("scenario", "emulate", "read", "rows", "arrow")


def measure(scenario_ref: str, seeds: int) -> dict:
    """ms per seed by phase over ``seeds`` seeds from 1, in this process (see the module docstring)."""
    import yaml

    from regionchaos import runner, swarm
    from regionchaos import tables as tables_mod
    from regionchaos.scenario import catalogue, from_dict
    from regionchaos.storage.memory import MemoryStore
    from regionchaos.storage.s3 import StorageConfig

    with open(catalogue().get(scenario_ref) or scenario_ref) as fh:
        data = yaml.safe_load(fh)
    config = StorageConfig(endpoint_url="http://127.0.0.1:1")  # never contacted: in-memory stores
    overrides = dict(swarm.SWARM_OVERRIDES)
    ctx = swarm.SwarmContext(scenario_ref, data, overrides, None, config, "swarms/seed-phases")
    warm, _, _ = swarm.emulate_seed_tables(ctx, seeds + 1)
    if "error" in warm:
        raise SystemExit(f"seed {seeds + 1}: {warm['error']}")
    spent = dict.fromkeys(PHASES, 0.0)
    for seed in range(1, seeds + 1):
        t0 = time.perf_counter()
        scenario = from_dict(data, {**overrides, "seed": seed})
        run_id = runner.default_run_id(scenario, None)
        store = MemoryStore.for_run(config, run_id)
        t1 = time.perf_counter()
        runner.start(store, scenario, run_id=run_id, mutant=None, replay="-", threads=1)
        t2 = time.perf_counter()
        artifacts = tables_mod.read_run(store, run_id)
        t3 = time.perf_counter()
        rows = tables_mod.build_rows(artifacts)
        t4 = time.perf_counter()
        swarm.seed_tables(rows)
        t5 = time.perf_counter()
        for phase, (a, b) in zip(PHASES, ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5))):
            spent[phase] += b - a
    out = {phase: round(s / seeds * 1000, 2) for phase, s in spent.items()}
    out["total"] = round(sum(spent.values()) / seeds * 1000, 2)
    return out


def too_big(ap: argparse.ArgumentParser, scenario_ref: str) -> None:
    """Refuse a big run (`runner.BULK_SUBTASK_CHECKPOINTS` planned subtask-checkpoints or more): every seed
    here lives whole in memory, with its warm-up seed's (``large`` took a process to 24 GB and the kernel
    killed it)."""
    from regionchaos import runner
    from regionchaos.scenario import ScenarioError, load

    try:
        scenario = load(scenario_ref)
    except ScenarioError as exc:
        ap.error(f"--scenario {scenario_ref}: {exc}")
    planned = scenario.checkpoints * scenario.topology.parallelism
    if planned >= runner.BULK_SUBTASK_CHECKPOINTS:
        ap.error(f"--scenario {scenario_ref}: a big run ({planned:,} planned subtask-checkpoints, from "
                 f"{runner.BULK_SUBTASK_CHECKPOINTS:,}); this tool keeps whole seeds in memory and is for "
                 "smoke-sized ones: time a big run with bench/run.py (its phases) or bench/rule_costs.py (its judge)")


def one_process(code: str, scenario_ref: str, seeds: int) -> dict:
    """One inner process over ``code``'s package: ``PYTHONPATH`` puts the checkout ahead of the editable install
    (whose finder Python asks last), so every ``regionchaos`` module comes from there."""
    cmd = [sys.executable, __file__, "--inner", "--scenario", scenario_ref, "--seeds", str(seeds)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=code,
                          env={**os.environ, "PYTHONPATH": code,
                               "PYTHONDONTWRITEBYTECODE": "1"})  # no __pycache__ in the other checkout
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def git_commit(directory: str) -> str:
    done = subprocess.run(["git", "-C", directory, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def labels(codes: list[str]) -> dict[str, str]:
    """Each checkout's name in the output: its commit, and its directory too when two share a commit
    (an uncommitted change against a worktree of HEAD)."""
    commits = {code: git_commit(code) for code in codes}
    shared = {c for c in commits.values() if list(commits.values()).count(c) > 1}
    return {code: f"{c} ({code})" if c in shared else c for code, c in commits.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--scenario", default="smoke")
    ap.add_argument("--repeat", type=int, default=2, help="processes per code (median)")
    ap.add_argument("--against", metavar="DIR", help="another checkout, measured alternately")
    ap.add_argument("--out-json", help="also write the processes' results here")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.seeds < 1 or args.repeat < 1:
        ap.error("--seeds and --repeat must be at least 1")
    from regionchaos.scenario import catalogue

    if args.scenario not in catalogue() and not Path(args.scenario).is_file():
        ap.error(f"--scenario {args.scenario}: neither a catalogue scenario nor a file")
    too_big(ap, args.scenario)
    if args.inner:
        print(json.dumps(measure(args.scenario, args.seeds)))
        return
    codes = [str(HERE)] + ([str(Path(args.against).resolve())] if args.against else [])
    for code in codes[1:]:
        if not (Path(code) / "regionchaos" / "swarm.py").is_file():
            ap.error(f"--against {code}: not a checkout of this repository (no regionchaos/swarm.py)")
    names = labels(codes)
    runs: dict[str, list[dict]] = {code: [] for code in codes}
    for _ in range(args.repeat):
        for code in codes:
            runs[code].append(one_process(code, args.scenario, args.seeds))
            print(f"{names[code]}: {runs[code][-1]}", file=sys.stderr, flush=True)
    print(f"{args.seeds} {args.scenario} seeds, ms per seed, median of {args.repeat} processes (alternating)\n")
    columns = ("code", *PHASES, "total")
    print("| " + " | ".join(columns) + " |\n" + "|---" * len(columns) + "|")
    for code, results in runs.items():
        medians = [statistics.median(r[p] for r in results) for p in (*PHASES, "total")]
        print(f"| {names[code]} | " + " | ".join(f"{m:.2f}" for m in medians) + " |")
    if args.out_json:
        Path(args.out_json).write_text(json.dumps({names[c]: r for c, r in runs.items()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
