"""A run's numbers as its tables tell them, for ``summary.json`` and the report.

In:  a run's tables as pandas frames (`regionchaos.tables.build_frames`, or the frames a deep run's
     intake kept: `regionchaos.judge.intake`).
Out: `run_stats(frames)` -> ``history_counts`` (the emulation's counts as its history tells them),
     ref-chain depth, staleness, the longest regional streak, completed / voided checkpoints, records
     in and committed, commits, checkpoints with readable state, bytes retained at the end and rows
     per table; `table_rows(frames)`: the rows of all tables.
"""

from __future__ import annotations

from ..history import Kind


def table_rows(frames: dict) -> int:
    return sum(len(f) for f in frames.values())


def _retained_bytes(inventory) -> int:
    """Bytes of checkpoint objects (state files, ``_metadata``) left in storage at the end of the
    run, from the final listing (the inventory): what retaining checkpoints costs."""
    if not len(inventory):
        return 0
    return int(inventory.loc[inventory["area"] == "checkpoints", "size_bytes"].fillna(0).sum())


def run_stats(frames: dict) -> dict:
    """Numbers for summary.json and the report, from the tables (pandas)."""
    cp = frames["checkpoints"]
    completed = cp[cp["completed"] == True]  # noqa: E712  (object column)
    commits = frames["commits"]
    tx = frames["transactions"]
    sv = frames["state_values"]

    def _max(series) -> int:
        s = series.dropna()
        return int(s.max()) if len(s) else 0

    streak = best = 0
    for status in completed.sort_values("checkpoint_id")["status"]:
        streak = streak + 1 if status == "REGIONAL" else 0
        best = max(best, streak)
    records_in = 0
    if len(tx):
        records_in = int(tx.groupby("split")["end"].max().sum())
    counter_readable = sv[(sv["operator"] == "counter") & (sv["found"] == True)]  # noqa: E712
    ev = frames["events"]
    kinds = ev["kind"].value_counts().to_dict() if len(ev) else {}
    restores = ev[ev["kind"] == Kind.GLOBAL_RESTORE] if len(ev) else ev
    history_counts = {  # the emulation's numbers as its history tells them (summary.json of the validate job)
        "triggered": int(kinds.get(Kind.CHECKPOINT_TRIGGERED, 0)),
        "global": int((cp["status"] == "GLOBAL").sum()), "regional": int((cp["status"] == "REGIONAL").sum()),
        "aborted": int((cp["status"] == "ABORTED").sum()),
        "region_failovers": int(kinds.get(Kind.REGION_FAILOVER, 0)),
        "jm_failovers": int(kinds.get(Kind.JOBMANAGER_FAILOVER, 0)),
        "rescales": int((restores["cause"] == "rescale").sum()) if len(restores) else 0,
        "global_restores": int(len(restores)),
        "finished": bool(kinds.get(Kind.JOB_FINISHED, 0)),
    }
    return {
        "history_counts": history_counts,
        "max_ref_chain_depth": _max(completed["ref_depth"]),
        "max_staleness": _max(completed["staleness"]),
        "max_consecutive_regional": best,
        "checkpoints_completed": int(len(completed)),
        "checkpoints_voided": int((cp["status"] == "VOIDED").sum()),
        "records_in_validated": records_in,
        "records_committed_validated": int((commits["end"] - commits["start"]).sum()) if len(commits) else 0,
        "commits": int(len(commits)),
        "checkpoints_with_readable_state": int(counter_readable["checkpoint_id"].nunique()),
        "retained_bytes_end": _retained_bytes(frames["inventory"]),
        "table_rows": {name: int(len(f)) for name, f in frames.items()},
    }
