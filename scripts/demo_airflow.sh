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
# The tasks print "regionchaos verdict: ...", "regionchaos report: ..." (see operators.py).
# (the last task repeats the verdict and the report's address: each line once)
grep '^regionchaos \(verdict\|failed invariants\|report\|report in Airflow\|report (local copy)\|replay\|warning\|note\|outcome\): ' "$log" \
  | awk '!seen[$0]++' || true
grep -m 1 -o '\(ParamValidationError\|AirflowFailException\): .*' "$log" || true
state="$(grep -o 'DagRun Finished: .*state=[a-z_]*' "$log" | tail -n 1 | sed 's/.*state=//' || true)"
echo "dag run: ${state:-not started} (airflow exit $status)"
[ "$status" -eq 0 ] && [ "$state" = success ]
