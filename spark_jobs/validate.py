"""spark-submit entry point: judge one emulated run and write its report.

    spark-submit spark_jobs/validate.py --run-id smoke-1 --s3-endpoint http://127.0.0.1:9000

In:  a run id whose artifacts (docs/ARTIFACTS.md) are under ``s3://BUCKET/runs/RUN_ID/``, the
     S3 endpoint and bucket (credentials: the standard AWS chain).
Out: under the run prefix: ``validation/results.json`` and one GX result per suite,
     ``datadocs/`` (GX Data Docs, ``datadocs/index.html``), ``report/index.html`` and
     ``summary.json`` (the DESIGN.md contract); one JSON line on stdout (run id, verdict,
     failed and unknown invariants, report location, outcome). Holds the run id's lease while it works
     (`regionchaos.storage.RunLease`): refused (exit 3) while another job holds the run id.
Exit codes: the one outcome table (`regionchaos.judge.policy`, README: Outcomes), as ``regionchaos run``:
0 valid or a declared finding, 1 a violation no finding explains, a finding gone or a mutant, 2 bad input,
3 unknown or an infrastructure error.

The package is imported inside `main`, after the arguments are parsed: it imports boto3, and ``--help``
answers without it.

Thin on purpose: it is `regionchaos.runner.finish_stored`, the path every run is judged, summed up
(`regionchaos.run.summary.build_summary`) and reported by.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="validate.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-id", required=True, help="the run to judge (runs/RUN_ID/ in the bucket)")
    p.add_argument("--s3-endpoint", default=os.environ.get("REGIONCHAOS_S3_ENDPOINT"),
                   help="S3 endpoint URL [env REGIONCHAOS_S3_ENDPOINT]; default: boto3's (AWS_ENDPOINT_URL or AWS)")
    p.add_argument("--bucket", default=os.environ.get("REGIONCHAOS_BUCKET", "regionchaos"),
                   help="bucket holding runs/RUN_ID/ [env REGIONCHAOS_BUCKET]")
    p.add_argument("--no-docs", action="store_true", help="skip the GX Data Docs")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from regionchaos.judge.engine import judging_session
    from regionchaos.judge.policy import bad_input, infrastructure
    from regionchaos.runid import run_id_problem
    from regionchaos.runner import finish_stored
    from regionchaos.storage import ObjectStore, StorageConfig, StorageError

    if run_id_problem(args.run_id) is not None:  # never a prefix outside runs/RUN_ID/
        print(f"--run-id: {run_id_problem(args.run_id)}", file=sys.stderr)
        return bad_input(f"--run-id: {run_id_problem(args.run_id)}").exit_code
    config = StorageConfig(endpoint_url=args.s3_endpoint, bucket=args.bucket)
    try:
        store = ObjectStore.for_run(config, args.run_id)
        store.check_ready()
        if store.get_or_none("scenario.json") is None:  # spark_jobs/emulate.py writes it first
            print(f"nothing to validate: no run at {store.uri()} (no scenario.json)", file=sys.stderr)
            return bad_input(f"no run at {store.uri()}").exit_code
        spark = judging_session(f"regionchaos-validate-{args.run_id}")
        summary = finish_stored(config, args.run_id, spark=spark, docs=not args.no_docs)  # holds the run id's lease
    except ValueError as exc:  # a malformed run id
        print(f"bad input: {exc}", file=sys.stderr)
        return bad_input(str(exc)).exit_code
    except StorageError as exc:  # RunIdBusy included: another job holds the run id
        print(f"storage error: {exc}", file=sys.stderr)
        return infrastructure(str(exc)).exit_code
    print(json.dumps({"run_id": args.run_id, "verdict": summary["verdict"], "failed": summary["failed"],
                      "unknown": summary["unknown"], "report": summary["report"], "outcome": summary["outcome"]},
                     sort_keys=True))
    return summary["outcome"]["exit_code"]  # the policy's (`regionchaos.judge.policy`), as summary.json says


if __name__ == "__main__":
    sys.exit(main())
