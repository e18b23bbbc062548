#!/usr/bin/env bash
# The manual chaos DAG end to end through Airflow: SQLite metadata, embedded S3, local Spark.
#   scripts/demo_airflow.sh [CONF_JSON]      (default conf: {"scenario": "smoke"})
# Prints the verdict and the report location. Exits 0 when the DAG run succeeded (the run is
# as its scenario expects: valid, or showing a recorded finding); non-zero when it failed (an
# invalid run such as a caught mutant, whose failure message names the failed invariants; an
# unknown verdict) or the conf was refused (the refusal is printed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/airflow-env.sh
source scripts/airflow-env.sh
default_conf='{"scenario": "smoke"}'
conf="${1:-$default_conf}"
log="$AIRFLOW_HOME/demo_airflow.log"
echo "airflow dags test regionchaos_manual --conf '$conf'   (log: $log)"
status=0
airflow dags test regionchaos_manual --conf "$conf" >"$log" 2>&1 || status=$?
exec bash scripts/dag-test-summary.sh "$log" "$status"
