"""Every catalogue scenario through the CLI, as a user runs it: `regionchaos run --scenario NAME --json`.

In:  the emulated catalogue (`regionchaos scenarios`; a real-Flink one, backend flink, only when named in
     --scenarios), each at its own seed (or `--seed`), the embedded S3.
Out: one row per scenario: the scenario's expectation (verdict, invariant, and the invariants
     its declared findings may fail under its settings), the exit code, the verdict and failed
     invariants the run printed, wall seconds; `--out-md` / `--out-json` write them
     (committed: bench/results/catalogue_verdicts/README.md and
     catalogue_verdicts.json there). Exit 1 if any run is not as expected, 0 otherwise.

"As expected" is the run's standing against its scenario (`regionchaos.judge.judgement`), the same judgement as
bench/seeds_matrix.py: the run fails only invariants that a finding declares for its settings
(F1 under the FLIP's tier 2, the default, lets `flip_bounds` fail), a scenario marked
`expect: invalid` fails its stated invariant on its own seed, and `unknown` is never as expected.
`--summarize FILE.json` re-judges saved rows without running anything.

Each run is its own process (its own Spark session and embedded S3 server), exactly the
command a user types; the replay line of each is in its JSON summary.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from rich.progress import Progress

from regionchaos.findings import allowed_failures
from regionchaos.judge.judgement import FINDING, VALID, Judgement, judgement_of_record
from regionchaos.run import ExitCode
from regionchaos.scenario import catalogue, load

ROOT = Path(__file__).resolve().parent.parent


def run_one(name: str, seed: int | None, local_dir: Path) -> dict:
    cmd = [sys.executable, "-m", "regionchaos.cli", "run", "--scenario", name, "--json", "--local-dir", str(local_dir)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    summary = {}
    try:
        summary = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pass
    checks = summary.get("checks", [])
    row = {"scenario": name, "seed": seed, "exit": proc.returncode,
           "verdict": summary.get("verdict") or _exit_word(proc.returncode),
           "failed_invariants": sorted(c["name"] for c in checks if c.get("success") is False),
           "unknown_invariants": sorted(c["name"] for c in checks if c.get("success") is None),
           "failed_rules": sorted(Judgement.from_summary(summary).failed_rules),
           "explained": Judgement.from_summary(summary).explained,
           "wall_s": round(wall, 1), "command": " ".join(["regionchaos", *cmd[3:]]),
           "stderr_tail": proc.stderr.strip().splitlines()[-3:] if proc.returncode not in (0, 1) else []}
    return judge(row)


def _exit_word(code: int) -> str:
    """What a run that printed no summary ended as, by its exit code (`regionchaos.run.ExitCode`)."""
    if code not in set(ExitCode):
        return f"exit {code}"
    return ExitCode(code).name.lower().replace("_", " ")  # valid, invalid, bad input, unknown


def judge(row: dict) -> dict:
    """Fill the row's expectation and `ok` from the scenario as it is now (so a saved row can be
    re-judged against the current findings registry)."""
    scenario = load(row["scenario"], seed=row.get("seed"))
    judged = judgement_of_record({**row, "failed": row["failed_invariants"], "unknown": row.get("unknown_invariants", [])},
                                 scenario=scenario)
    ok, why = judged.standing in (VALID, FINDING), judged.why
    if row["verdict"] not in ("valid", "invalid"):
        ok, why = False, why or f"verdict {row['verdict']}"
    return {**row, "seed": scenario.seed, "expect": scenario.expect.verdict,
            "expect_invariant": scenario.expect.invariant,
            "may_fail": sorted(allowed_failures(scenario)), "ok": ok, "why": why}


def to_markdown(rows: list[dict]) -> str:
    lines = ["| scenario | seed | expected | may fail (findings) | exit | verdict | failed invariants | as expected | wall s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        exp = r["expect"] + (f" ({r['expect_invariant']})" if r["expect_invariant"] else "")
        ok = "yes" if r["ok"] else f"NO: {r['why']}"
        lines.append(f"| {r['scenario']} | {r['seed']} | {exp} | {', '.join(r['may_fail']) or '-'} | {r['exit']} | "
                     f"{r['verdict']} | {', '.join(r['failed_invariants']) or '-'} | {ok} | {r['wall_s']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", nargs="*", help="catalogue names (default: all)")
    ap.add_argument("--seed", type=int, help="seed for every scenario (default: each scenario's own)")
    ap.add_argument("--local-dir", default=".runs", help="where the runs mirror their summaries (default .runs)")
    ap.add_argument("--out-json", type=Path, help="write the rows as JSON")
    ap.add_argument("--out-md", type=Path, help="write the rows as a Markdown table")
    ap.add_argument("--summarize", type=Path, metavar="FILE.json",
                    help="re-judge the rows saved by --out-json (nothing is run)")
    args = ap.parse_args(argv)
    if args.summarize:
        rows = [judge(r) for r in json.loads(args.summarize.read_text())]
        return _emit(rows, args)
    # the emulated catalogue by default; a real-Flink scenario (backend flink, minutes and a cluster each) only
    # when named
    names = args.scenarios or sorted(catalogue("emulation"))
    unknown = sorted(set(names) - set(catalogue()))
    if unknown:
        ap.error(f"--scenarios: not in the catalogue: {', '.join(unknown)}")
    rows = []
    with Progress() as progress:
        task = progress.add_task("catalogue", total=len(names))
        for name in names:
            progress.update(task, description=name)
            rows.append(run_one(name, args.seed, Path(args.local_dir)))
            progress.advance(task)
    return _emit(rows, args)


def _emit(rows: list[dict], args: argparse.Namespace) -> int:
    print(to_markdown(rows))
    if args.out_json:
        args.out_json.write_text(json.dumps(rows, indent=2) + "\n")
    if args.out_md:
        args.out_md.write_text(to_markdown(rows))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
