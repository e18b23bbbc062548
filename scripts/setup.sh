#!/usr/bin/env bash
# Set up everything regionchaos needs, from nothing, idempotently:
#   Java 17 or newer (for Spark), a Python 3.11 virtualenv in .venv with the pinned
#   dependency set (requirements.lock), the package itself, and with --browser
#   Debian's Chromium for the browser tests, and the pinned Apache Flink distribution for the
#   real-Flink backend in its own folder .flink/FLINK_VERSION/ (353 MB, about 15 s;
#   --no-flink or REGIONCHAOS_FLINK=0 leaves it out). A second run does nothing.
#   On a fresh Debian it installs what is missing with apt (as root): a JRE, the venv
#   module of Python (python3.11-venv), Chromium. A half-made .venv (no python, a
#   broken one, another Python, no pip) is removed and made again.
# Usage: scripts/setup.sh [--browser] [--no-flink]     (PYTHON=/path/to/python3.11 to choose the Python)
set -euo pipefail

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

apt_install() {
  if [ "$(id -u)" != "0" ]; then
    echo "setup: need root to apt-get install $* (or install them yourself)" >&2
    exit 1
  fi
  if [ -z "${_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    _APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The major version of the `java` on PATH (0 if none): `-version` prints e.g.
# openjdk version "17.0.9" 2023-10-17 | java version "1.8.0_392" | openjdk version "21" 2023-09-19
java_major() {
  command -v java >/dev/null 2>&1 || { echo 0; return; }
  local v
  v=$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
  case "$v" in
    "") echo 0 ;;
    1.*) v=${v#1.}; echo "${v%%[!0-9]*}" ;;
    *) echo "${v%%[!0-9]*}" ;;
  esac
}

# `uv pip install ARGS` from uv's cache alone first (--offline: nothing fetched or revalidated; here every
# online install fetched pyspark's source distribution as a new revision and built it again, ~20 s), then,
# when the cache lacks something (a new machine, a changed lock), from the index. requirements.lock pins
# every package, so both pick the same versions.
uv_install() {
  .venv/bin/uv pip install -q --offline "$@" 2>/dev/null || .venv/bin/uv pip install -q "$@"
}

# A usable virtualenv: its python runs, is 3.11 and has pip
venv_ok() {
  [ -x .venv/bin/python ] && .venv/bin/python -c 'import sys, pip; sys.exit(sys.version_info[:2] != (3, 11))' >/dev/null 2>&1
}

if [ "${SETUP_LIB_ONLY:-}" = 1 ]; then return 0 2>/dev/null || exit 0; fi  # tests source the functions
cd "$(dirname "${BASH_SOURCE[0]}")/.."
want_browser=0; want_flink=${REGIONCHAOS_FLINK:-1}; flink_required=0
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=1 ;;
    --flink) want_flink=1; flink_required=1 ;;  # the default, but then a failed install is an error
    --no-flink) want_flink=0 ;;
    *) echo "setup: unknown option $arg (known: --browser, --no-flink)" >&2; exit 2 ;;
  esac
done

# 1. Java 17 or newer for Spark 4
java_found=$(java_major)
if [ "$java_found" -lt 17 ]; then
  if [ "$java_found" = 0 ]; then what="no java on PATH"; else what="Java $java_found at $(command -v java)"; fi
  if [ "$(id -u)" != "0" ]; then
    echo "setup: Spark needs Java 17 or newer, found $what; install openjdk-17-jre-headless (as root) or put a newer java first on PATH" >&2
    exit 1
  fi
  say "installing Java 17 (openjdk-17-jre-headless): found $what"
  apt_install openjdk-17-jre-headless
  java_found=$(java_major)
  if [ "$java_found" -lt 17 ]; then
    echo "setup: installed openjdk-17-jre-headless but \`java\` on PATH is still Java $java_found; put /usr/lib/jvm/java-17-openjdk-*/bin first on PATH or run update-alternatives --config java" >&2
    exit 1
  fi
fi

# 2. Python virtualenv with the pinned set
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      PY=$candidate; break
    fi
  done
fi
if [ -z "$PY" ]; then
  echo "setup: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
stamp=.venv/.regionchaos-installed
want=$(cat pyproject.toml requirements.lock | sha256sum | cut -c1-16)
if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  say "$PY has no venv/ensurepip module: installing python3.11-venv"
  apt_install python3.11-venv || apt_install python3-venv
  if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "setup: $PY still has no venv/ensurepip after installing python3.11-venv; set PYTHON to a Python 3.11 with venv" >&2
    exit 1
  fi
fi
if [ -e .venv ] && ! venv_ok; then
  say "removing a half-made .venv (no working Python 3.11 with pip in it)"
  rm -rf .venv
fi
if [ ! -e .venv ]; then
  say "creating .venv with $PY"
  if ! "$PY" -m venv .venv || ! venv_ok; then
    rm -rf .venv
    echo "setup: could not create a virtualenv with $PY (removed the half-made .venv; run again once fixed)" >&2
    exit 1
  fi
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing Python dependencies (pinned in requirements.lock; first time takes a minute or two)"
  # uv (pinned in the lock too) fetches, installs and compiles the set in parallel: 47 s here with its
  # cache warm, against 69 s for pip with pip's cache warm. Bytecode is compiled now, as pip does:
  # under PYTHONDONTWRITEBYTECODE (set on the machines here) nothing would cache it later, and every
  # process (Airflow's task runners, Spark's Python workers) would compile its imports again.
  # Where uv cannot be had, pip does the same job.
  if .venv/bin/python -m pip install -q -c requirements.lock uv && [ -x .venv/bin/uv ]; then
    uv_install --compile-bytecode --python .venv/bin/python -c requirements.lock -e '.[dev]'
    uv_installed=1
  else
    say "uv could not be installed; installing with pip"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -c requirements.lock -e '.[dev]'
  fi
  echo "$want" > "$stamp"
fi

# 3. Chromium for the browser tests (Debian's; Playwright's own download does not work here)
if [ "$want_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian chromium + chromium-driver"
  apt_install chromium chromium-driver
fi
# 4. The pinned Apache Flink distribution, unless --no-flink, and only when missing.
#    --no-deps --target: the wheel carries a full distribution (pyflink/bin, pyflink/lib) and the
#    scripts need only bash and Java; its Python pins (py4j, pyarrow, numpy, protobuf) clash with
#    requirements.lock, so nothing of it goes into .venv. regionchaos.flink.dist finds it there.
FLINK_VERSION=2.3.0
flink_dir=.flink/$FLINK_VERSION
if [ "$want_flink" = 1 ] && [ ! -x "$flink_dir/pyflink/bin/flink" ]; then
  say "installing Apache Flink $FLINK_VERSION into $flink_dir (353 MB, about 15 s)"
  rm -rf "$flink_dir.partial"
  if [ -x .venv/bin/uv ]; then  # uv: about 1 s from its cache against 3 s for pip
    installer=(uv_install --no-deps --python .venv/bin/python)
  else
    installer=(.venv/bin/python -m pip install -q --no-deps)
  fi
  "${installer[@]}" --target "$flink_dir.partial" "apache-flink==$FLINK_VERSION" \
    "apache-flink-libraries==$FLINK_VERSION" || true
  if [ -x "$flink_dir.partial/pyflink/bin/flink" ]; then
    rm -rf "$flink_dir" && mv "$flink_dir.partial" "$flink_dir"
  else
    rm -rf "$flink_dir.partial"
    echo "setup: apache-flink $FLINK_VERSION could not be installed into $flink_dir (no pyflink/bin/flink)" >&2
    # asked for with --flink: an error; by default the rest still works (the real-Flink scenarios and
    # tests say there is no distribution, and a later run of this script tries again)
    if [ "$flink_required" = 1 ]; then exit 1; fi
    echo "setup: going on without it: the real-Flink scenarios need it (run scripts/setup.sh again, or set FLINK_HOME)" >&2
  fi
fi
# 5. uv's cache keeps what it built before: pyspark ships only as a source distribution, and each
#    install from the index fetches it as a new revision and builds it again (19.6 s), leaving the old revision
#    (1.9 GB: the unpacked source and its build) behind. On a machine that sets the project up from
#    fresh clones (CI, the benches) that filled a 252 GB disk. `uv cache prune` removes only entries
#    nothing refers to any more (63 GiB here, 21 s; about 1 s for one revision).
if [ "${uv_installed:-0}" = 1 ]; then
  .venv/bin/uv cache prune -q || echo "setup: \`uv cache prune\` failed; the set-up itself is done" >&2
fi
say "ready: $(.venv/bin/python --version), $(java -version 2>&1 | head -1)"
