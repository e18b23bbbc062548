#!/usr/bin/env bash
# Set up everything regionchaos needs, from nothing, idempotently:
#   Java 17 (for Spark), a Python 3.11 virtualenv in .venv with the pinned
#   dependency set (requirements.lock), the package itself, and with --browser
#   Debian's Chromium for the browser tests. A second run does nothing.
# Usage: scripts/setup.sh [--browser]
set -euo pipefail
cd "$(dirname "$0")/.."

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

# 1. Java for Spark
if ! command -v java >/dev/null 2>&1; then
  say "installing Java 17 (openjdk-17-jre-headless)"
  apt_install openjdk-17-jre-headless
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
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $PY"
  "$PY" -m venv .venv
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing Python dependencies (pinned in requirements.lock; first time takes a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -c requirements.lock -e '.[dev]'
  echo "$want" > "$stamp"
fi

# 3. Chromium for the browser tests (Debian's; Playwright's own download does not work here)
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian chromium + chromium-driver"
  apt_install chromium chromium-driver
fi
say "ready: $(.venv/bin/python --version), $(java -version 2>&1 | head -1)"
