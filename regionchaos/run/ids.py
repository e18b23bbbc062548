"""An id the user gave, checked before anything is written.

In:  a run id or swarm id from wherever it enters (``--run-id``, ``SWARM_ID``, a swarm summary's run
     ids) and the field that named it.
Out: `check_run_id(value, field) -> str`: the value, or a `ScenarioError` naming ``field`` with the reason
     `regionchaos.runid.run_id_problem` gives (bad input: exit 2, nothing written).
"""

from __future__ import annotations

from ..runid import RUN_ID_MAX_CHARS, run_id_problem
from ..scenario import ScenarioError


def check_run_id(value: object, field: str = "--run-id", max_chars: int = RUN_ID_MAX_CHARS) -> str:
    """``value`` if it is a valid id, else a ScenarioError naming ``field``."""
    problem = run_id_problem(value, max_chars)
    if problem is not None:
        raise ScenarioError([(field, problem)], what="input")
    return value  # type: ignore[return-value]
