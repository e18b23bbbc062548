"""``--set KEY=VALUE``: the one reader and the one writer of scenario overrides.

In:  ``parse_set``: the ``KEY=VALUE`` strings a user typed (CLI, spark job); ``format_set``:
     an overrides dict (key -> value, as parse_set returns or a DAG run's params hold).
Out: ``parse_set``: key -> value (values read with YAML rules by `regionchaos.scenario.parse_value`;
     ``rescale`` AFTER:PARALLELISM pairs read as a plan, as the trigger form does), or a
     ScenarioError naming ``--set`` (exit 2, before anything is written); ``format_set``: the
     ``KEY=VALUE`` strings that read back as the same overrides (text as typed, anything else
     as JSON), ``set_args``: the same as ``--set`` arguments of a replay line or a spark job.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from ..rescaleplan import looks_like_plan, parse_rescale
from ..scenario import ScenarioError, parse_value

SET_KEY_RE = re.compile(r"[A-Za-z0-9._-]+\Z")  # field paths (faults.decline) and Flink keys


def _bad(reason: str) -> ScenarioError:
    return ScenarioError([("--set", reason)], what="input")


def parse_set(pairs: Iterable[str] | None) -> dict[str, Any]:
    """``["faults.decline=0.2", ...]`` -> ``{"faults.decline": 0.2, ...}``; a later key wins."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise _bad(f"expected KEY=VALUE, got {pair!r}")
        if not SET_KEY_RE.match(key.strip()):
            raise _bad(f"{key.strip()!r} is not a field or Flink key (letters, digits, '.', '_' and '-')")
        key = key.strip()
        if key == "rescale" and looks_like_plan(value):  # AFTER:PARALLELISM pairs, as the trigger form
            out[key] = parse_rescale(value)  # YAML would read 3:0 as the base-60 number 180
            if out[key] is None:
                del out[key]
        else:
            out[key] = parse_value(value, key=key)
    return out


def format_set(overrides: dict[str, Any] | None) -> list[str]:
    """``{"faults.decline": 0.2, "flink.x": "on"}`` -> ``["faults.decline=0.2", "flink.x=on"]``."""
    return [f"{key}={value if isinstance(value, str) else _as_yaml(value)}"
            for key, value in (overrides or {}).items()]


def _as_yaml(value: Any) -> str:
    """JSON (``true``, ``[1, 2]``, ``{"a": 1}``), except that a float JSON writes without a point
    (``1e-05``, which YAML 1.1 reads as text) gets one (``1.0e-05``)."""
    if isinstance(value, float) and "." not in json.dumps(value) and "e" in json.dumps(value):
        mantissa, _, exponent = json.dumps(value).partition("e")  # the exponent has its sign: e-05, e+16
        return f"{mantissa}.0e{exponent}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_as_yaml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {_as_yaml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def set_args(overrides: dict[str, Any] | None) -> list[str]:
    """``format_set`` as command-line arguments: ``["--set", "KEY=VALUE", ...]``."""
    return [arg for pair in format_set(overrides) for arg in ("--set", pair)]
