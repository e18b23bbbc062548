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
# The tasks log "regionchaos verdict: ...", "regionchaos report: ..." (operators.account: log records here,
# shown without the time, level and logger around them) and print warnings; each line once
sed -n -E -e 's/^[^ ]+ \[[a-z]+ *\] (regionchaos (verdict|failed invariants|report|report in Airflow|report \(local copy\)|replay|note|outcome|skipped): .*[^ ]) +\[regionchaos_airflow\.operators\] .*$/\1/p' \
  -e '/^regionchaos warning: /p' "$log" | awk '!seen[$0]++' || true
grep -m 1 -o '\(ParamValidationError\|AirflowFailException\): .*' "$log" || true
# a judged run's failure is one line, "Task exited" with the verdict as its exit_code (operators.RunFailed)
sed -n "s/.*Task exited .* exit_code=[\"']\(.*\)[\"'] loc=.*/task failed: \1/p" "$log" | head -n 1
state="$(grep -o 'DagRun Finished: .*state=[a-z_]*' "$log" | tail -n 1 | sed 's/.*state=//' || true)"
echo "dag run: ${state:-not started} (airflow exit $status)"
[ "$status" -eq 0 ] && [ "$state" = success ]
