#!/usr/bin/env bash
# Set everything up, then run the tests on two workers.
#   scripts/test.sh [pytest args...]          the whole suite (the set-up includes Debian's Chromium for the
#                                             browser tests), e.g. scripts/test.sh -n 0 tests/test_x.py
#   scripts/test.sh --fast [pytest args...]   the fast lane: every test that starts no Spark, Airflow, Spark
#                                             cluster, Flink or Chromium and is not marked slow
#                                             (tests/conftest_heavy.py); no Chromium needed
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ " $* " == *" --fast "* ]]; then
  bash scripts/setup.sh
else
  bash scripts/setup.sh --browser
fi
mkdir -p artifacts
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
