"""The ``regionchaos`` command line: argv in; exit code out, with the verdict, the report's
address and a replay line on the console (or the summary as JSON on stdout).

Every option is checked before the first write (an object on the store or a local file):
bad input is exit 2 with the field named (docs/INPUTS.md lists what was tried), in sentences
that name the field and the value ("topology.parallelism: must be at least 1, got 0"), never
the validator's wording. Text the user typed is escaped before it reaches the console (Rich
markup such as ``[/x]`` prints as typed), and an unexpected exception ends as exit 3 with a
one-line reason, never a traceback (REGIONCHAOS_DEBUG=1 prints it). The help text
(``DESCRIPTION``, ``RUN_DESCRIPTION``, ``EPILOG``) is what ``--help`` prints.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from . import runner
from .explore import command as explore_command
from .flink.dist import FlinkNotInstalled, find_dist
from .judge.policy import bad_input, done, infrastructure
from .progress import suite_progress
from .replay import replay_seed
from .run import NOT_APPLICABLE, ExitCode, parse_set
from .run.ids import check_run_id
from .runid import run_id_problem
from .scenario import (INVARIANTS, MUTANTS, ScenarioError, catalogue, check_mutant, flink_settings, load,
                       require_emulation)
from .schedule import pin, to_yaml
from .shrink import NotJudged, shrink
from .storage.s3 import StorageConfig, StorageError
from .study import plan_from_options, run_study
from .swarm import SWARM_OVERRIDES, fast_swarm, swarm_id

EPILOG = "exit codes (the outcome table, README: Outcomes): " + "; ".join(f"{code.value} {code.meaning}"
                                                                          for code in ExitCode)
DESCRIPTION = """\
Chaos tests for Flink's FLIP-600 regional checkpoints: emulate a scenario with faults,
judge the run with the invariant suites (Great Expectations on Spark) and write an HTML
report, all on S3 (an embedded server unless --s3-endpoint is given).

examples:
  regionchaos run --scenario smoke                  # emulate + validate + report
  regionchaos run --scenario regional-basic --mutant cleaner-ignores-refs   # exit 1: a mutant
  regionchaos swarm --seeds 2000                    # many seeds, each its own fault mix
  regionchaos scenarios                             # the catalogue
  regionchaos COMMAND --help                        # a command's options and examples"""
RUN_DESCRIPTION = """\
Emulate one scenario (a catalogue name or a YAML file), validate the run against every
invariant suite and write the HTML report; prints the verdict, the report and a replay line.

examples:
  regionchaos run --scenario smoke
  regionchaos run --scenario rescale-4-2-1 --seed 7 --set faults.decline=0.2
  regionchaos run --scenario smoke --set rescale=3:2,7:1      # AFTER:PARALLELISM pairs, as the form
  regionchaos run --scenario regional-basic --mutant cleaner-ignores-refs   # exit 1: a mutant
  regionchaos run --scenario smoke --s3-endpoint http://127.0.0.1:9000 --bucket regionchaos
  regionchaos run --scenario smoke --json                     # the summary as JSON on stdout"""
SWARM_DESCRIPTION = """\
Many seeds of one scenario, each drawing its own fault mix, emulated in memory inside Spark
tasks and judged by one pass of the suites.

examples:
  regionchaos swarm --seeds 2000
  regionchaos swarm --seeds 200 --scenario smoke --set workload.splits=7
  regionchaos swarm --seeds 200 --scenario smoke --mutant failed-region-commits"""
MAX_SEED = 2**63 - 1  # a Java long, as the scenario's seed field
MAX_SWARM_SEEDS = 1_000_000  # a swarm of a million smoke seeds takes hours on a laptop; split bigger ones
MAX_PARTITIONS = 100_000
# http(s)://host[:port][/]: a DNS name, an IPv4 address or a bracketed IPv6 address, nothing after the port
_ENDPOINT_RE = re.compile(r"https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(\d{1,5}))?/?\Z")
_BUCKET_RE = re.compile(r"[A-Za-z0-9._-]{1,255}\Z")  # what botocore accepts as a bucket name (ARNs aside)


def _bad(field: str, reason: str) -> ScenarioError:
    return ScenarioError([(field, reason)], what="input")


def check_endpoint(value: str | None) -> str | None:
    """``--s3-endpoint``: None or empty (the embedded server), else http(s)://host[:port]."""
    if not value:
        return None
    match = _ENDPOINT_RE.match(value)
    if match is None:
        raise _bad("--s3-endpoint", f"must be http://HOST[:PORT] or https://HOST[:PORT], got {value!r}")
    if match.group(2) is not None and not 1 <= int(match.group(2)) <= 65535:
        raise _bad("--s3-endpoint", f"the port must be 1 to 65535, got {match.group(2)} in {value!r}")
    return value


def check_bucket(value: str) -> str:
    if not isinstance(value, str) or not _BUCKET_RE.match(value):
        raise _bad("--bucket", f"must be 1 to 255 letters, digits, '.', '_' or '-', got {value!r}")
    return value


def check_local_dir(value: str | None) -> str | None:
    """``--local-dir``: a directory, or a path whose nearest existing ancestor is a writable
    directory (it is created when the run ends); never a file."""
    if value is None:
        return None
    if not value or "\0" in value:
        raise _bad("--local-dir", f"must name a directory, got {value!r}")
    path = Path(value)
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        what = "is a file" if probe == path else f"is under {str(probe)!r}, which is not a directory"
        raise _bad("--local-dir", f"must be a directory, but {value!r} {what}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise _bad("--local-dir", f"{str(probe)!r} is not writable")
    return value


def check_out(value: str) -> str:
    """``--out``: a file to write in an existing, writable folder (overwritten if it is a file)."""
    if not value or "\0" in value:
        raise _bad("--out", f"must name a file, got {value!r}")
    path = Path(value)
    if path.is_dir() or value.endswith(("/", os.sep)):
        raise _bad("--out", f"{value!r} is a directory; name a file to write")
    if os.path.lexists(path) and not path.is_file():
        raise _bad("--out", f"{value!r} exists and is not a regular file")
    folder = path.parent
    if not folder.is_dir():
        raise _bad("--out", f"the folder {str(folder)!r} of {value!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _bad("--out", f"the folder {str(folder)!r} of {value!r} is not writable")
    return value


def _write_out(out: str, text: str) -> None:
    try:
        with open(out, "w") as fh:
            fh.write(text)
    except OSError as exc:
        raise _bad("--out", f"cannot write {out!r}: {exc.strerror or exc}") from None


def check_storage_args(args) -> None:
    """The options every storage command shares, before anything is written."""
    args.s3_endpoint = check_endpoint(args.s3_endpoint)
    check_bucket(args.bucket)
    check_local_dir(args.local_dir)


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


def _set_arg(p: argparse.ArgumentParser, what: str) -> None:
    """``--set KEY=VALUE``, repeatable: every command that takes a scenario reads it through `parse_set`."""
    p.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE", default=[],
                   help=f"override a field: {what}; repeatable")


def build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="regionchaos", description=DESCRIPTION, formatter_class=raw, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="emulate, validate and report one scenario", description=RUN_DESCRIPTION,
                       formatter_class=raw, epilog=EPILOG)
    p.add_argument("--scenario", required=True, help="catalogue name (see `regionchaos scenarios`) or a YAML path")
    p.add_argument("--seed", type=int, help="seed (default: the scenario's); the same seed replays the run exactly")
    _set_arg(p, "a Flink key (execution.checkpointing.region.enabled=false) or a section path "
                "(faults.decline=0.1, topology.parallelism=8)")
    p.add_argument("--mutant", help="run a deliberately broken protocol variant (see `regionchaos mutants`)")
    p.add_argument("--run-id", help="run id (default: derived from scenario, seed, mutant and settings)")
    _storage_args(p)

    p = sub.add_parser("swarm", help="many seeds with randomised fault mixes", description=SWARM_DESCRIPTION,
                       formatter_class=raw, epilog=EPILOG)
    p.add_argument("--seeds", type=int, required=True,
                   help="number of seeds; each is emulated in memory inside a Spark task, and one pass of the "
                        "GX suites judges them all (tables under swarms/SWARM_ID/ on the store)")
    p.add_argument("--first-seed", type=int, default=1, help="first seed (default 1)")
    p.add_argument("--scenario", default="smoke", help="base scenario (default smoke)")
    _set_arg(p, "as for `run`, on every seed (the swarm's own faults.swarm=true stays on)")
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
    _set_arg(p, "as for `run` (e.g. faults.swarm=true)")
    p.add_argument("--mutant", help="emulate this mutant while recording (the faults do not depend on it "
                   "until the runs diverge)")
    p.add_argument("--out", help="file to write (default: NAME-sSEED-pinned.yaml in the current directory)")

    p = sub.add_parser("shrink", help="the smallest explicit schedule (fewer faults, checkpoints, subtasks) that "
                                      "still fails the same invariant; writes it as a scenario file",
                       epilog="exit codes: 0 shrunk (the file fails the invariant), 2 bad input or the run fails no "
                              "invariant (a mutant the checks did not catch included), 3 the run is unknown or an "
                              "infrastructure error")
    p.add_argument("--scenario", required=True, help="catalogue name or a YAML path")
    p.add_argument("--seed", type=int, help="the failing seed (default: the scenario's)")
    _set_arg(p, "as for `run` (e.g. faults.swarm=true for a swarm seed)")
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

    explore_command.add_parser(sub, EPILOG, _storage_args)

    sub.add_parser("scenarios", help="list the scenario catalogue")
    sub.add_parser("mutants", help="list the mutants")
    return parser


def _storage(args):
    return StorageConfig(endpoint_url=args.s3_endpoint or None, bucket=args.bucket)


# -- the checks: everything a command needs, before its first write ------------------------------

def check_run(args) -> dict:
    """`run`: the scenario, mutant, overrides and run id, or a ScenarioError (nothing written)."""
    check_storage_args(args)
    overrides = parse_set(args.overrides)
    mutant = check_mutant(args.mutant)
    if args.run_id is not None:
        check_run_id(args.run_id, "--run-id")
    scenario = load(args.scenario, overrides=overrides, seed=args.seed)
    if scenario.backend == "flink":
        check_real_flink(mutant)
    run_id = args.run_id or runner.default_run_id(scenario, mutant)
    if scenario.compare_regional_off:  # the B side's prefix is RUN_ID-regional-off
        check_run_id(run_id + "-regional-off", "--run-id")
    return {"scenario": scenario, "mutant": mutant, "overrides": overrides, "run_id": run_id}


def check_real_flink(mutant: str | None) -> None:
    """A ``backend: flink`` run: no mutant (mutants break the emulated protocol), and a Flink distribution
    (FLINK_HOME, else the pinned install) with Java to run it; else exit 2 before anything is written."""
    if mutant:
        raise _bad("--mutant", f"{mutant!r} breaks the emulated protocol; a backend flink run has no mutants")
    try:
        find_dist()
    except FlinkNotInstalled as exc:
        raise _bad("backend", f"flink needs a Flink distribution: {exc}") from None


def check_pin(args) -> dict:
    overrides = parse_set(args.overrides)
    mutant = check_mutant(args.mutant)
    scenario = require_emulation(load(args.scenario, overrides=overrides, seed=args.seed), "pin")
    out = check_out(args.out or f"{scenario.name}-s{scenario.seed}-pinned.yaml")
    return {"scenario": scenario, "mutant": mutant, "overrides": overrides, "out": out}


def check_shrink(args) -> dict:
    overrides = parse_set(args.overrides)
    mutant = check_mutant(args.mutant)
    if args.invariant is not None and args.invariant not in INVARIANTS:
        raise _bad("--invariant", f"{args.invariant!r} is not an invariant; known: {', '.join(INVARIANTS)}")
    if args.max_rounds < 1:
        raise _bad("--max-rounds", f"must be at least 1, got {args.max_rounds}")
    scenario = require_emulation(load(args.scenario, overrides=overrides, seed=args.seed), "shrink")
    out = check_out(args.out or f"{scenario.name}-s{scenario.seed}-shrunk.yaml")
    return {"scenario": scenario, "mutant": mutant, "overrides": overrides, "out": out}


def check_swarm(args) -> dict:
    check_storage_args(args)
    if not 1 <= args.seeds <= MAX_SWARM_SEEDS:
        raise _bad("--seeds", f"must be 1 to {MAX_SWARM_SEEDS:,} (run bigger swarms as several), got {args.seeds}")
    if not 0 <= args.first_seed <= MAX_SEED:
        raise _bad("--first-seed", f"must be 0 to 2**63-1 (a seed is a Java long), got {args.first_seed}")
    if args.first_seed + args.seeds - 1 > MAX_SEED:
        raise _bad("--first-seed", f"the last seed, {args.first_seed} + {args.seeds} - 1, is beyond 2**63-1; "
                                   f"--first-seed may be at most {MAX_SEED - args.seeds + 1} for {args.seeds} seeds")
    if args.partitions is not None and not 1 <= args.partitions <= MAX_PARTITIONS:
        raise _bad("--partitions", f"must be 1 to {MAX_PARTITIONS:,}, got {args.partitions}")
    mutant = check_mutant(args.mutant)
    overrides = parse_set(args.overrides)
    # as fast_swarm loads it: fail fast on a bad name or value, or a real-Flink scenario (nothing to emulate)
    require_emulation(load(args.scenario), "swarm")  # before the swarm's overrides, which it would refuse
    scenario = load(args.scenario, overrides={**overrides, **SWARM_OVERRIDES})
    sid = swarm_id(args.scenario, args.first_seed, args.seeds, mutant, {**overrides, **SWARM_OVERRIDES})
    problem = run_id_problem(sid)  # the swarm's prefix is made from the file's name
    if problem is not None:
        raise _bad("--scenario", f"the swarm id made from the file name, {sid!r}, is not an id: it {problem}")
    return {"scenario": scenario, "mutant": mutant, "overrides": overrides, "swarm_id": sid}


def check_replay(args) -> dict:
    check_storage_args(args)
    check_run_id(args.swarm_id, "SWARM_ID")
    if not 0 <= args.seed <= MAX_SEED:
        raise _bad("--seed", f"must be 0 to 2**63-1, got {args.seed}")
    return {}


def check_study(args) -> dict:
    check_storage_args(args)
    plan = plan_from_options(policies=args.policies, probabilities=args.probabilities, parallelism=args.parallelism,
                             seeds=args.seeds, first_seed=args.first_seed, checkpoints=args.checkpoints,
                             crash=args.crash)
    return {"plan": plan}


CHECKS = {"run": check_run, "pin": check_pin, "shrink": check_shrink, "swarm": check_swarm, "replay": check_replay,
          "study": check_study}


def check(argv: list[str]) -> dict:
    """Parse ``argv`` and run its command's checks without running it: what the command would
    run with (``scenario``, ``run_id`` ...), or a ScenarioError (exit 2 in `main`); argparse's
    own refusals raise SystemExit(2). Nothing is written."""
    args = build_parser().parse_args(argv)
    return CHECKS[args.command](args) if args.command in CHECKS else {}


# -- the commands ---------------------------------------------------------------------------------

def cmd_run(args, console: Console) -> int:
    checked = check_run(args)
    scenario, mutant, overrides = checked["scenario"], checked["mutant"], checked["overrides"]
    extra = ["--s3-endpoint", args.s3_endpoint] if args.s3_endpoint else []
    replay = runner.replay_line(args.scenario, scenario.seed, overrides, mutant, extra)
    with _suite_lines(console):
        summary = runner.run(scenario, mutant=mutant, storage=_storage(args), run_id=args.run_id, console=console,
                             replay=replay, overrides=overrides, local_dir=args.local_dir)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True, default=str))
    else:
        print_summary(summary, console, embedded=not args.s3_endpoint)
    return summary["outcome"]["exit_code"]  # the policy's (`regionchaos.judge.policy`), as summary.json says


def _suite_lines(console: Console):
    """One console line per GX suite while a run is judged (minutes on a big run, silent before)."""
    return suite_progress(lambda line: console.print(f"  {escape(line)}", highlight=False))


def print_summary(summary: dict, console: Console, *, embedded: bool = False) -> None:
    """The verdict, each check, findings, the report and the replay line. ``embedded``: the run's
    S3 server was the embedded one, gone when the command ends, so the report line is the local
    copy (the s3:// address is named as gone); with a real endpoint both are printed."""
    colour = {"valid": "green", "invalid": "red"}.get(summary["verdict"], "yellow")
    console.print(f"verdict: [bold {colour}]{escape(str(summary['verdict']))}[/bold {colour}]  "
                  f"({escape(str(summary['run_id']))})")
    apart = [c["name"] for c in summary.get("checks", []) if c.get("state") == NOT_APPLICABLE]
    for check in summary.get("checks", []):
        if check.get("state") == NOT_APPLICABLE:
            continue  # listed apart below: neither passed nor failed
        mark = {True: "[green]ok[/green]", False: "[red]FAILED[/red]"}.get(check.get("success"), "[yellow]unknown[/yellow]")
        console.print(f"  {mark:<24} {escape(str(check['name']))}  unexpected={check.get('unexpected_count')}")
    if apart:
        console.print(f"  not applicable to this distribution: {escape(', '.join(apart))}", highlight=False)
    if summary.get("error"):
        console.print(f"[yellow]error (verdict unknown):[/yellow] {escape(str(summary['error']))}")
    failed_rules = {f"{c['name']}.{r}" for c in summary.get("checks", []) if c.get("success") is False
                    for r in c.get("failed_rules") or ()}
    for f in summary.get("findings") or []:
        shown = sorted(failed_rules & set(f.get("rules", [])))  # as the report: rules, not whole invariants
        if shown:  # a finding that applies to these settings but did not show explains nothing
            console.print(f"  finding {escape(str(f['id']))} showed in this run ({escape(str(f['title']))}): "
                          f"explains {escape(', '.join(shown))}")
    outcome = summary.get("outcome") or {}
    if outcome:
        colour = "green" if outcome.get("green") else "red"
        console.print(f"outcome: [{colour}]{escape(str(outcome.get('sentence')))}[/{colour}] "
                      f"(exit {outcome.get('exit_code')})", highlight=False, soft_wrap=True)
    if summary.get("report") and embedded and summary.get("local"):  # the s3:// address died with the server
        console.print(f"report: {escape(str(summary['local']))}/report/index.html", highlight=False, soft_wrap=True)
        console.print(f"  ({escape(str(summary['report']))} was on the embedded S3 server, which stopped with the "
                      "run; --s3-endpoint keeps runs on S3)", highlight=False, soft_wrap=True)
    elif summary.get("report"):  # None: no report was written (a crashed run)
        gone = " (on the embedded S3 server, which stopped with the run)" if embedded else ""
        console.print(f"report: {escape(str(summary['report']))}{gone}", highlight=False)
        if summary.get("local"):
            console.print(f"report (local copy): {escape(str(summary['local']))}/report/index.html", highlight=False)
    elif summary.get("local"):
        console.print(f"no report written; summary (local copy): {escape(str(summary['local']))}/summary.json",
                      highlight=False)
    console.print(f"replay: {escape(summary['replay'])}", soft_wrap=True)


def cmd_pin(args, console: Console) -> int:
    checked = check_pin(args)
    scenario, mutant, out = checked["scenario"], checked["mutant"], checked["out"]
    pinned, stats = pin(scenario, mutant)
    _write_out(out, to_yaml(pinned))
    console.print(f"pinned {len(pinned.faults.schedule or ())} faults of {scenario.name} seed {scenario.seed} "
                  f"({stats['triggered']} checkpoints triggered, {stats['region_failovers']} region failovers) "
                  f"into {escape(out)}", highlight=False, soft_wrap=True)
    console.print("replay: " + escape(runner.replay_line(out, scenario.seed, None, mutant)), highlight=False,
                  soft_wrap=True)
    return done(f"pinned into {out}").exit_code


def cmd_shrink(args, console: Console) -> int:
    checked = check_shrink(args)
    scenario, mutant, overrides, out = checked["scenario"], checked["mutant"], checked["overrides"], checked["out"]
    try:
        result = shrink(scenario, mutant, args.invariant, console=console, max_rounds=args.max_rounds)
    except NotJudged as exc:  # the run is unknown: nothing sure to shrink
        _say(console, "unknown:", f"{scenario.name} seed {scenario.seed} could not be judged ({exc}): nothing to shrink")
        return exc.outcome.exit_code
    shrunk = result.shrunk.model_copy(update={"name": f"{scenario.name}-s{scenario.seed}-shrunk"})
    shrunk = shrunk.model_copy(update={"description": (
        f"Shrunk from `{runner.replay_line(args.scenario, scenario.seed, overrides, mutant)}`: fails "
        f"{result.invariant} ({', '.join(result.failed)}) with {len(shrunk.faults.schedule or ())} faults, "
        f"{shrunk.checkpoints} checkpoints, parallelism {shrunk.topology.parallelism}.")})
    text = to_yaml(shrunk)
    _write_out(out, text)
    console.print(text, highlight=False, markup=False, soft_wrap=True)
    before, after = result.rounds[0]["size"], result.rounds[-1]["size"]
    console.print(f"shrunk {before[0]} faults / {before[1]} checkpoints / parallelism {before[2]} to "
                  f"{after[0]} / {after[1]} / {after[2]} in {len(result.rounds) - 1} rounds ({result.judged} "
                  f"schedules judged, {result.wall_seconds} s{'' if result.complete else ', stopped at --max-rounds'}); "
                  f"still fails {result.invariant}; saved {escape(out)}",
                  highlight=False, soft_wrap=True)
    console.print("replay: " + escape(runner.replay_line(out, shrunk.seed, None, mutant)), highlight=False,
                  soft_wrap=True)
    return done(f"shrunk into {out}").exit_code


def cmd_replay(args, console: Console) -> int:
    check_replay(args)
    with _suite_lines(console):
        summary = replay_seed(args.swarm_id, args.seed, storage=_storage(args), local_dir=args.local_dir,
                              console=None if args.json else console)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True, default=str))
    else:
        print_summary(summary, console, embedded=not args.s3_endpoint)
    diffs = summary["replay_of"]["differences"]
    if diffs:
        console.print(f"[red]the deep run disagrees with swarm {escape(args.swarm_id)} on seed {args.seed}[/red] "
                      "(a bug in the tool, not a verdict):", highlight=False)
        for line in diffs:
            console.print(f"  {escape(line)}", highlight=False)
        return infrastructure(f"the deep run disagrees with swarm {args.swarm_id} seed {args.seed}").exit_code
    console.print(f"same verdict, failed invariants, rules and stats as swarm {escape(args.swarm_id)} seed {args.seed}",
                  highlight=False)
    return summary["outcome"]["exit_code"]


def cmd_explore(args, console: Console) -> int:
    check_storage_args(args)
    return explore_command.run(args, console, _storage(args))


def cmd_swarm(args, console: Console) -> int:
    checked = check_swarm(args)
    with _suite_lines(console):
        result = fast_swarm(args.scenario, args.seeds, first_seed=args.first_seed, mutant=checked["mutant"],
                            storage=_storage(args), partitions=args.partitions, overrides=checked["overrides"],
                            console=None if args.json else console, local_dir=args.local_dir)
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True, default=str))
    else:
        print_swarm(result, console, embedded=not args.s3_endpoint)
    return result["outcome"]["exit_code"]  # the policy's (`regionchaos.judge.policy.swarm_outcome`)


def cmd_study(args, console: Console) -> int:
    plan = check_study(args)["plan"]
    console.print(f"study: {len(plan.cells())} runs ({', '.join(plan.policies)}; p in {list(plan.probabilities)}; "
                  f"parallelism {list(plan.parallelism)}; {plan.seeds} seeds x {plan.checkpoints} checkpoints)",
                  markup=False)
    result = run_study(plan, storage=_storage(args), console=None if args.json else console, local_dir=args.local_dir)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "cells"}, indent=1, sort_keys=True, default=str))
    else:
        console.print(f"study {escape(str(result['study_id']))}: {len(result['cells'])} runs in "
                      f"{result['wall_seconds']} s, {result['errors']} raised")
        console.print(f"  page: {escape(str(result['uri']))}")
        if result.get("local"):
            console.print(f"  local copy: {escape(str(result['local']))}")
        for row in result["rows"]:
            if "error" in row:
                console.print(f"  [red]{escape(str(row['policy']))} p={row['probability']} "
                              f"parallelism={row['parallelism']}: {escape(row['error'])}[/red]")
    if result["errors"]:
        return infrastructure(f"{result['errors']} of the study's runs raised").exit_code
    return done(f"study {result['study_id']} measured").exit_code


def print_swarm(result: dict, console: Console, *, embedded: bool = False) -> None:
    """The swarm's counts, tables, report (the local copy first with the embedded server, as
    `print_summary`), recorded findings, failing and unknown seeds with their replay lines."""
    rate = result["judged"] / max(1e-9, result["wall_seconds"])
    console.print(f"swarm {escape(str(result['swarm_id']))}: {result['judged']} seeds judged, "
                  f"{len(result['failing'])} failing, {result['unknown']} unknown, {result['wall_seconds']} s "
                  f"({rate:.1f} seeds/s end to end)")
    outcome = result.get("outcome") or {}
    if outcome:  # the worst of its seeds'; with a mutant, whether a seed caught it (README: Outcomes)
        colour = "green" if outcome.get("green") else "red"
        console.print(f"  outcome: [{colour}]{escape(str(outcome.get('sentence')))}[/{colour}] "
                      f"(exit {outcome.get('exit_code')})", highlight=False, soft_wrap=True)
    console.print(f"  tables: {escape(str(result['prefix']))}tables/  ({result['rows']} rows)")
    reached = result.get("interleavings") or {}
    if reached:  # a kind no seed reached is a gap in the chaos
        console.print("  interleavings (seeds): " + ", ".join(
            f"{kind} {n}" if n else f"[red]{kind} 0[/red]" for kind, n in reached.items()), soft_wrap=True)
    if result.get("local"):
        console.print(f"  summary (local copy, for `regionchaos replay`): {escape(str(result['local']))}")
    if result.get("report") and embedded and result.get("local_report"):  # the s3:// address died with the server
        console.print(f"  report: {escape(str(result['local_report']))} ({escape(str(result['report']))} was on "
                      "the embedded S3 server, which stopped with the swarm)", highlight=False, soft_wrap=True)
    elif result.get("report"):
        console.print(f"  report: {escape(str(result['report']))}"
                      + (f" (local copy: {escape(str(result['local_report']))})" if result.get("local_report") else ""))
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


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _dispatch(args, console: Console) -> int:
    if args.command == "scenarios":
        for name, path in catalogue().items():
            sc = load(str(path))
            tag = escape(f" [expect {sc.expect.verdict}: {sc.expect.invariant}]") if sc.expect.verdict == "invalid" else ""
            console.print(f"[bold]{escape(name)}[/bold] [dim]({escape(sc.backend)})[/dim]{tag}\n"
                          f"    {escape(sc.description.strip())}", highlight=False)
            settings = [f"{key}={json.dumps(value)}" + ("" if flink else " (not a Flink key)")
                        for key, value, flink in flink_settings(sc)]
            if settings:
                console.print("    [dim]flink:[/dim] " + escape(", ".join(settings)), highlight=False)
        return done("the catalogue listed").exit_code
    if args.command == "mutants":
        for name, what in MUTANTS.items():
            console.print(f"[bold]{escape(name)}[/bold]: {escape(what)}", highlight=False)
        return done("the mutants listed").exit_code
    commands = {"run": cmd_run, "replay": cmd_replay, "pin": cmd_pin, "shrink": cmd_shrink, "study": cmd_study,
                "swarm": cmd_swarm, "explore": cmd_explore}
    return commands[args.command](args, console)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # argparse refuses its own way: usage, exit 2
    console = Console(stderr=True) if getattr(args, "json", False) else Console()
    try:
        return _dispatch(args, console)
    except ScenarioError as exc:
        _say(console, "error:", str(exc))
        return bad_input(str(exc)).exit_code
    except StorageError as exc:
        _say(console, "storage error:", _one_line(str(exc)))
        return infrastructure(_one_line(str(exc))).exit_code
    except Exception as exc:  # noqa: BLE001 - infrastructure: Spark, or a bug in the tool
        # verdict unknown (3), never "invariant violated" (1), never a traceback
        _say(console, f"error ({type(exc).__name__}), verdict unknown:", _one_line(str(exc)))
        if os.environ.get("REGIONCHAOS_DEBUG"):
            console.print_exception()
        return infrastructure(_one_line(str(exc))).exit_code


def _say(console: Console, label: str, text: str) -> None:
    """``label`` in red, then ``text`` exactly as it is (no markup parsed in it); plain stderr if
    the console itself fails. Text from argv may hold surrogates (bytes that are not UTF-8):
    printed as backslash escapes."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    try:
        console.print(f"[red]{escape(label)}[/red] {escape(text)}", highlight=False, soft_wrap=True)
    except Exception:  # noqa: BLE001 - the reason must reach the user whatever the console does
        print(f"{label} {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
