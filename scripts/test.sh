#!/usr/bin/env bash
# Set everything up (including Debian's Chromium for the browser tests), then run the tests.
#   scripts/test.sh [pytest args...]        e.g. scripts/test.sh -m "not browser"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser
mkdir -p artifacts
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
