"""scripts/stop-children.sh, which scripts/ui.sh stops what it started with: processes that end on
SIGTERM end without more; one that waits for a second signal (as Airflow's scheduler does for its
executor's workers) gets it; one that ignores SIGTERM is killed, with the process it started. Real
processes, no Airflow (tests/test_airflow_browser.py stops the real UI)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# each background process writes its pid (and the stubborn one its child's) to $PIDS
SCRIPT = r"""
set -euo pipefail
source scripts/stop-children.sh
pids=()
sleep 1000 & pids+=("$!"); echo "$!" >> "$PIDS"
if [ "$MODE" = hard ]; then
  # waits for a second SIGTERM (Airflow's scheduler: "Signal again if you don't want to wait")
  bash -c 'n=0; trap "n=\$((n + 1)); [ \$n -ge 2 ] && exit 0" TERM; while :; do sleep 0.1; done' &
  pids+=("$!"); echo "$!" >> "$PIDS"
  # ignores SIGTERM, and so does the process it starts (an ignored signal stays ignored across exec)
  bash -c 'trap "" TERM; sleep 1000 & echo "$!" >> "$PIDS"; wait' &
  pids+=("$!"); echo "$!" >> "$PIDS"
fi
sleep 0.5
stop_children 1 "${pids[@]}"
echo stopped
"""


def run(mode: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, list[int], float]:
    pids = tmp_path / "pids"
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", SCRIPT], cwd=ROOT, env={**os.environ, "MODE": mode, "PIDS": str(pids)},
                          capture_output=True, text=True, timeout=120)
    return done, [int(p) for p in pids.read_text().split()], time.monotonic() - started


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_processes_that_end_on_sigterm_are_stopped_without_more(tmp_path):
    done, pids, _ = run("easy", tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "stopped", done.stderr
    assert len(pids) == 1 and not running(pids[0])
    assert "stop:" not in done.stderr  # no second signal, nothing killed


@pytest.mark.slow
def test_a_second_signal_then_a_kill_of_what_is_left_and_of_its_children(tmp_path):
    done, pids, seconds = run("hard", tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "stopped", done.stderr
    assert len(pids) == 4, pids  # sleep, the one that waits for a second signal, the stubborn one and its child
    assert [p for p in pids if running(p)] == []
    assert "still running after 1 s, signalling again" in done.stderr
    assert "killing them and everything they started" in done.stderr
    assert seconds < 60  # bounded: 1 s of grace, 10 s after the second signal
