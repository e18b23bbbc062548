#!/usr/bin/env bash
# The main job, from nothing: set everything up, then run the manual chaos DAG
# end to end through Airflow (SQLite metadata, embedded S3 server, local Spark)
# on the `smoke` scenario. Prints the verdict, the report location and the replay line.
#   scripts/demo.sh ['{"scenario": "rescale-4-2-1", "seed": 7}']
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec bash scripts/demo_airflow.sh "$@"
