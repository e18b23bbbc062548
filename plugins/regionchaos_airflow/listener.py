"""The DAG run's note: the verdict where Airflow users look first.

In:  a regionchaos DAG run that has just finished (success or failed), and the XCom
     ``regionchaos_note`` its tasks pushed (`regionchaos_airflow.operators`: verdict, failed
     invariants, report link; the nightly and swarm summaries push their own).
Out: the run's note (Markdown, shown on the DAG run in the UI) set from those XComs, unless
     a person already wrote one.

Why a listener: a task cannot set its DAG run's note in Airflow 3. The Task SDK talks to the
execution API only, which takes a note only when a task triggers a *new* DAG run
(``TriggerDagRunPayload.note``); the note of a run is written by the public REST API
(``PATCH /api/v2/dags/{dag_id}/dagRuns/{run_id}``, a user's token) or the metadata DB. A
listener (``on_dag_run_success`` / ``on_dag_run_failed``, registered by the plugin) runs
where the run's state changes (the scheduler, ``airflow dags test``, or the api-server when
a person marks the run) with the DagRun in that component's session: the note is written in
the same transaction as the state (a second session would wait for SQLite's write lock).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from airflow.listeners import hookimpl

log = logging.getLogger(__name__)

NOTE_XCOM = "regionchaos_note"  # the key regionchaos_airflow.operators pushes
DAG_PREFIX = "regionchaos_"
MAX_NOTE_CHARS = 1000  # Airflow's dag_run_note.content is String(1000)


def _value(raw: Any) -> str | None:
    """An XCom value as stored (JSON) -> its text."""
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode(errors="replace")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    return raw if isinstance(raw, str) else None


def compose(notes: list[str]) -> str | None:
    """The note from the runs' notes (newest first): one, or each on its own paragraph,
    cut to what the note column holds."""
    seen = list(dict.fromkeys(n for n in notes if n))
    if not seen:
        return None
    text = "\n\n---\n\n".join(seen)
    return text if len(text) <= MAX_NOTE_CHARS else text[:MAX_NOTE_CHARS - 2] + " …"


def notes_of(session, dag_id: str, run_id: str) -> str | None:
    """The note a run's tasks' XComs make (None when they pushed none)."""
    from sqlalchemy import select

    from airflow.models.xcom import XComModel

    rows = session.execute(
        select(XComModel.task_id, XComModel.map_index, XComModel.value)
        .where(XComModel.dag_id == dag_id, XComModel.run_id == run_id, XComModel.key == NOTE_XCOM)
        .order_by(XComModel.timestamp.desc())
    ).all()
    latest: dict[tuple[str, int], str] = {}  # one note per task instance: its newest
    for task_id, map_index, value in rows:
        text = _value(value)
        if text and (task_id, map_index) not in latest:
            latest[(task_id, map_index)] = text
    # the run's last task says the most: the summary's note, else the published run's, else any
    for last in ("summarize", "publish_report", None):
        chosen = [t for (task_id, _), t in latest.items() if last is None or task_id.split(".")[-1] == last]
        if chosen:
            return compose(chosen)
    return None


def _ours(current: str | None) -> bool:
    """A note this listener may replace: none, or one it wrote (they start in bold)."""
    return not current or current.startswith("**")


def set_run_note(dag_run) -> str | None:
    """Write the note of a finished regionchaos DAG run from its tasks' XComs; returns it.

    With the DagRun in a session (the scheduler, the api-server): in that session, so the
    note is committed with the state. Detached (``airflow dags test`` merges its DagRun into
    the session only after the listeners ran): in a session of its own."""
    from sqlalchemy.orm import object_session

    from airflow.models.dagrun import DagRun, DagRunNote
    from airflow.utils.session import create_session

    if not str(dag_run.dag_id).startswith(DAG_PREFIX):
        return None
    session = object_session(dag_run)
    if session is not None:
        note = notes_of(session, dag_run.dag_id, dag_run.run_id)
        if note is None or not _ours(dag_run.note):
            return None
        dag_run.note = note
        return note
    with create_session() as own:
        note = notes_of(own, dag_run.dag_id, dag_run.run_id)
        run = own.get(DagRun, dag_run.id) if note is not None else None
        if run is None or not _ours(run.note):
            return None
        if run.dag_run_note is None:
            run.dag_run_note = DagRunNote(content=note)
        else:
            run.dag_run_note.content = note
    return note


class RunNoteListener:
    """Plugin listener: the run's note on success and on failure."""

    @hookimpl
    def on_dag_run_success(self, dag_run, msg: str) -> None:
        self._note(dag_run)

    @hookimpl
    def on_dag_run_failed(self, dag_run, msg: str) -> None:
        self._note(dag_run)

    @staticmethod
    def _note(dag_run) -> None:
        try:
            set_run_note(dag_run)
        except Exception:  # noqa: BLE001 - a note must never break the state change
            log.exception("regionchaos: could not set the note of %s", getattr(dag_run, "run_id", "?"))


run_note_listener = RunNoteListener()
