# Source me: a local Airflow for regionchaos (SQLite metadata, this repo's DAGs and plugin).
#   source scripts/airflow-env.sh            # env + `airflow db migrate` when needed
#   REGIONCHAOS_AIRFLOW_HOME=/tmp/af source scripts/airflow-env.sh   # another home
# Sets AIRFLOW_HOME (default: <repo>/.airflow), the DAGs and plugins folders, no examples,
# the API bound to 127.0.0.1 on AIRFLOW__API__PORT (default 8080) and the tasks' execution API
# URL on that same port (unless AIRFLOW__CORE__EXECUTION_API_SERVER_URL is set), and puts the
# project's venv first on PATH. The UI itself: scripts/ui.sh.

_rc_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REGIONCHAOS_ROOT="$_rc_root"
export AIRFLOW_HOME="${REGIONCHAOS_AIRFLOW_HOME:-$_rc_root/.airflow}"
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="sqlite:///$AIRFLOW_HOME/airflow.db"
export AIRFLOW__CORE__DAGS_FOLDER="$_rc_root/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$_rc_root/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__EXECUTOR="${AIRFLOW__CORE__EXECUTOR:-LocalExecutor}"
export AIRFLOW__API__HOST=127.0.0.1
export AIRFLOW__API__PORT="${AIRFLOW__API__PORT:-8080}"
# Tasks reach the api-server's execution API here (Airflow's own default is port 8080 whatever
# the API's port). A URL set by hand is kept; one derived by an earlier source follows the port.
if [ -z "${AIRFLOW__CORE__EXECUTION_API_SERVER_URL:-}" ] || \
   [ "$AIRFLOW__CORE__EXECUTION_API_SERVER_URL" = "${REGIONCHAOS_DERIVED_EXECUTION_API_URL:-}" ]; then
  export AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://127.0.0.1:$AIRFLOW__API__PORT/execution/"
  export REGIONCHAOS_DERIVED_EXECUTION_API_URL="$AIRFLOW__CORE__EXECUTION_API_SERVER_URL"
fi
if [ -x "$_rc_root/.venv/bin/airflow" ]; then
  export PATH="$_rc_root/.venv/bin:$PATH"
fi
mkdir -p "$AIRFLOW_HOME"

# Migrate when the database is new or was made by another Airflow version.
_rc_stamp="$AIRFLOW_HOME/.migrated-by"
_rc_version="$(python -c 'import importlib.metadata as m; print(m.version("apache-airflow"))' 2>/dev/null)"
if [ "${REGIONCHAOS_SKIP_MIGRATE:-0}" != 1 ] && \
   { [ ! -f "$AIRFLOW_HOME/airflow.db" ] || [ "$(cat "$_rc_stamp" 2>/dev/null)" != "$_rc_version" ]; }; then
  echo "airflow-env: airflow db migrate ($AIRFLOW_HOME)" >&2
  if airflow db migrate >"$AIRFLOW_HOME/migrate.log" 2>&1; then
    echo "$_rc_version" >"$_rc_stamp"
  else
    echo "airflow-env: airflow db migrate failed, see $AIRFLOW_HOME/migrate.log" >&2
    tail -n 20 "$AIRFLOW_HOME/migrate.log" >&2
    return 1 2>/dev/null || exit 1
  fi
fi
unset _rc_root _rc_stamp _rc_version
