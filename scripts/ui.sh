#!/usr/bin/env bash
# One command for a local Airflow UI with regionchaos, on 127.0.0.1 only:
#   scripts/ui.sh [--port 8080] [--s3-port 9010]        (Ctrl-C stops everything it started)
# Starts, each as its own process, logs under $AIRFLOW_HOME/ui/:
#   - a local S3 server (scripts/local_s3.py: the embedded moto server, every object kept under
#     .runs/s3/, so runs survive restarts), bucket `regionchaos`;
#   - Airflow's api-server (UI and execution API on --port), scheduler, dag-processor and
#     triggerer, with the `regionchaos_s3` connection pointing at that S3: runs triggered from
#     the UI are listed under Browse > Chaos runs, their reports open there;
#   - the log server (Airflow's own app) on 127.0.0.1: the scheduler's and triggerer's built-in
#     ones bind every interface, so they are switched off (--skip-serve-logs).
# The port option also sets the tasks' execution API URL (scripts/airflow-env.sh).
# Login: user `admin`; the password is printed (SimpleAuthManager's generated file).
# Set everything up first with scripts/setup.sh (scripts/demo.sh does).
# Stopping: SIGTERM to each; what still runs after REGIONCHAOS_UI_STOP_GRACE_S (30) s is signalled
# again, then killed with everything it started (scripts/stop-children.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

port="${AIRFLOW__API__PORT:-8080}"
s3_port="${REGIONCHAOS_UI_S3_PORT:-9010}"
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port="$2"; shift 2 ;;
    --s3-port) s3_port="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ui.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
stop_grace="${REGIONCHAOS_UI_STOP_GRACE_S:-30}"
if ! [[ "$stop_grace" =~ ^[0-9]+$ ]]; then
  echo "ui.sh: REGIONCHAOS_UI_STOP_GRACE_S=$stop_grace: not a whole number of seconds" >&2
  exit 2
fi
export AIRFLOW__API__PORT="$port"
export AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://127.0.0.1:$port/execution/"
# shellcheck source=scripts/airflow-env.sh
source scripts/airflow-env.sh

root="$(pwd)"
runs_dir="${REGIONCHAOS_UI_RUNS_DIR:-$root/.runs}"
logs="$AIRFLOW_HOME/ui"
mkdir -p "$logs" "$runs_dir/s3"
log_port="${AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT:-8793}"
export AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT="$log_port"
# the embedded S3 accepts any credentials; these only sign the requests. No "prefix" (its default, runs, is
# meant): Airflow's secrets masker reads every value of a connection's extra, and warns in each task's log
# ("Skipping masking for a secret as it's too short") of one under 5 characters
export AIRFLOW_CONN_REGIONCHAOS_S3="{\"conn_type\": \"aws\", \"login\": \"regionchaos\", \"password\": \"regionchaos-local\", \"extra\": {\"endpoint_url\": \"http://127.0.0.1:$s3_port\", \"bucket\": \"regionchaos\"}}"
export REGIONCHAOS_LOCAL_DIR="$runs_dir"
# the same credentials for every process here (the plugin's runs view reads them from its own
# environment; tasks take them from the connection): only the local S3 ever sees them
export AWS_ACCESS_KEY_ID=regionchaos AWS_SECRET_ACCESS_KEY=regionchaos-local
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
unset AWS_PROFILE AWS_SESSION_TOKEN
# LocalExecutor starts one worker process per slot (Airflow's default: 32); each run holds a Spark
# session and runs take two slots at most (operators.LOCAL_RUNS_AT_ONCE): 4 fit a small machine
export AIRFLOW__CORE__PARALLELISM="${AIRFLOW__CORE__PARALLELISM:-4}"

pids=()
# shellcheck source=scripts/stop-children.sh
source scripts/stop-children.sh
stop() {  # SIGTERM to everything started here; again after a grace period, then SIGKILL (stop-children.sh)
  trap - EXIT INT TERM
  stop_children "$stop_grace" "${pids[@]}"
}
trap stop EXIT
trap 'exit 130' INT TERM

start() {  # start NAME COMMAND...: in the background, its output in $logs/NAME.log
  local name="$1"; shift
  "$@" >"$logs/$name.log" 2>&1 &
  pids+=("$!")
}

wait_for() {  # wait_for WHAT URL SECONDS: until URL answers 200 (or, for tcp://HOST:PORT, accepts)
  local i
  for ((i = 0; i < $3; i++)); do
    if python -c "
import socket, sys, urllib.parse, urllib.request
url = urllib.parse.urlsplit(sys.argv[1])
if url.scheme == 'tcp':
    socket.create_connection((url.hostname, url.port), timeout=2).close()
else:
    urllib.request.urlopen(sys.argv[1], timeout=2)
" "$2" 2>/dev/null; then
      return 0
    fi
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { echo "ui.sh: a process ended early; logs in $logs" >&2; tail -n 20 "$logs"/*.log >&2; exit 1; }
    done
    sleep 1
  done
  echo "ui.sh: $1 did not answer at $2 within $3 s; logs in $logs" >&2
  exit 1
}

start s3 python scripts/local_s3.py --dir "$runs_dir/s3" --port "$s3_port"
wait_for "the local S3 server" "tcp://127.0.0.1:$s3_port" 120
start api-server airflow api-server --host 127.0.0.1 --port "$port"
start scheduler airflow scheduler --skip-serve-logs
start dag-processor airflow dag-processor
start triggerer airflow triggerer --skip-serve-logs
start log-server python -m uvicorn airflow.utils.serve_logs.log_server:get_app --factory \
  --host 127.0.0.1 --port "$log_port" --no-access-log --log-level warning
wait_for "the api-server" "http://127.0.0.1:$port/api/v2/monitor/health" 300

passwords="$AIRFLOW_HOME/simple_auth_manager_passwords.json.generated"
echo "Airflow UI:   http://127.0.0.1:$port   (user admin, password: $(python -c "import json, sys; print(json.load(open(sys.argv[1])).get('admin', '?'))" "$passwords" 2>/dev/null || echo "see $passwords"))"
echo "Chaos runs:   http://127.0.0.1:$port/plugin/chaos   (Browse > Chaos runs)"
echo "local S3:     http://127.0.0.1:$s3_port, objects under $runs_dir/s3"
echo "logs:         $logs/*.log       Ctrl-C stops everything"
wait -n "${pids[@]}" || true
echo "ui.sh: a process ended; stopping the rest (logs in $logs)" >&2
