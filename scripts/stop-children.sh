# shellcheck shell=bash
# Sourced by scripts/ui.sh: stop the processes a script started, without waiting forever.
#   stop_children GRACE_S PID...
# SIGTERM to each PID; if some still run after GRACE_S seconds, SIGTERM again (Airflow's scheduler
# waits for its LocalExecutor's workers on the first signal: "Signal again if you don't want to
# wait"; once, in the test suite, it waited over five minutes), and after 10 s more SIGKILL to what
# is left and to every process below it (deepest first: a killed parent's children would otherwise
# live on, orphaned), and waits until those have ended. Then reaps them. Says on stderr when it has to go
# further than the first signal.

_alive() {  # _alive PID...: is any of them still running (not a zombie)?
  local pid state
  for pid in "$@"; do
    state="$(ps -o stat= -p "$pid" 2>/dev/null || true)"
    [[ -n "$state" && "$state" != Z* ]] && return 0
  done
  return 1
}

_ended_within() {  # _ended_within SECONDS PID...: true when all have ended within SECONDS
  local seconds="$1" i; shift
  for ((i = 0; i < seconds * 4; i++)); do
    _alive "$@" || return 0
    sleep 0.25
  done
  ! _alive "$@"
}

_descendants() {  # _descendants PID: every process below PID, deepest first
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    _descendants "$child"
    echo "$child"
  done
}

stop_children() {
  local grace="$1" pid; shift
  [ $# -gt 0 ] || return 0
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  if ! _ended_within "$grace" "$@"; then
    echo "stop: still running after ${grace} s, signalling again" >&2
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
    if ! _ended_within 10 "$@"; then
      echo "stop: still running; killing them and everything they started" >&2
      local killed=() these
      for pid in "$@"; do
        _alive "$pid" || continue
        # shellcheck disable=SC2207  # one pid per word
        these=($(_descendants "$pid") "$pid")
        kill -KILL "${these[@]}" 2>/dev/null || true
        killed+=("${these[@]}")
      done
      # SIGKILL is delivered asynchronously: the processes below ours are not ours to reap, so wait until they are
      # gone (their new parent reaps them) before saying they are stopped
      _ended_within 5 "${killed[@]}" || echo "stop: still alive after SIGKILL: ${killed[*]}" >&2
    fi
  fi
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
