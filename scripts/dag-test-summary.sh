#!/usr/bin/env bash
# What a person reads of an `airflow dags test` log, and the run's outcome as an exit code.
#   scripts/dag-test-summary.sh LOG AIRFLOW_EXIT
# Prints the tasks' verdict lines ("regionchaos verdict: ...", "regionchaos report: ...": log records of
# operators.account, shown without the time, level and logger around them) and warnings, each line once; a
# refused conf (ParamValidationError, AirflowFailException); a judged run's failure line, "Task exited" with
# the verdict as its exit_code (operators.RunFailed); then "dag run: STATE (airflow exit N)". Exits 0 only when
# airflow exited 0 and the DAG run succeeded.
set -uo pipefail
log="$1"
status="$2"
sed -n -E -e 's/^[^ ]+ \[[a-z]+ *\] (regionchaos (verdict|failed invariants|report|report in Airflow|report \(local copy\)|replay|note|outcome|skipped): .*[^ ]) +\[regionchaos_airflow\.operators\] .*$/\1/p' \
  -e '/^regionchaos warning: /p' "$log" | awk '!seen[$0]++'
grep -m 1 -o '\(ParamValidationError\|AirflowFailException\): .*' "$log"
sed -n "s/.*Task exited .* exit_code=[\"']\(.*\)[\"'] loc=.*/task failed: \1/p" "$log" | head -n 1
state="$(grep -o 'DagRun Finished: .*state=[a-z_]*' "$log" | tail -n 1 | sed 's/.*state=//')"
echo "dag run: ${state:-not started} (airflow exit $status)"
[ "$status" -eq 0 ] && [ "$state" = success ]
