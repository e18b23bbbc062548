"""``python -m regionchaos.flink --seed N [--set FIELD=VALUE ...]``: one real-Flink chaos run from the shell.

In:  a seed, `FlinkRunSpec` fields as ``--set`` pairs (``tm_kills=3``, ``jm_kill=true``, ``resume=older``,
     ``state_backend=rocksdb``...), the S3 endpoint (``--endpoint-url``; default: the embedded server,
     started and stopped here) and bucket, the run id, the scratch folder (default ``.runs/flink/RUN_ID``).
     The stored artifacts are judged by the GX suites that apply to a real run (`regionchaos.flink.judging`;
     a local Spark session starts once the cluster is stopped); ``--no-judge`` leaves that out.
Out: the run's summary as JSON on stdout (also ``flink/summary.json`` under the run prefix): its ``verdict``
     is GX's over the applicable suites, ``gx`` holds each suite's verdict and the suites "not applicable"
     apart; ``exactly_once`` is the sink's cross-check (`regionchaos.flink.run`), never the verdict: with
     ``--no-judge`` the verdict is unknown (one check is not every check). Exit 0 valid, 1 invalid, 2 bad
     input (the field named, nothing run or written), 3 unknown (also: no Flink installed, not judged).
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

from regionchaos.flink.dist import REPO_ROOT, FlinkNotInstalled, find_dist
from regionchaos.flink.run import run_flink
from regionchaos.flink.spec import FlinkRunSpec
from regionchaos.run import ExitCode, Verdict, exit_code, parse_set
from regionchaos.scenario import ScenarioError
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


def judged_summary(summary: dict, store: ObjectStore, run_id: str) -> dict:
    """The run's summary with GX's judgement: its verdict over the applicable suites (stored again)."""
    from regionchaos.flink.artifacts import as_json
    from regionchaos.flink.judging import judge_stored
    from regionchaos.spark import get_spark

    judged = judge_stored(get_spark("regionchaos-flink-judge"), store, run_id, docs=True)
    gx = {"verdict": judged["verdict"], "suites": judged["suites"], "not_applicable": judged["not_applicable"],
          "storage": judged["storage"], "error": judged.get("error"),
          "failed": {c["name"]: c.get("failed_rules") or c.get("error") for c in judged["checks"]
                     if c["name"] in judged["suites"] and c.get("success") is not True}}
    out = {**summary, "verdict": judged["verdict"], "gx": gx}
    store.put("flink/summary.json", as_json(out))
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        spec = spec_of(args)
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return ExitCode.BAD_INPUT
    try:
        dist = find_dist()
    except FlinkNotInstalled as exc:
        print(f"unknown: {exc}", file=sys.stderr)
        return ExitCode.UNKNOWN
    run_id = args.run_id or f"flink-{spec.seed}-{uuid.uuid4().hex[:8]}"
    scratch = Path(args.scratch) if args.scratch else REPO_ROOT / ".runs" / "flink" / run_id
    with ensure_storage(StorageConfig(endpoint_url=args.endpoint_url, bucket=args.bucket)) as config:
        store = ObjectStore.for_run(config, run_id)
        summary = run_flink(spec, store, scratch, dist)
        if args.judge:
            summary = judged_summary(summary, store, run_id)
        else:
            summary = {**summary, "verdict": Verdict.UNKNOWN.value,
                       "not_judged": "--no-judge: the GX suites did not run, so the run has no verdict"}
    print(json.dumps({"run_id": run_id, **summary}, indent=1, sort_keys=True))
    return exit_code(summary)


if __name__ == "__main__":
    sys.exit(main())
