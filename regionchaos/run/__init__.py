"""A run's vocabulary and its summary.

In:  nothing by itself; the modules below are imported by the CLI, the runner, the swarms,
     the spark jobs, the plugin and the benches.
Out: `verdict` (``ExitCode``, ``Verdict`` and its one merge, ``NOT_APPLICABLE``)
     `overrides` (``parse_set`` / ``format_set``: the one reader and writer of ``--set``),
     `ids` (``check_run_id``: a user's run or swarm id, or bad input naming its field) and
     `summary` (``build_summary``: the one builder of a run's ``summary.json``; imported from
     `regionchaos.run.summary`, not here, as it reaches into the judge).
"""

from __future__ import annotations

from .overrides import format_set, parse_set, set_args
from .verdict import NOT_APPLICABLE, ExitCode, Verdict

__all__ = ["NOT_APPLICABLE", "ExitCode", "Verdict", "format_set", "parse_set", "set_args"]
