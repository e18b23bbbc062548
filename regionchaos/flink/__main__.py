"""``python -m regionchaos.flink --seed N [--set FIELD=VALUE ...]``: one real-Flink chaos run from the shell.

In:  a seed, `FlinkRunSpec` fields as ``--set`` pairs (``tm_kills=3``, ``jm_kill=true``, ``resume=older``,
     ``state_backend=rocksdb``...), the S3 endpoint (``--endpoint-url``; default: the embedded server,
     started and stopped here) and bucket, the run id, the scratch folder (default ``.runs/flink/RUN_ID``).
     The stored artifacts are judged by the GX suites that apply to a real run (`regionchaos.flink.judging`;
     a local Spark session starts once the cluster is stopped); ``--no-judge`` leaves that out.
Out: the run's summary as JSON on stdout (the cluster's record is ``flink/summary.json`` under the run prefix,
     the judgement ``flink/validation/results.json``): its ``verdict`` is GX's over the applicable suites,
     ``gx`` holds each suite's verdict and the suites "not applicable" apart; ``exactly_once`` is the sink's
     cross-check (`regionchaos.flink.run`), never the verdict: with ``--no-judge`` the verdict is unknown (one
     check is not every check). The exit code and ``outcome`` follow the one policy table
     (`regionchaos.judge.policy`): 0 valid, 1 invalid, 2 bad input (the field named, nothing run or written),
     3 unknown (also: no Flink installed, not judged).
     A run without a scenario: `regionchaos run --scenario real-flink-...` runs the catalogue's real-Flink
     scenarios through the run package (summary, report, Data Docs at the run prefix's root).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path

import pydantic

from regionchaos.flink import judging
from regionchaos.flink.dist import REPO_ROOT, FlinkNotInstalled, find_dist
from regionchaos.flink.run import run_flink
from regionchaos.flink.spec import FlinkRunSpec
from regionchaos.judge import Judgement, crashed, run_outcome
from regionchaos.judge.policy import bad_input, infrastructure
from regionchaos.run import parse_set
from regionchaos.scenario import ScenarioError
from regionchaos.spark import get_spark
from regionchaos.storage import ObjectStore, StorageConfig, ensure_storage


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m regionchaos.flink", description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--set", dest="overrides", action="append", metavar="FIELD=VALUE",
                   help="a FlinkRunSpec field (repeatable)")
    p.add_argument("--endpoint-url", default=None, help="S3 endpoint (default: the embedded server)")
    p.add_argument("--bucket", default="regionchaos")
    p.add_argument("--run-id", default=None)
    p.add_argument("--scratch", default=None, help="the cluster's files (default .runs/flink/RUN_ID)")
    p.add_argument("--no-judge", dest="judge", action="store_false",
                   help="do not judge the run with the GX suites (its verdict is then unknown)")
    return p


def spec_of(args: argparse.Namespace) -> FlinkRunSpec:
    """The run's spec, or ScenarioError naming each bad field."""
    fields = parse_set(args.overrides)
    try:
        return FlinkRunSpec(seed=args.seed, **fields)
    except pydantic.ValidationError as exc:
        raise ScenarioError([(".".join(map(str, e["loc"])) or "spec", e["msg"]) for e in exc.errors()],
                            what="input") from exc


def judged_summary(summary: dict, store: ObjectStore, run_id: str) -> tuple[dict, Judgement]:
    """The run's summary with GX's judgement (`regionchaos.flink.judging.judge_stored`, its results under
    ``flink/validation/``): the judgement's fields, ``gx`` (each applicable suite's verdict, the suites listed
    apart, the storage counts, what failed) and ``outcome``; and the judgement."""
    judged = judging.judge_stored(get_spark("regionchaos-flink-judge"), store, run_id, docs=True)
    suites, not_applicable = judging.verdict_by_suite(judged.checks)
    gx = {"verdict": judged.verdict, "suites": suites, "not_applicable": not_applicable,
          "storage": judged.stats.get("storage_files"), "error": judged.error,
          "failed": {c["name"]: c.get("failed_rules") or c.get("error") for c in judged.checks
                     if c["name"] in suites and c.get("success") is not True}}
    return {**summary, **judged.fields(), "gx": gx}, judged


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        spec = spec_of(args)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return bad_input(str(exc)).exit_code
    try:
        dist = find_dist()
    except FlinkNotInstalled as exc:
        print(f"unknown: {exc}", file=sys.stderr)
        return infrastructure(str(exc)).exit_code
    run_id = args.run_id or f"flink-{spec.seed}-{uuid.uuid4().hex[:8]}"
    scratch = Path(args.scratch) if args.scratch else REPO_ROOT / ".runs" / "flink" / run_id
    with ensure_storage(StorageConfig(endpoint_url=args.endpoint_url, bucket=args.bucket)) as config:
        store = ObjectStore.for_run(config, run_id)
        summary = run_flink(spec, store, scratch, dist)
        if args.judge:
            summary, judged = judged_summary(summary, store, run_id)
        else:
            judged = crashed(run_id, "not judged (--no-judge): the GX suites did not run, so the run has no verdict",
                             scenario=None, mutant=None)
            summary = {**summary, **judged.fields(),
                       "not_judged": "--no-judge: the GX suites did not run, so the run has no verdict"}
    outcome = run_outcome(judged)
    print(json.dumps({"run_id": run_id, **summary, "outcome": outcome.as_dict()}, indent=1, sort_keys=True))
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
