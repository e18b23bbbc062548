"""``regionchaos explore``: its options, and what it prints and returns.

In:  argv parsed by `regionchaos.cli` (which adds this subcommand with `add_parser` and calls `run`).
Out: the exploration's summary on the console (`regionchaos.explore.summary.render`) or as JSON on stdout
     (``--json``), kept with its report under ``swarms/EXPLORE_ID/`` on the storage (listed by the runs view
     beside the swarms) and mirrored under ``--local-dir`` (`regionchaos.explore.report`), and the exit code of
     the project's outcome table: 0 valid or only declared findings, 1 a violation no finding explains, 2 bad
     input (before any work), 3 unknown.
"""

from __future__ import annotations

import argparse
import json

from ..run import parse_set
from ..runner import storage_for
from . import explore
from .report import store_exploration
from .summary import render

DESCRIPTION = """\
Every schedule of up to N checkpoint attempts of a small scenario (parallelism up to 4, N up to 12):
at each attempt each region acks, declines or stays silent, and a region, TaskManager or JobManager
failure lands between checkpoints or inside the pending one, for the fault kinds the scenario enables
(probability above 0). Runs are merged by a state signature; one schedule per distinct state is run
through the emulator and all are judged in one pass of the suites. Where the state space closes,
flip_bounds is proved for every number of checkpoints. The summary and an HTML report are kept under
swarms/EXPLORE_ID/ on the storage (the runs view lists them beside the swarms) and under --local-dir.

examples:
  regionchaos explore --scenario forced-global-tier2 --set topology.parallelism=3 --max-checkpoints 8
  regionchaos explore --scenario forced-global-tier2 --set execution.checkpointing.region.forced-global-failure=keep-forcing
  regionchaos explore --scenario smoke --set topology.parallelism=3 --set faults.inside=0.5 --json"""


def add_parser(sub, epilog: str, storage_args) -> None:
    """The subcommand; ``storage_args`` adds the options every storage command shares (and ``--json``)."""
    p = sub.add_parser("explore", help="every schedule of up to N checkpoints of a small scenario, judged by the suites",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=epilog)
    p.add_argument("--scenario", required=True, help="catalogue name (see `regionchaos scenarios`) or a YAML path")
    p.add_argument("--max-checkpoints", type=int, default=6, help="N: checkpoint attempts per schedule (1 to 12, "
                   "default 6)")
    p.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE", default=[],
                   help="override a field, as for `run` (faults.inside=0.5 places failures inside pending "
                        "checkpoints); repeatable")
    p.add_argument("--mutant", help="explore a deliberately broken protocol variant (see `regionchaos mutants`)")
    storage_args(p)


def run(args, console, storage) -> int:
    summary = explore(args.scenario, overrides=parse_set(args.overrides), mutant=args.mutant,
                      max_checkpoints=args.max_checkpoints)
    with storage_for(storage) as config:
        summary = store_exploration(summary, config, args.local_dir)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True, default=str))
    else:
        render(summary, console)
    return summary["exit_code"]
