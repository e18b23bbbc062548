"""spark-submit entry point: emulate one scenario into ``s3://BUCKET/runs/RUN_ID/``.

    spark-submit spark_jobs/emulate.py --scenario smoke --seed 1 \\
        --s3-endpoint http://127.0.0.1:9000 --run-id smoke-1 [--mutant NAME]

In:  a scenario (catalogue name or YAML path), seed, ``--set`` overrides, mutant, the S3
     endpoint and bucket (credentials: the standard AWS chain of the driver and executors).
Out: the run's emulation artifacts (docs/ARTIFACTS.md: ``scenario.json``, checkpoints,
     sink transactions and commits, history, HA counter) under the run prefix, cleared
     first so a re-run of a run id is idempotent, while holding the run id's lease
     (`regionchaos.storage.RunLease`: a second job of the same run id is refused, exit 3); one JSON line on stdout (run id, control
     plane stats, data plane stats). Validation and the report are separate jobs.
Exit codes (`regionchaos.judge.policy`): 0 emulated, 2 bad input, 3 infrastructure error.

The package is imported inside `main`, after the arguments are parsed: it imports boto3 and pyspark's
helpers, and ``--help`` answers without them.

Without ``--s3-endpoint`` an embedded S3 server runs inside this driver for the job's
duration (its objects vanish with it: for trying the job out). Also runs as plain
``python spark_jobs/emulate.py ...`` (a local Spark session, ``REGIONCHAOS_SPARK_MASTER``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

_CREDENTIAL_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="emulate.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", required=True, help="catalogue name or YAML path")
    p.add_argument("--seed", type=int, help="seed (default: the scenario's)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario field or Flink key; repeatable")
    p.add_argument("--mutant", help="a deliberately broken protocol variant")
    p.add_argument("--run-id", help="run id (default: derived from scenario, seed, mutant and settings)")
    p.add_argument("--s3-endpoint", default=os.environ.get("REGIONCHAOS_S3_ENDPOINT"),
                   help="S3 endpoint URL [env REGIONCHAOS_S3_ENDPOINT]; default: an embedded server")
    p.add_argument("--bucket", default=os.environ.get("REGIONCHAOS_BUCKET", "regionchaos"),
                   help="bucket holding runs/RUN_ID/ [env REGIONCHAOS_BUCKET]")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from regionchaos import runner
    from regionchaos.judge.policy import bad_input, done, infrastructure
    from regionchaos.run import parse_set
    from regionchaos.run.ids import check_run_id
    from regionchaos.scenario import ScenarioError, check_mutant, load, require_emulation
    from regionchaos.spark import get_spark
    from regionchaos.storage import ObjectStore, RunLease, StorageConfig, StorageError, ensure_storage

    try:
        overrides = parse_set(args.overrides)  # as `regionchaos run --set` reads them
        scenario = require_emulation(load(args.scenario, overrides, seed=args.seed), "spark_jobs/emulate.py")
        mutant = check_mutant(args.mutant)
        check_run_id(args.run_id or runner.default_run_id(scenario, mutant), "--run-id")  # one path segment
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return bad_input(str(exc)).exit_code
    run_id = args.run_id or runner.default_run_id(scenario, mutant)
    replay = runner.replay_line(args.scenario, scenario.seed, overrides, mutant)
    try:
        with ensure_storage(StorageConfig(endpoint_url=args.s3_endpoint, bucket=args.bucket)) as config:
            store = ObjectStore.for_run(config, run_id)
            store.check_ready()
            with RunLease(store, run_id):  # another run of this run id: refused (exit 3), nothing written
                spark = get_spark(f"regionchaos-emulate-{run_id}")
                if args.s3_endpoint is None:  # embedded: its dummy credentials must reach the Python workers
                    spark.sparkContext.environment.update({k: os.environ[k] for k in _CREDENTIAL_VARS
                                                           if k in os.environ})
                result, persistence = runner.start(store, scenario, run_id=run_id, mutant=mutant, replay=replay,
                                                   spark=spark)
            print(json.dumps({"run_id": run_id, "prefix": store.uri(), "events": len(result.events),
                              "stats": result.stats, "dataplane": persistence.stats,
                              "s3": store.stats.as_dict()}, sort_keys=True, default=str))
    except StorageError as exc:
        print(f"storage error: {exc}", file=sys.stderr)
        return infrastructure(str(exc)).exit_code
    return done(f"emulated {run_id}").exit_code


if __name__ == "__main__":
    sys.exit(main())
