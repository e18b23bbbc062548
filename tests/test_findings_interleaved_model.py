"""Findings F12-F19, the interleavings behind them, read from the raw artifacts of in-memory runs (no Spark).

In:  the findings' own catalogue scenarios (`pr-abort-completes-regional` F12, `pr-late-ack-completes-global`
     F13, `concurrent-fallback-skips-newer` F14, `pr-split-assigned-before-fallback` F15,
     `pr-gateway-stays-closed` F16, `pr-store-failure-leaks-slot` F17, `concurrent-regional-past-bound` F18,
     `pr-final-flag-forces-older` F19), each on
     its pinned schedule, emulated into an in-memory store (`tests.memrun`) under ``semantics: pr`` and ``flip``.
Out: what each schedule leaves on storage under each semantics, read from the objects a run writes (the
     sink's commit files, the history objects and the checkpoint metadata copies they hold): the PR shows the
     finding's mechanism, the FLIP does not (F14 and F18: both do; the FLIP is silent on which checkpoint a region
     falls back to, and when the counter is read and counted, while several are pending). The judged runs, their mechanism queries and the tampered
     copies they do not excuse are in tests/test_findings_interleaved.py.
"""

from __future__ import annotations

import json

import pytest

from regionchaos import history
from regionchaos.scenario import load
from regionchaos.workload.dataflow import PROCESS_OPERATORS, SOURCE_OPERATORS
from tests import memrun

PR, FLIP = "pr", "flip"


def _run(name: str, semantics: str) -> tuple[list[dict], list[dict]]:
    """(the history read back from the store's history objects, the sink's commits in commit order, each with
    the commit file it is in as ``file``)."""
    sc = load(name, {"flink.execution.checkpointing.region.semantics": semantics})
    _, store = memrun.emulate(sc)
    keys = [k for k in store.list_keys(history.PREFIX) if history.is_history_key(k)]
    commits = [{**c, "file": key} for key in store.list_keys("sink/commits/") for c in json.loads(store.get(key))]
    return history.decode(store.get(k) for k in sorted(keys)), commits


def _metadata(events: list[dict], checkpoint_id: int) -> dict:
    return next(e["metadata"] for e in events if e["kind"] == "checkpoint_completed" and e["checkpoint_id"] == checkpoint_id)


def _entries(meta: dict, operator: str | None = None) -> list[dict]:
    return [en for en in meta["operatorSubtaskStates"] if operator is None or en["operator"] == operator]


def _overlaps(commits: list[dict]) -> list[tuple[dict, dict]]:
    return [(a, b) for i, a in enumerate(commits) for b in commits[i + 1:]
            if a["split"] == b["split"] and a["start"] < b["end"] and b["start"] < a["end"]]


def _status(events: list[dict], checkpoint_id: int) -> str:
    return next(e["status"] for e in events if e["kind"] == "checkpoint_decided" and e["checkpoint_id"] == checkpoint_id)


# -- F12: an abort notification completes the latest checkpoint on a failed region's sink ---------------------


def test_f12_pr_failed_region_sink_commits_the_regional_transaction_on_an_abort_notification():
    """Checkpoint 2 is REGIONAL with region 1 failed; checkpoint 3 is aborted (failure ratio). Its abort
    notification carries 2 as the latest completed checkpoint, and sink 1, told only the fallback for 2, completes
    2 first: it commits the transaction it pre-committed for 2, though 2's sink entry for it is checkpoint 1's.
    The job fails (tolerable 0), restores region 1 from 2, that is from 1's state: the records come again."""
    events, commits = _run("pr-abort-completes-regional", PR)
    assert _status(events, 2) == "REGIONAL" and _status(events, 3) == "ABORTED"
    sink1 = [en for en in _entries(_metadata(events, 2), "sink") if en["subtask"] == 1]
    assert [en["refCheckpointId"] for en in sink1] == [1]
    aborts = {e["commit_file"] for e in events if e["kind"] == "notified" and e.get("aborted") == 3
              and e["checkpoint_id"] == 2 and 1 in e["subtasks"]}
    early = [c for c in commits if c["subtask"] == 1 and c["txn_checkpoint_id"] == 2 and c["notified_checkpoint_id"] == 2]
    assert early and all(c["cause"] == "notify" for c in early)
    assert {c["file"] for c in early} <= aborts
    assert any(c in pair for pair in _overlaps(commits) for c in early)


def test_f12_flip_failed_region_commits_nothing_on_the_abort():
    """The same schedule under the FLIP: an aborted checkpoint notifies nothing, sink 1 never commits checkpoint 2's
    transaction, and the restore commits nothing twice."""
    events, commits = _run("pr-abort-completes-regional", FLIP)
    assert _status(events, 2) == "REGIONAL" and _status(events, 3) == "ABORTED"
    assert not [e for e in events if e["kind"] == "notified" and "aborted" in e]
    assert not [c for c in commits if c["subtask"] == 1 and c["notified_checkpoint_id"] == 2]
    assert not _overlaps(commits)


# -- F13: a late ack during the region fallback completes the checkpoint GLOBAL with grafted entries left -----


def test_f13_pr_late_ack_completes_global_with_the_graft_of_the_other_tasks():
    """Source 1 is silent at checkpoint 2's timeout: the canceller marks it declined, the REGIONAL decision grafts
    region 1's entries from checkpoint 1 and asks for the region fallback (15 s). Source 1's ack arrives first and
    still succeeds: every task acknowledged, 2 completes GLOBAL with its fresh source 1 entry and process 1's
    grafted entries (referencing 1); sink 1 is told 2 completed and commits 2's transaction."""
    events, commits = _run("pr-late-ack-completes-global", PR)
    requested = [e for e in events if e["kind"] == "fallback_requested" and e["checkpoint_id"] == 2]
    assert requested and requested[0]["failed_regions"] == [1]
    assert _status(events, 2) == "GLOBAL"
    meta = _metadata(events, 2)
    assert meta["type"] == "GLOBAL"
    refs = {(en["operator"], en["subtask"]): en["refCheckpointId"] for en in _entries(meta)}
    # the process task's operators keep the graft; the late ack overwrote its own (the source task's operators)
    assert {k: ref for k, ref in refs.items() if ref is not None} == {(op, 1): 1 for op in PROCESS_OPERATORS}
    assert all(refs[(op, 1)] is None for op in SOURCE_OPERATORS)
    late = next(e for e in events if e["kind"] == "task_responses" and e["checkpoint_id"] == 2)["tasks"]
    timeout_ms = load("pr-late-ack-completes-global").flink.timeout_ms
    assert [t[:2] for t in late if t[2] == "ack" and t[3] > timeout_ms] == [["source", 1]]
    assert [c for c in commits if c["subtask"] == 1 and c["notified_checkpoint_id"] == 2 and c["txn_checkpoint_id"] == 2]


def test_f13_flip_silent_task_fails_its_region_and_the_late_ack_is_late():
    """Under the FLIP the silent task's region fails at the deadline and its late ack is discarded: checkpoint 2
    completes REGIONAL, every entry of region 1 referencing 1, and sink 1 commits nothing upon 2."""
    events, commits = _run("pr-late-ack-completes-global", FLIP)
    assert _status(events, 2) == "REGIONAL"
    meta = _metadata(events, 2)
    assert {en["refCheckpointId"] for en in _entries(meta) if en["subtask"] == 1} == {1}
    assert {en["refCheckpointId"] for en in _entries(meta) if en["subtask"] != 1} == {None}
    assert not [c for c in commits if c["subtask"] == 1 and c["notified_checkpoint_id"] == 2]


# -- F14: a REGIONAL decision grafts from the latest checkpoint at the decision -------------------------------


@pytest.mark.parametrize("semantics", [FLIP, PR])
def test_f14_older_checkpoint_completing_during_the_fallback_is_skipped(semantics):
    """Checkpoints 2 (region 1 fails) and 3 (region 0 fails) are both decided REGIONAL while 1 is the latest
    completed one; 2 completes first, with region 0 fresh, and sink 0 commits 2's transaction. 3 completes after,
    its region 0 grafted from 1 at its decision. The region failover of region 0 restores from 3, that is from 1's
    state: its source reads again what sink 0 committed upon 2. The same under both semantics."""
    events, commits = _run("concurrent-fallback-skips-newer", semantics)
    first = {e["checkpoint_id"]: e["seq"] for e in reversed(events) if e["kind"] == "fallback_requested"}
    done = {e["checkpoint_id"]: e["seq"] for e in events if e["kind"] == "checkpoint_completed"}
    assert first[3] < done[2] < done[3] and _status(events, 2) == _status(events, 3) == "REGIONAL"
    two, three = _metadata(events, 2), _metadata(events, 3)
    assert {en["refCheckpointId"] for en in _entries(two) if en["subtask"] == 0} == {None}
    assert {en["refCheckpointId"] for en in _entries(three) if en["subtask"] == 0} == {1}
    restore = next(e for e in events if e["kind"] == "region_failover")
    assert (restore["region"], restore["restore_from"]) == (0, 3)
    upon_two = [c for c in commits if c["subtask"] == 0 and c["notified_checkpoint_id"] == 2]
    assert upon_two and any(c in pair for pair in _overlaps(commits) for c in upon_two)


# -- F15: a split assigned before the region fallback is in no part of the checkpoint -------------------------


def _held_by_sources(meta: dict) -> set[int]:
    return {s for en in _entries(meta, "source") for h in en["handles"] for s in h[3]}


@pytest.mark.parametrize("semantics", [PR, FLIP])
def test_f15_split_assigned_while_the_checkpoint_is_pending(semantics):
    """Split 4 is discovered and assigned to source 0 (healthy) after checkpoint 2's trigger, before its region
    fallback (source 1 declined). Source 0's entry of 2 is its ack, taken at the trigger: it does not hold split 4.
    PR: the fallback state is the live enumerator's, in which split 4 is assigned: 2's coordinator state has it
    neither unassigned, and no entry holds it (lost on a global restore from 2). FLIP: the region-fallback state
    describes 2's mixed view, in which nobody holds split 4: it is unassigned."""
    events, _ = _run("pr-split-assigned-before-fallback", semantics)
    trigger = next(e["seq"] for e in events if e["kind"] == "checkpoint_triggered" and e["checkpoint_id"] == 2)
    served = next(e["seq"] for e in events if e["kind"] == "fallback_completed" and e["checkpoint_id"] == 2)
    assigned = [e for e in events if e["kind"] == "split_assigned" and e["split"] == 4]
    assert [(e["subtask"], trigger < e["seq"] < served) for e in assigned] == [(0, True)]
    meta = _metadata(events, 2)
    assert meta["type"] == "REGIONAL" and 4 in meta["coordinatorState"]["discovered"]
    assert 4 not in _held_by_sources(meta)
    assert (4 in meta["coordinatorState"]["unassigned"]) == (semantics == FLIP)


# -- F16: the gateway of a source that declined before its snapshot stays closed ------------------------------


@pytest.mark.parametrize("semantics", [PR, FLIP])
def test_f16_split_assigned_to_a_reader_that_declined_before_its_snapshot(semantics):
    """Source 3 declines checkpoint 2 (REGIONAL, region 3 failed); split 3, discovered after, goes to source 3, the
    least loaded. PR: the failed region's coordinator is told notifyRegionalCheckpointFallback, which leaves the
    gateway closed for 2: the assignment is held for good (the run ends without a restart of region 3) and no
    later checkpoint's source entry holds the split. FLIP: the reader gets it."""
    events, _ = _run("pr-gateway-stays-closed", semantics)
    assert _status(events, 2) == "REGIONAL"
    held = [e for e in events if e["kind"] == "split_held" and e["split"] == 3]
    delivered = [e for e in events if e["kind"] == "split_assigned" and e["split"] == 3]
    last = max(e["checkpoint_id"] for e in events if e["kind"] == "checkpoint_completed")
    if semantics == PR:
        assert [(e["subtask"], e["closed_for"]) for e in held] == [(3, [2])] and not delivered
        assert 3 not in _held_by_sources(_metadata(events, last))
    else:
        assert not held and [e["subtask"] for e in delivered] == [3]
        assert 3 in _held_by_sources(_metadata(events, last))


# -- F17: a REGIONAL checkpoint the store refuses holds its slot for good ---------------------------------------


@pytest.mark.parametrize("semantics", [PR, FLIP])
def test_f17_a_refused_regional_checkpoint_holds_the_one_slot(semantics):
    """Checkpoint 2 (source 0 declined: REGIONAL) is refused by the completed checkpoint store and aborted
    (FINALIZE_CHECKPOINT_FAILURE). PR: it stays in the pending table with the default max-concurrent-checkpoints 1,
    so no checkpoint is triggered after it and the run ends with checkpoint 1 the last completed. FLIP: the next
    checkpoints are triggered and the heal phase completes a GLOBAL one."""
    events, _ = _run("pr-store-failure-leaks-slot", semantics)
    refused = [e for e in events if e["kind"] == "store_failed"]
    assert [(e["checkpoint_id"], e["type"]) for e in refused] == [(2, "REGIONAL")]
    triggered_after = [e["checkpoint_id"] for e in events if e["kind"] == "checkpoint_triggered"
                       and e["seq"] > refused[0]["seq"]]
    completed = [(e["checkpoint_id"], e["type"]) for e in events if e["kind"] == "checkpoint_completed"]
    if semantics == PR:
        assert triggered_after == [] and completed == [(1, "GLOBAL")]
    else:
        assert triggered_after and completed[-1][1] == "GLOBAL" and completed[-1][0] > 2


# -- F18: a REGIONAL decision reads the counter before an older REGIONAL checkpoint counts ----------------------


@pytest.mark.parametrize("semantics", [PR, FLIP])
def test_f18_two_pending_regional_checkpoints_both_pass_the_bound(semantics):
    """max-consecutive-failures 1, two checkpoints pending, a 70 s region fallback: checkpoint 3 is decided
    (its first fallback request) while checkpoint 2's fallback still runs, reading a counter 2 has not yet
    incremented. Both complete REGIONAL in a row, past the bound of 1, under both semantics."""
    events, _ = _run("concurrent-regional-past-bound", semantics)
    completed = {e["checkpoint_id"]: (e["seq"], e["type"]) for e in events if e["kind"] == "checkpoint_completed"}
    decided = {}
    for e in events:
        if e["kind"] == "fallback_requested":
            decided.setdefault(e["checkpoint_id"], e["seq"])
    assert completed[2][1] == completed[3][1] == "REGIONAL"
    assert decided[3] < completed[2][0] < completed[3][0]
    counters = {e["checkpoint_id"]: e["counter_at_decision"] for e in events if e["kind"] == "checkpoint_decided"}
    assert counters[3] == 0


# -- F19: the final checkpoint's trigger forces an older pending checkpoint -----------------------------------------


@pytest.mark.parametrize("semantics", [PR, FLIP])
def test_f19_the_final_trigger_forces_the_older_pending_checkpoint(semantics):
    """Two checkpoints pending, TaskManager 1's state PUTs of checkpoints 3 and 4 slower than the timeout: 4 is
    triggered as the final one (every source exhausted) while 3 waits for its timeout. PR: 4's trigger set the one
    forced flag (checkAllSourcesFinishedAndForceGlobal), 3's decision reads it, and 3, not a final checkpoint, is
    aborted by tier 2 (forced-global-failed). FLIP: 3 is not forced, and completes REGIONAL with its two regions
    failed."""
    events, _ = _run("pr-final-flag-forces-older", semantics)
    triggered = {e["checkpoint_id"]: e for e in events if e["kind"] == "checkpoint_triggered"}
    decided = {e["checkpoint_id"]: e for e in events if e["kind"] == "checkpoint_decided"}
    assert not triggered[3]["final"] and triggered[4]["final"] and triggered[4]["seq"] < decided[3]["seq"]
    if semantics == PR:
        assert (decided[3]["status"], decided[3]["reason"], decided[3]["forced_global"]) == (
            "ABORTED", "forced-global-failed", True)
    else:
        assert (decided[3]["status"], decided[3]["forced_global"]) == ("REGIONAL", False)
