"""The run's history: one event per protocol step, its kinds, and its one encoding.

In:  events as the control plane logs them (`event`), and the history objects a run left on
     storage (``history/events-BBBBB.jsonl``, one per JobManager life).
Out: `Kind`, every event kind there is; `event(...)`, an event dict; `encode(...)`, the bytes
     of one history object; `decode(...)`, the events of a run's history objects in order.

Who writes what: the emulator logs every kind but ``storage_fault``, which the data plane adds
for the storage faults that fired (`regionchaos.dataplane.fault_events`). Who reads it: the
tables the suites query (`regionchaos.tables`: the ``events`` table and the copies of
checkpoint metadata), the report's timeline, and the run's statistics. The suites' SQL names
kinds as string literals; tests/test_history.py holds every literal there to `Kind`.

An event is a plain dict ``{"seq", "attempt", "kind", ...fields}`` whose ``kind`` is the
kind's string value, so a history written before this module existed decodes the same.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from . import jsonform

PREFIX = "history/"


class Kind(StrEnum):
    RUN_STARTED = "run_started"
    RUN_FINISHED = "run_finished"
    HEAL_STARTED = "heal_started"
    SPLIT_ASSIGNED = "split_assigned"
    SPLITS_DISCOVERED = "splits_discovered"
    SOURCES_EXHAUSTED = "sources_exhausted"
    END_OF_INPUT_REVOKED = "end_of_input_revoked"
    CHECKPOINT_TRIGGERED = "checkpoint_triggered"
    TASK_RESPONSES = "task_responses"
    CHECKPOINT_DURING_RECOVERY = "checkpoint_during_recovery"
    CHECKPOINT_DECIDED = "checkpoint_decided"
    CHECKPOINT_COMPLETED = "checkpoint_completed"
    CHECKPOINT_VOIDED = "checkpoint_voided"
    TASK_FINISHED = "task_finished"
    JOB_FINISHED = "job_finished"
    JOB_NOT_FINISHED = "job_not_finished"
    TASKMANAGER_LOST = "taskmanager_lost"
    REGION_FAILOVER = "region_failover"
    GLOBAL_RESTORE = "global_restore"
    GLOBAL_RESTART_FROM_SCRATCH = "global_restart_from_scratch"
    RESCALE_SKIPPED = "rescale_skipped"
    RECORDS_LOST = "records_lost"
    JOBMANAGER_CRASHED = "jobmanager_crashed"
    JOBMANAGER_FAILOVER = "jobmanager_failover"
    STORAGE_FAULT = "storage_fault"
    FALLBACK_REQUESTED = "fallback_requested"
    FALLBACK_COMPLETED = "fallback_completed"
    NOTIFIED = "notified"
    SPLIT_HELD = "split_held"
    STORE_FAILED = "store_failed"


def event(seq: int, attempt: int, kind: Kind, **fields: Any) -> dict:
    """One event. ``kind`` must be a `Kind` (a misspelt kind raises here, not in a rule)."""
    return {"seq": seq, "attempt": attempt, "kind": Kind(kind).value, **fields}


def key(index: int) -> str:
    """The history object of JobManager life ``index``."""
    return f"{PREFIX}events-{index:05d}.jsonl"


def is_history_key(name: str) -> bool:
    return name.startswith(PREFIX) and name.endswith(".jsonl")


dumps = jsonform.dumps  # the one JSON encoding of every artifact: sorted keys, compact, ASCII (no wrapper: a hot path)


_PLACEHOLDER = "\x00metadata\x00"
_PLACEHOLDER_JSON = json.dumps(_PLACEHOLDER).encode()


def encode(events: Iterable[dict], metadata_bodies: Mapping[int, bytes]) -> bytes:
    """A history object: one `dumps` line per event. A ``checkpoint_completed`` event
    carries the whole ``_metadata`` JSON; its already-encoded body is spliced in rather
    than encoded again (the same bytes: `CompletedCheckpoint.to_bytes` is `dumps` of
    ``to_json()``; on ``large`` the metadata is ~150 MB)."""
    out = io.BytesIO()  # one growing buffer, not a list of lines and their join (twice the size)
    for e in events:
        body = metadata_bodies.get(e.get("checkpoint_id")) if e["kind"] == Kind.CHECKPOINT_COMPLETED else None
        if body is None:
            out.write(dumps(e))
        else:
            head, tail = dumps({**e, "metadata": _PLACEHOLDER}).split(_PLACEHOLDER_JSON, 1)
            out.write(head)
            out.write(body)
            out.write(tail)
        out.write(b"\n")
    return out.getvalue()


def decode(bodies: Iterable[bytes]) -> list[dict]:
    """The events of a run's history objects, in ``seq`` order. Kinds are kept as written (a
    tampered history may carry any string; the rules, not the decoder, judge it)."""
    events: list[dict] = []
    for body in bodies:
        events.extend(jsonform.loads(line) for line in body.decode().splitlines() if line.strip())
    events.sort(key=lambda e: e["seq"])
    return events
