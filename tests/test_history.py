"""The history's one place (`regionchaos.history`): its kinds, its encoding, and everyone who
names a kind agreeing with it.

In:  the event kinds (`Kind`), the package's source, the suites' SQL, and smoke emulated into an
     in-memory store.
Out: a misspelt kind is refused when logged; every kind is logged by some module; every kind the
     SQL names exists; the encoding splices checkpoint metadata byte for byte and decodes back to
     the same events in order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from regionchaos import history
from regionchaos.emulator import Emulation
from regionchaos.history import Kind
from regionchaos.scenario import load
from tests import memrun

ROOT = Path(__file__).resolve().parents[1]
EVENTS_ALIAS = re.compile(r"\brc_events\s+(?:AS\s+)?(?!WHERE\b|JOIN\b|ON\b|LEFT\b|GROUP\b)(\w+)", re.I)


def event_kinds_named(sql: str) -> list[str]:
    """The kind literals a rule compares the events table's ``kind`` with (other tables have a
    ``kind`` column too): ``<alias of rc_events>.kind = '...' / IN (...)``, or an unqualified
    ``kind`` right after ``FROM rc_events WHERE``."""
    aliases = "|".join(map(re.escape, set(EVENTS_ALIAS.findall(sql)))) or "(?!)"
    pattern = re.compile(rf"(?:\b(?:{aliases})\.kind|\brc_events\s+WHERE\s+kind)\s*"
                         r"(?:=\s*'([a-z_]+)'|IN\s*\(([^)]*)\))", re.I)
    out = []
    for single, listed in pattern.findall(sql):
        out += [single] if single else re.findall(r"'([^']*)'", listed)
    return out


def test_a_misspelt_kind_is_refused_where_it_is_logged():
    with pytest.raises(ValueError):
        history.event(0, 0, "checkpoint_decidd")
    assert history.event(3, 1, Kind.HEAL_STARTED) == {"seq": 3, "attempt": 1, "kind": "heal_started"}
    assert type(history.event(0, 0, Kind.RUN_STARTED)["kind"]) is str  # plain strings on the wire


def test_every_kind_is_logged_somewhere_in_the_package():
    """A kind nobody logs is dead weight the readers still branch on."""
    source = "\n".join(p.read_text() for p in (ROOT / "regionchaos").rglob("*.py") if p.name != "history.py")
    unused = [k.name for k in Kind if f"Kind.{k.name}" not in source]
    assert unused == []


def test_every_kind_the_suites_name_is_a_kind():
    named = {}
    for path in sorted((ROOT / "expectations" / "sql").rglob("*.sql")):
        for literal in event_kinds_named(path.read_text()):
            named.setdefault(literal, path.relative_to(ROOT).as_posix())
    assert len(named) >= 4, named  # the pattern still finds the kinds the rules select on
    assert {k: where for k, where in named.items() if k not in set(Kind)} == {}


def test_the_sql_scan_sees_aliases_and_ignores_other_tables_kind_columns():
    sql = ("SELECT 1 FROM rc_events ev JOIN rc_redistributions o ON o.kind = 'element' "
           "WHERE ev.kind IN ('global_restore', 'job_finishd') UNION SELECT 1 FROM rc_events WHERE kind = 'heal_started'")
    assert event_kinds_named(sql) == ["global_restore", "job_finishd", "heal_started"]


class Handed:
    """The real persistence, keeping every batch the control plane hands it (the hand-off)."""

    def __init__(self, inner):
        self.inner, self.batches = inner, []

    def flush(self, batch):
        self.inner.flush(batch)
        self.batches.append(batch)

    def recover(self):
        return self.inner.recover()

    def delete_orphans(self, live):
        return self.inner.delete_orphans(live)

    def list_objects(self, prefix=""):
        return self.inner.list_objects(prefix)


def test_the_encoding_splices_metadata_bytes_and_decodes_back_in_order():
    handed = Handed(memrun.persistence(load("smoke")))
    Emulation(load("smoke"), handed).run()
    batch = handed.batches[0]
    bodies = {s["checkpoint_id"]: s["body"] for s in batch.steps if s["op"] == "metadata"}
    assert any(e["kind"] == Kind.CHECKPOINT_COMPLETED and e["checkpoint_id"] in bodies for e in batch.events)
    encoded = history.encode(batch.events, bodies)
    assert encoded == b"".join(history.dumps(e) + b"\n" for e in batch.events)
    half = len(batch.events) // 2  # two objects (two JobManager lives), given out of order
    second = history.encode(batch.events[half:], bodies)
    as_written = [json.loads(history.dumps(e)) for e in batch.events]  # tuples are JSON lists
    assert history.decode([second, history.encode(batch.events[:half], bodies)]) == as_written
    assert history.key(7) == "history/events-00007.jsonl" and history.is_history_key(history.key(7))
