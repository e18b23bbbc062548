#!/bin/sh
# Entrypoint wrapper of every Spark process of docker-compose.yml (the master, the workers, and the
# Airflow scheduler, where spark-submit's driver runs): writes $SPARK_CONF_DIR/spark-defaults.conf
# with spark.authenticate on and the shared secret, then execs the command it was given.
#
# In:  SPARK_CONF_DIR (a writable directory, a tmpfs in the stack), SPARK_AUTHENTICATE_SECRET (from
#      .env, at least 32 characters), the command and its arguments.
# Out: spark-defaults.conf (mode 600) and the command, run with SPARK_AUTHENTICATE_SECRET removed
#      from its environment (Spark reads the secret from the file; executors get it from their worker).
#
# The secret is written with printf, a shell builtin: it never appears on a command line (`ps`).
# Spark reads $SPARK_CONF_DIR/spark-defaults.conf in spark-submit (and pyspark), in the Master and
# in the Worker: one file for every role.
set -eu

fail() {
  echo "spark-conf: $*" >&2
  exit 2
}

[ $# -gt 0 ] || fail "no command to run"
[ -n "${SPARK_CONF_DIR:-}" ] || fail "SPARK_CONF_DIR is not set"
secret=${SPARK_AUTHENTICATE_SECRET:-}
[ -n "$secret" ] || fail "SPARK_AUTHENTICATE_SECRET is not set (run scripts/compose-env.sh)"
[ "${#secret}" -ge 32 ] || fail "SPARK_AUTHENTICATE_SECRET is shorter than 32 characters"
case $secret in
  *[!A-Za-z0-9_-]*) fail "SPARK_AUTHENTICATE_SECRET may hold only A-Z a-z 0-9 _ - (scripts/compose-env.sh makes one)" ;;
esac

umask 077
mkdir -p "$SPARK_CONF_DIR"
conf=$SPARK_CONF_DIR/spark-defaults.conf
{
  printf '%s\n' "# Written by docker/spark-conf.sh at container start; not kept on disk (tmpfs)."
  printf '%s\n' "spark.authenticate true"
  printf 'spark.authenticate.secret %s\n' "$secret"
  # the master's REST submission server would accept unauthenticated submissions: keep it off
  printf '%s\n' "spark.master.rest.enabled false"
  # the web UIs have no login: no kill links in them
  printf '%s\n' "spark.ui.killEnabled false"
  # workers: remove finished applications' work directories (a tmpfs)
  printf '%s\n' "spark.worker.cleanup.enabled true"
  # the driver's SQL warehouse in the writable scratch, not in the read-only working directory
  printf '%s\n' "spark.sql.warehouse.dir /tmp/spark-warehouse"
} > "$conf"
unset SPARK_AUTHENTICATE_SECRET secret
exec "$@"
