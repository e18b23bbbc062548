"""A run's verdict words, how verdicts merge, and the exit codes a run can end with.

In:  verdicts (``"valid"``, ``"invalid"``, ``"unknown"``) and check results' ``success``
     (True / False / None).
Out: ``Verdict.merge`` (false > unknown > true: one failure makes the whole invalid, else one
     unknown makes it unknown, and nothing at all is unknown, never valid), ``ExitCode`` (the four
     codes and what each means; which code a run gets is the outcome policy's choice,
     `regionchaos.judge.policy`) and ``NOT_APPLICABLE`` (the ``state`` of a check whose suite does not
     apply to the run's backend: neither passed nor failed).

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
    ExitCode.VALID: "valid, or a declared finding where its scenario allows it",
    ExitCode.INVALID: "an invariant violated that no finding explains, a finding's scenario that no longer "
                      "fails, or a mutant (caught or not)",
    ExitCode.BAD_INPUT: "bad input",  # an option or scenario field was refused; nothing was written
    ExitCode.UNKNOWN: "unknown / infrastructure error",  # a check did not run, or the run crashed
}


class Verdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"

    @classmethod
    def of_success(cls, success) -> str:
        """A check's ``success`` as a verdict: False invalid, None (no result) unknown, else valid
        (as `regionchaos.judge.checks.merge_verdict` reads it)."""
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
