"""What a run ends as: its verdict, how verdicts merge, and the exit code each one gives.

In:  verdicts (``"valid"``, ``"invalid"``, ``"unknown"``), check results' ``success``
     (True / False / None), a summary or a judged result (any dict with a ``verdict``).
Out: ``Verdict.merge`` (false > unknown > true: one failure makes the whole invalid, else one
     unknown makes it unknown, and nothing at all is unknown, never valid), ``exit_code``
     (0 valid, 1 invalid, 3 unknown or no verdict; 2 is bad input, decided before any run),
     ``unknown_result`` (the one judged result of a run that could not be judged) and ``NOT_APPLICABLE``
     (the ``state`` of a check whose suite does not apply to the run's backend: neither passed nor failed).

Verdicts stay plain strings in every dict this returns, so JSON, YAML and the plugin's
pydantic models see exactly what they saw before this module existed.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Iterable


NOT_APPLICABLE = "not_applicable"


class ExitCode(IntEnum):
    """The exit codes of every command and spark job (``meaning``: the --help wording)."""

    VALID = 0
    INVALID = 1
    BAD_INPUT = 2
    UNKNOWN = 3

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    ExitCode.VALID: "valid",  # every invariant was checked and held
    ExitCode.INVALID: "invariant violated",  # at least one invariant's check failed
    ExitCode.BAD_INPUT: "bad input",  # an option or scenario field was refused; nothing was written
    ExitCode.UNKNOWN: "infrastructure error / unknown",  # a check did not run, or the run crashed
}


class Verdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"

    @classmethod
    def of_success(cls, success) -> str:
        """A check's ``success`` as a verdict: False invalid, None (no result) unknown, else valid
        (as `regionchaos.validate.merge_verdict` has always read it)."""
        if success is False:
            return cls.INVALID.value
        return cls.UNKNOWN.value if success is None else cls.VALID.value

    @classmethod
    def merge(cls, verdicts: Iterable[str]) -> str:
        """false > unknown > true: invalid if any is invalid, else unknown if any is unknown (or
        is not a verdict at all), else valid; no verdicts at all is unknown."""
        ranks = [_RANK.get(v, _RANK[cls.UNKNOWN.value]) for v in verdicts]
        return _BY_RANK[max(ranks)] if ranks else cls.UNKNOWN.value


_RANK = {Verdict.VALID.value: 0, Verdict.UNKNOWN.value: 1, Verdict.INVALID.value: 2}
_BY_RANK = {rank: verdict for verdict, rank in _RANK.items()}
_EXIT_OF = {Verdict.VALID.value: ExitCode.VALID, Verdict.INVALID.value: ExitCode.INVALID}


def exit_code(summary_or_result: dict) -> ExitCode:
    """The exit code of a run's summary (or a judged result): its ``verdict``'s, and unknown
    (3) for an unknown, missing or unrecognised verdict."""
    return _EXIT_OF.get(summary_or_result.get("verdict"), ExitCode.UNKNOWN)


def unknown_result(error: str) -> dict:
    """The judged result of a run that could not be judged (it crashed, or validation did):
    no checks, verdict unknown, and why."""
    return {"checks": [], "verdict": Verdict.UNKNOWN.value, "error": error}
