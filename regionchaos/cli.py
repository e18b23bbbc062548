"""The ``regionchaos`` command.

  regionchaos run --scenario NAME|PATH [--seed N] [--set KEY=VALUE ...] [--mutant NAME] [--json]
  regionchaos swarm --seeds N [--scenario NAME] [--mutant NAME] [--json]
  regionchaos replay SWARM_ID --seed N [--json]
  regionchaos pin --scenario NAME|PATH [--seed N] [--set KEY=VALUE ...] [--mutant NAME] [--out FILE]
  regionchaos shrink --scenario NAME|PATH [--seed N] [--set ...] [--mutant NAME] [--invariant INV] [--max-rounds N]
                     [--out FILE]
  regionchaos study [--policies ...] [--probabilities ...] [--parallelism ...] [--seeds N] [--checkpoints N]
  regionchaos scenarios
  regionchaos mutants

Exit codes: 0 valid, 1 invariant violated, 2 bad input, 3 infrastructure
error or unknown verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from rich.console import Console
from rich.markup import escape

from . import runner
from .scenario import MUTANTS, ScenarioError, catalogue, check_mutant, load, parse_value

EPILOG = "exit codes: 0 valid, 1 invariant violated, 2 bad input, 3 infrastructure error / unknown"


def _overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ScenarioError([("--set", f"expected KEY=VALUE, got {pair!r}")])
        out[key.strip()] = parse_value(value)
    return out


def _csv(kind):
    """An argparse type: a comma-separated list of ``kind``."""
    def parse(text: str) -> tuple:
        try:
            return tuple(kind(x.strip()) for x in text.split(",") if x.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__} values, got {text!r}") from None

    parse.__name__ = f"list of {kind.__name__}"
    return parse


def _storage_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--s3-endpoint", default=os.environ.get("REGIONCHAOS_S3_ENDPOINT"),
                   help="S3 endpoint URL (MinIO, AWS, ...); default: an embedded S3 server on 127.0.0.1. "
                        "Credentials come from the standard AWS environment variables or profile. "
                        "[env REGIONCHAOS_S3_ENDPOINT]")
    p.add_argument("--bucket", default=os.environ.get("REGIONCHAOS_BUCKET", "regionchaos"),
                   help="bucket holding runs/RUN_ID/ (must exist unless embedded) [env REGIONCHAOS_BUCKET]")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.add_argument("--local-dir", default=".runs",
                   help="where to mirror summary, report and Data Docs locally (default: .runs)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="regionchaos", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="emulate, validate and report one scenario", epilog=EPILOG)
    p.add_argument("--scenario", required=True, help="catalogue name (see `regionchaos scenarios`) or a YAML path")
    p.add_argument("--seed", type=int, help="seed (default: the scenario's); the same seed replays the run exactly")
    p.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE", default=[],
                   help="override a field: a Flink key (execution.checkpointing.region.enabled=false) "
                        "or a section path (faults.decline=0.1, topology.parallelism=8); repeatable")
    p.add_argument("--mutant", help="run a deliberately broken protocol variant (see `regionchaos mutants`)")
    p.add_argument("--run-id", help="run id (default: derived from scenario, seed, mutant and settings)")
    _storage_args(p)

    p = sub.add_parser("swarm", help="many seeds with randomised fault mixes", epilog=EPILOG)
    p.add_argument("--seeds", type=int, required=True,
                   help="number of seeds; each is emulated in memory inside a Spark task, and one pass of the "
                        "GX suites judges them all (tables under swarms/SWARM_ID/ on the store)")
    p.add_argument("--first-seed", type=int, default=1, help="first seed (default 1)")
    p.add_argument("--scenario", default="smoke", help="base scenario (default smoke)")
    p.add_argument("--mutant", help="mutant to run under every seed")
    p.add_argument("--partitions", type=int, help="Spark tasks the seeds are cut into "
                   "(default: max(2 x cores, seeds / 100))")
    _storage_args(p)

    p = sub.add_parser("replay", help="re-run one swarm seed as a deep run and compare with the swarm",
                       epilog=EPILOG + "; a deep run that disagrees with the swarm (verdict, failed invariants "
                                       "or rules, or stats) exits 3")
    p.add_argument("swarm_id", metavar="SWARM_ID", help="the swarm's id (printed by `regionchaos swarm`; its "
                   "summary is read from --s3-endpoint, or from LOCAL_DIR/swarms/SWARM_ID/ without one)")
    p.add_argument("--seed", type=int, required=True, help="the swarm seed to replay")
    _storage_args(p)

    p = sub.add_parser("pin", help="write a scenario file with a seed's drawn faults pinned as an explicit "
                                   "schedule (to edit or shrink a reproducer)", epilog=EPILOG)
    p.add_argument("--scenario", required=True, help="catalogue name or a YAML path")
    p.add_argument("--seed", type=int, help="seed (default: the scenario's)")
    p.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE", default=[],
                   help="override a field, as for `run` (e.g. faults.swarm=true); repeatable")
    p.add_argument("--mutant", help="emulate this mutant while recording (the faults do not depend on it "
                   "until the runs diverge)")
    p.add_argument("--out", help="file to write (default: NAME-sSEED-pinned.yaml in the current directory)")

    p = sub.add_parser("shrink", help="the smallest explicit schedule (fewer faults, checkpoints, subtasks) that "
                                      "still fails the same invariant; writes it as a scenario file",
                       epilog="exit codes: 0 shrunk (the file fails the invariant), 2 bad input or the run does not "
                              "fail, 3 infrastructure error")
    p.add_argument("--scenario", required=True, help="catalogue name or a YAML path")
    p.add_argument("--seed", type=int, help="the failing seed (default: the scenario's)")
    p.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE", default=[],
                   help="override a field, as for `run` (e.g. faults.swarm=true for a swarm seed); repeatable")
    p.add_argument("--mutant", help="the mutant the run fails under")
    p.add_argument("--invariant", help="the invariant to keep failing (default: the first the run fails)")
    p.add_argument("--max-rounds", type=int, default=30, help="stop after this many rounds even if a smaller schedule "
                   "might still fail (each round is one judging pass; default 30)")
    p.add_argument("--out", help="file to write (default: NAME-sSEED-shrunk.yaml in the current directory)")

    p = sub.add_parser("study", help="global vs regional checkpoints: the same seeds under each policy, swept over "
                       "failure probability and parallelism; one HTML page of plots and a table",
                       epilog="exit codes: 0 every run measured, 2 bad input, 3 a run raised or storage failed")
    p.add_argument("--policies", type=_csv(str), help="comma-separated, from: global, regional (FLIP tier 2), "
                   "keep-forcing, pr (default: all four)")
    p.add_argument("--probabilities", type=_csv(float),
                   help="per-task checkpoint failure probabilities (default 0.0001,0.001,0.01,0.05)")
    p.add_argument("--parallelism", type=_csv(int), help="subtasks per vertex (default 16,64,256,1024; up to 8192, "
                   "each 4096 run takes about a minute)")
    p.add_argument("--seeds", type=int, help="seeds per cell, the same under every policy (default 2)")
    p.add_argument("--first-seed", type=int, help="first seed (default 1)")
    p.add_argument("--checkpoints", type=int, help="checkpoints per run (default 20)")
    p.add_argument("--crash", type=float, help="per region and checkpoint: probability of a region failover "
                   "(default 0.002)")
    _storage_args(p)

    sub.add_parser("scenarios", help="list the scenario catalogue")
    sub.add_parser("mutants", help="list the mutants")
    return parser


def _storage(args):
    from .storage.s3 import StorageConfig

    return StorageConfig(endpoint_url=args.s3_endpoint or None, bucket=args.bucket)


def cmd_run(args, console: Console) -> int:
    overrides = _overrides(args.overrides)
    mutant = check_mutant(args.mutant)
    scenario = load(args.scenario, overrides=overrides, seed=args.seed)
    extra = ["--s3-endpoint", args.s3_endpoint] if args.s3_endpoint else []
    replay = runner.replay_line(args.scenario, scenario.seed, overrides, mutant, extra)
    summary = runner.run(scenario, mutant=mutant, storage=_storage(args), run_id=args.run_id, console=console,
                         replay=replay, overrides=overrides, local_dir=args.local_dir)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True, default=str))
    else:
        print_summary(summary, console)
    return runner.exit_code(summary)


def print_summary(summary: dict, console: Console) -> None:
    colour = {"valid": "green", "invalid": "red"}.get(summary["verdict"], "yellow")
    console.print(f"verdict: [bold {colour}]{summary['verdict']}[/bold {colour}]  ({summary['run_id']})")
    for check in summary.get("checks", []):
        mark = {True: "[green]ok[/green]", False: "[red]FAILED[/red]"}.get(check.get("success"), "[yellow]unknown[/yellow]")
        console.print(f"  {mark:<24} {check['name']}  unexpected={check.get('unexpected_count')}")
    if summary.get("error"):
        console.print(f"[yellow]error (verdict unknown):[/yellow] {summary['error']}")
    failed = {c["name"] for c in summary.get("checks", []) if c.get("success") is False}
    for f in summary.get("findings", []):
        shown = sorted(failed & set(f["invariants"]))
        console.print(f"  finding {f['id']} applies to these settings ({escape(f['title'])})"
                      + (f": explains {', '.join(shown)}" if shown else ""))
    expected = summary.get("as_expected")
    if expected:
        console.print("as the scenario expects: " + ("[green]yes[/green]" if expected["ok"]
                                                     else f"[red]no[/red] ({escape(expected['why'])})"))
    if summary.get("report"):  # None: no report was written (a crashed run)
        console.print(f"report: {escape(summary['report'])}", highlight=False)
        if summary.get("local"):
            console.print(f"report (local copy): {escape(summary['local'])}/report/index.html", highlight=False)
    elif summary.get("local"):
        console.print(f"no report written; summary (local copy): {escape(summary['local'])}/summary.json",
                      highlight=False)
    console.print(f"replay: {escape(summary['replay'])}", soft_wrap=True)


def cmd_pin(args, console: Console) -> int:
    from .schedule import pin, to_yaml

    overrides = _overrides(args.overrides)
    mutant = check_mutant(args.mutant)
    scenario = load(args.scenario, overrides=overrides, seed=args.seed)
    pinned, stats = pin(scenario, mutant)
    out = args.out or f"{pinned.name}.yaml"
    with open(out, "w") as fh:
        fh.write(to_yaml(pinned))
    console.print(f"pinned {len(pinned.faults.schedule or ())} faults of {scenario.name} seed {scenario.seed} "
                  f"({stats['triggered']} checkpoints triggered, {stats['region_failovers']} region failovers) "
                  f"into {out}", highlight=False, soft_wrap=True)
    console.print("replay: " + escape(runner.replay_line(out, scenario.seed, None, mutant)), highlight=False,
                  soft_wrap=True)
    return runner.EXIT_VALID


def cmd_shrink(args, console: Console) -> int:
    from .scenario import INVARIANTS
    from .schedule import to_yaml
    from .shrink import shrink

    overrides = _overrides(args.overrides)
    mutant = check_mutant(args.mutant)
    if args.invariant is not None and args.invariant not in INVARIANTS:
        raise ScenarioError([("--invariant", f"{args.invariant!r} is not an invariant; known: {', '.join(INVARIANTS)}")])
    if args.max_rounds < 1:
        raise ScenarioError([("--max-rounds", f"must be >= 1, got {args.max_rounds}")])
    scenario = load(args.scenario, overrides=overrides, seed=args.seed)
    result = shrink(scenario, mutant, args.invariant, console=console, max_rounds=args.max_rounds)
    shrunk = result.shrunk.model_copy(update={"name": f"{scenario.name}-s{scenario.seed}-shrunk"})
    shrunk = shrunk.model_copy(update={"description": (
        f"Shrunk from `{runner.replay_line(args.scenario, scenario.seed, overrides, mutant)}`: fails "
        f"{result.invariant} ({', '.join(result.failed)}) with {len(shrunk.faults.schedule or ())} faults, "
        f"{shrunk.checkpoints} checkpoints, parallelism {shrunk.topology.parallelism}.")})
    text = to_yaml(shrunk)
    out = args.out or f"{shrunk.name}.yaml"
    with open(out, "w") as fh:
        fh.write(text)
    console.print(text, highlight=False, markup=False, soft_wrap=True)
    before, after = result.rounds[0]["size"], result.rounds[-1]["size"]
    console.print(f"shrunk {before[0]} faults / {before[1]} checkpoints / parallelism {before[2]} to "
                  f"{after[0]} / {after[1]} / {after[2]} in {len(result.rounds) - 1} rounds ({result.judged} "
                  f"schedules judged, {result.wall_seconds} s{'' if result.complete else ', stopped at --max-rounds'}); "
                  f"still fails {result.invariant}; saved {out}",
                  highlight=False, soft_wrap=True)
    console.print("replay: " + escape(runner.replay_line(out, shrunk.seed, None, mutant)), highlight=False,
                  soft_wrap=True)
    return runner.EXIT_VALID


def cmd_replay(args, console: Console) -> int:
    from .replay import replay_seed

    summary = replay_seed(args.swarm_id, args.seed, storage=_storage(args), local_dir=args.local_dir,
                          console=None if args.json else console)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True, default=str))
    else:
        print_summary(summary, console)
    diffs = summary["replay_of"]["differences"]
    if diffs:
        console.print(f"[red]the deep run disagrees with swarm {escape(args.swarm_id)} on seed {args.seed}[/red] "
                      "(a bug in the tool, not a verdict):", highlight=False)
        for line in diffs:
            console.print(f"  {escape(line)}", highlight=False)
        return runner.EXIT_UNKNOWN
    console.print(f"same verdict, failed invariants, rules and stats as swarm {escape(args.swarm_id)} seed {args.seed}",
                  highlight=False)
    return runner.exit_code(summary)


def cmd_swarm(args, console: Console) -> int:
    from .fastswarm import fast_swarm

    if args.seeds < 1:
        raise ScenarioError([("--seeds", "must be >= 1")])
    if args.partitions is not None and args.partitions < 1:
        raise ScenarioError([("--partitions", "must be >= 1")])
    mutant = check_mutant(args.mutant)
    load(args.scenario)  # fail fast on a bad name
    result = fast_swarm(args.scenario, args.seeds, first_seed=args.first_seed, mutant=mutant, storage=_storage(args),
                        partitions=args.partitions, console=None if args.json else console,
                        local_dir=args.local_dir)
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True, default=str))
    else:
        print_swarm(result, console)
    if result["unknown"]:
        return runner.EXIT_UNKNOWN
    return runner.EXIT_INVALID if result["failing"] else runner.EXIT_VALID


def cmd_study(args, console: Console) -> int:
    from .study import plan_from_options, run_study

    plan = plan_from_options(policies=args.policies, probabilities=args.probabilities, parallelism=args.parallelism,
                             seeds=args.seeds, first_seed=args.first_seed, checkpoints=args.checkpoints,
                             crash=args.crash)
    console.print(f"study: {len(plan.cells())} runs ({', '.join(plan.policies)}; p in {list(plan.probabilities)}; "
                  f"parallelism {list(plan.parallelism)}; {plan.seeds} seeds x {plan.checkpoints} checkpoints)")
    result = run_study(plan, storage=_storage(args), console=None if args.json else console, local_dir=args.local_dir)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "cells"}, indent=1, sort_keys=True, default=str))
    else:
        console.print(f"study {result['study_id']}: {len(result['cells'])} runs in {result['wall_seconds']} s, "
                      f"{result['errors']} raised")
        console.print(f"  page: {result['uri']}")
        if result.get("local"):
            console.print(f"  local copy: {result['local']}")
        for row in result["rows"]:
            if "error" in row:
                console.print(f"  [red]{row['policy']} p={row['probability']} parallelism={row['parallelism']}: "
                              f"{escape(row['error'])}[/red]")
    return runner.EXIT_UNKNOWN if result["errors"] else runner.EXIT_VALID


def print_swarm(result: dict, console: Console) -> None:
    rate = result["judged"] / max(1e-9, result["wall_seconds"])
    console.print(f"swarm {result['swarm_id']}: {result['judged']} seeds judged, {len(result['failing'])} failing, "
                  f"{result['unknown']} unknown, {result['wall_seconds']} s ({rate:.1f} seeds/s end to end)")
    console.print(f"  tables: {result['prefix']}tables/  ({result['rows']} rows)")
    if result.get("local"):
        console.print(f"  summary (local copy, for `regionchaos replay`): {result['local']}")
    if result.get("report"):
        console.print(f"  report: {result['report']}" + (f" (local copy: {result['local_report']})"
                                                          if result.get("local_report") else ""))
    if result.get("report_error"):
        console.print(f"  [yellow]report not rendered:[/yellow] {escape(result['report_error'])}")
    if result.get("known_findings"):
        console.print(f"  {len(result['known_findings'])} seeds fail only invariants of recorded findings "
                      "(FINDINGS.md): " + ", ".join(f"seed {k['seed']} ({', '.join(k['failed'])})"
                                                    for k in result["known_findings"][:10]))
    for failing in result["failing"]:
        console.print(f"  seed {failing['seed']}: {', '.join(failing['failed'])}\n    replay: {escape(failing['replay'])}"
                      f"\n    deep replay, compared with the swarm: {escape(failing['replay_deep'])}", soft_wrap=True)
    for run in result["runs"]:
        if run["verdict"] == "unknown":
            console.print(f"  seed {run['seed']}: [yellow]unknown[/yellow] {escape(run.get('error') or '')}\n"
                          f"    replay: {escape(run['replay'])}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console(stderr=True) if getattr(args, "json", False) else Console()
    try:
        if args.command == "scenarios":
            for name, path in catalogue().items():
                sc = load(str(path))
                tag = escape(f" [expect {sc.expect.verdict}: {sc.expect.invariant}]") if sc.expect.verdict == "invalid" else ""
                console.print(f"[bold]{name}[/bold]{tag}\n    {sc.description.strip()}", highlight=False)
            return 0
        if args.command == "mutants":
            for name, what in MUTANTS.items():
                console.print(f"[bold]{name}[/bold]: {what}", highlight=False)
            return 0
        if args.command == "run":
            return cmd_run(args, console)
        if args.command == "replay":
            return cmd_replay(args, console)
        if args.command == "pin":
            return cmd_pin(args, console)
        if args.command == "shrink":
            return cmd_shrink(args, console)
        if args.command == "study":
            return cmd_study(args, console)
        return cmd_swarm(args, console)
    except ScenarioError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False)
        return runner.EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - infrastructure: storage, Spark
        from .storage.s3 import StorageError

        if isinstance(exc, StorageError):
            console.print(f"[red]storage error:[/red] {exc}", highlight=False)
            return runner.EXIT_UNKNOWN
        # anything else is an infrastructure error: verdict unknown (3), never "invariant violated" (1)
        console.print(f"[red]error ({type(exc).__name__}), verdict unknown:[/red] {exc}", highlight=False)
        if os.environ.get("REGIONCHAOS_DEBUG"):
            console.print_exception()
        return runner.EXIT_UNKNOWN


if __name__ == "__main__":
    sys.exit(main())
