"""One grammar for every id that becomes a storage prefix or a local folder: run ids, swarm
ids, study ids, and the scenario names they are made from.

In:  a value from wherever an id enters (``--run-id``, a scenario's ``name``, a swarm
     summary's ``run_id``, a DAG run's entry, a plugin URL).
Out: `run_id_problem(value) -> str | None` (the reason it is refused, as a sentence about the
     value); `regionchaos.run.ids.check_run_id` turns it into bad input naming the field.

The grammar: ``[A-Za-z0-9][A-Za-z0-9._-]*``, no ``..``, at most `RUN_ID_MAX_CHARS`
characters. So an id is one path segment: never ``/``, never a parent folder, never a
hidden file, never whitespace, Rich markup (``[``) or shell metacharacters. A scenario name
is held to the same characters and at most `NAME_MAX_CHARS`, so the default run id made from
it (``NAME-sSEED-MUTANT-DIGEST``, plus ``-regional-off`` for an A/B side) fits the run-id limit.
"""

from __future__ import annotations

import re

RUN_ID_MAX_CHARS = 200  # the plugin lists ids of at most 200 characters (runs.RUN_ID_RE)
# NAME-s<19-digit seed>-<longest mutant, 25>-<8 hex>-regional-off: 100 + 67 <= 200
NAME_MAX_CHARS = 100
RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_RUN_ID_RE = re.compile(RUN_ID_PATTERN + r"\Z")
GRAMMAR = "letters, digits, '.', '_' and '-', starting with a letter or digit, without '..'"


def run_id_problem(value: object, max_chars: int = RUN_ID_MAX_CHARS) -> str | None:
    """Why ``value`` is not a valid id (a sentence about the value), or None if it is."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if len(value) > max_chars:
        return f"must be at most {max_chars} characters, got {len(value)}"
    if not _RUN_ID_RE.match(value):
        return f"may hold only {GRAMMAR}; got {value!r}"
    if ".." in value:
        return f"must not contain '..'; got {value!r}"
    return None

