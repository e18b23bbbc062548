"""A run's vocabulary and its summary (issue 30).

In:  nothing by itself; the modules below are imported by the CLI, the runner, the swarms,
     the spark jobs, the plugin and the benches.
Out: `verdict` (``ExitCode``, ``Verdict`` and its one merge, ``exit_code``, ``unknown_result``)
     `overrides` (``parse_set`` / ``format_set``: the one reader and writer of ``--set``) and
     `summary` (``build_summary``: the one builder of a run's ``summary.json``; imported from
     `regionchaos.run.summary`, not here, as it reaches into the findings).
"""

from __future__ import annotations

from .overrides import format_set, parse_set, set_args
from .verdict import NOT_APPLICABLE, ExitCode, Verdict, exit_code, unknown_result

__all__ = ["NOT_APPLICABLE", "ExitCode", "Verdict", "exit_code", "format_set", "parse_set", "set_args",
           "unknown_result"]
