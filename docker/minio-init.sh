#!/bin/sh
# The minio-init service of docker-compose.yml: the bucket, two scoped users and their policies.
#
# In:  MC_HOST_local (http://ROOT_USER:ROOT_PASSWORD@minio:9000: mc reads the root credentials
#      from this variable, never from its command line), REGIONCHAOS_BUCKET, MINIO_AIRFLOW_USER /
#      MINIO_AIRFLOW_PASSWORD, MINIO_SPARK_USER / MINIO_SPARK_PASSWORD, the policy templates
#      docker/minio/policy-{airflow,spark}.json (@BUCKET@ -> the bucket), TMPDIR (writable).
# Out: the bucket (private), policies regionchaos-airflow and regionchaos-spark limited to it,
#      the two users with those policies attached. Idempotent: a second run changes nothing
#      but the users' secret keys (set again from the environment: how a rotation is applied).
#
# Secrets never reach a command line (`ps`): the users' secret keys go to `mc admin user add` on
# its standard input (mc reads the secret key from stdin when it is not an argument), with
# printf, a shell builtin. POSIX sh only: the mc image has a shell and coreutils, no sed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
work=${TMPDIR:-/tmp}/minio-init
alias_name=local

fail() {
  echo "minio-init: $*" >&2
  exit 2
}

need() {  # need NAME: the variable is set and not empty
  eval "value=\${$1:-}"
  [ -n "$value" ] || fail "$1 is not set (run scripts/compose-env.sh)"
}

for name in MC_HOST_local REGIONCHAOS_BUCKET MINIO_AIRFLOW_USER MINIO_AIRFLOW_PASSWORD MINIO_SPARK_USER MINIO_SPARK_PASSWORD; do
  need "$name"
done
bucket=$REGIONCHAOS_BUCKET
case $bucket in
  *[!a-z0-9.-]*) fail "REGIONCHAOS_BUCKET '$bucket' is not an S3 bucket name (a-z 0-9 . - only)" ;;
esac
[ "${#bucket}" -ge 3 ] && [ "${#bucket}" -le 63 ] || fail "REGIONCHAOS_BUCKET '$bucket' must be 3 to 63 characters"
for name in MINIO_AIRFLOW_USER MINIO_SPARK_USER; do
  eval "value=\$$name"
  case $value in
    *[!A-Za-z0-9_.-]*) fail "$name '$value' may hold only A-Z a-z 0-9 _ . -" ;;
  esac
done
[ "$MINIO_AIRFLOW_USER" != "$MINIO_SPARK_USER" ] || fail "MINIO_AIRFLOW_USER and MINIO_SPARK_USER must differ"

render() {  # render TEMPLATE OUT: each @BUCKET@ (at most one a line) -> the bucket
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in
      *@BUCKET@*) line="${line%%@BUCKET@*}$bucket${line#*@BUCKET@}" ;;
    esac
    printf '%s\n' "$line"
  done < "$1" > "$2"
}

user_with_policy() {  # user_with_policy USER PASSWORD POLICY
  printf '%s\n' "$2" | mc admin user add "$alias_name" "$1"
  if ! mc admin policy attach "$alias_name" "$3" --user "$1"; then
    # attaching a policy the user already has is refused ("no net effect"): that is success
    info=$(mc admin user info "$alias_name" "$1")
    case $info in
      *"$3"*) echo "minio-init: $1 already has policy $3" ;;
      *) fail "could not attach policy $3 to $1" ;;
    esac
  fi
}

mkdir -p "$work"
mc mb --ignore-existing "$alias_name/$bucket"
mc anonymous set none "$alias_name/$bucket"
for role in airflow spark; do
  render "$here/minio/policy-$role.json" "$work/policy-$role.json"
  mc admin policy create "$alias_name" "regionchaos-$role" "$work/policy-$role.json"
done
user_with_policy "$MINIO_AIRFLOW_USER" "$MINIO_AIRFLOW_PASSWORD" regionchaos-airflow
user_with_policy "$MINIO_SPARK_USER" "$MINIO_SPARK_PASSWORD" regionchaos-spark
mc ls "$alias_name"
echo "minio-init: bucket $bucket; users $MINIO_AIRFLOW_USER (regionchaos-airflow), $MINIO_SPARK_USER (regionchaos-spark)"
