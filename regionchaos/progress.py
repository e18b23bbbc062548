"""Progress lines while the GX suites judge a run: one line per suite as it finishes.

In:  a ``report(line)`` callable (the CLI's console) for the duration of a ``with`` block.
Out: ``suite 3/12 cleaner_safety: passed (1.4 s)`` per suite, in the order GX runs them.

The suites run one after the other inside one GX checkpoint, which has no progress hook of its
own: `suite_progress` wraps ``ValidationDefinition.run`` for the duration of the block (in this
process only) and restores it after, whatever happens. Nothing here judges anything: the lines
are progress, the verdict comes from the results as before.

Great Expectations is imported inside `validation_definition_class`, on first use: it takes seconds to
import, and a command refused before its judging answers without it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .judge.engine import GXValidator
from .judge.suites import load_suites


def validation_definition_class() -> type:
    """GX's ValidationDefinition (imported here, on first use: GX takes seconds to import)."""
    from great_expectations.core.validation_definition import ValidationDefinition

    return ValidationDefinition


def suite_count(backend: str = "emulation") -> int:
    """The suites a run of ``backend`` is judged by (every one for the emulation)."""
    return sum(suite.rules_for(backend) is not None for suite in load_suites())


@contextmanager
def _wrapped_run(report: Callable[[str], None], target: type, total: int) -> Iterator[None]:
    """``target.run`` reports a line per call inside the block; restored after, whatever happens."""
    original = target.__dict__["run"]
    done = [0]

    def run(self, *args: Any, **kwargs: Any):
        started = time.perf_counter()
        result = original(self, *args, **kwargs)
        done[0] += 1
        outcome = {True: "passed", False: "FAILED"}.get(getattr(result, "success", None), "no result")
        try:
            report(f"suite {done[0]}/{total} {self.suite.name}: {outcome} ({time.perf_counter() - started:.1f} s)")
        except Exception:  # noqa: BLE001 - a progress line never changes a run
            pass
        return result

    target.run = run
    try:
        yield
    finally:
        target.run = original


@contextmanager
def suite_progress(report: Callable[[str], None], *, target: type | None = None,
                   total: int | None = None) -> Iterator[None]:
    """Call ``report`` with one line per suite run inside the block. ``target``: the class whose
    ``run`` is wrapped for the whole block (a test's stand-in); by default GX's ValidationDefinition,
    wrapped only while `GXValidator.validate` runs, so that nothing imports GX (seconds) before a
    run gets to its validation, and a command refused before that answers at once."""
    if target is not None:
        with _wrapped_run(report, target, total if total is not None else suite_count()):
            yield
        return
    original = GXValidator.__dict__["validate"]

    def validate(self, *args: Any, **kwargs: Any):
        count = total if total is not None else suite_count(kwargs.get("backend", "emulation"))
        with _wrapped_run(report, validation_definition_class(), count):  # GX is imported by now
            return original(self, *args, **kwargs)

    GXValidator.validate = validate
    try:
        yield
    finally:
        GXValidator.validate = original
