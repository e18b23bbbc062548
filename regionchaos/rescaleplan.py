"""The rescale plan as people type it: ``AFTER:PARALLELISM`` pairs (``3:2,7:1``), ``none``.

In:  the text of the trigger form's "Rescale plan" field, or of ``--set rescale=...`` on the CLI.
Out: `parse_rescale()`: the scenario's rescale events (a list of {after_checkpoint,
     parallelism}), [] for ``none``, None for empty (keep the scenario's plan), or a
     ScenarioError on field ``rescale`` whose sentences are the same on the form and the CLI
     (``'3:0': parallelism 0 is out of range, it must be 1 to 8192``).
`RESCALE_PATTERN` is the same grammar as a JSON-schema pattern (the form's Param). That the
checkpoints end before the scenario's last is the scenario's own check.
"""

from __future__ import annotations

import re

from .scenario import ScenarioError

MAX_PARALLELISM = 8192  # as Topology.parallelism
MAX_RESCALE_TEXT = 1000  # characters of a rescale plan (keeps its numbers small enough to parse)

# AFTER:PARALLELISM pairs with a parallelism of 1 to MAX_PARALLELISM (1-999, 1000-7999, 8000-8099,
# 8100-8189, 8190-8192).
_PARALLELISM_RE = r"0*(?:[1-9]\d{0,2}|[1-7]\d{3}|80\d\d|81[0-8]\d|819[0-2])"
_PAIR_RE = rf"\d+\s*:\s*{_PARALLELISM_RE}"
RESCALE_PATTERN = rf"^\s*(|none|{_PAIR_RE}(\s*,\s*{_PAIR_RE})*)\s*$"
_RESCALE_SHAPE_RE = re.compile(r"^\s*(|none|\d+\s*:\s*\d+(\s*,\s*\d+\s*:\s*\d+)*)\s*$")
RESCALE_EXAMPLE = "'3:2,7:1' or 'none'"


def looks_like_plan(text: str) -> bool:
    """True if ``text`` has the plan's shape (pairs of whole numbers, or 'none'), right or wrong
    in its numbers: the CLI reads such a ``--set rescale=`` value as a plan, not as YAML."""
    return bool(text.strip()) and bool(_RESCALE_SHAPE_RE.match(text))


def parse_rescale(text: str) -> list[dict[str, int]] | None:
    """``"3:2,7:1"`` -> rescale events; ``"none"`` -> []; empty -> None (keep the scenario's).

    ScenarioError (field ``rescale``) names each bad pair: the plan's shape, a parallelism
    outside 1..MAX_PARALLELISM, a checkpoint not after the previous pair's.
    """
    if len(text) > MAX_RESCALE_TEXT:
        raise ScenarioError([("rescale", f"longer than {MAX_RESCALE_TEXT} characters")])
    if not _RESCALE_SHAPE_RE.match(text):
        raise ScenarioError([("rescale", f"{text!r} is not a plan like {RESCALE_EXAMPLE}")])
    text = text.strip()
    if not text:
        return None
    if text == "none":
        return []
    events: list[dict[str, int]] = []
    errors: list[tuple[str, str]] = []
    for pair in text.split(","):
        after_text, _, parallelism_text = pair.partition(":")
        after, parallelism = int(after_text), int(parallelism_text)
        shown = f"{after}:{parallelism}"
        if not 1 <= parallelism <= MAX_PARALLELISM:
            errors.append(("rescale", f"'{shown}': parallelism {parallelism} is out of range, "
                                      f"it must be 1 to {MAX_PARALLELISM}"))
        if events and after <= events[-1]["after_checkpoint"]:
            before = events[-1]
            errors.append(("rescale", f"'{shown}' does not come after "
                                      f"'{before['after_checkpoint']}:{before['parallelism']}': "
                                      "each pair's checkpoint must be later than the one before"))
        events.append({"after_checkpoint": after, "parallelism": parallelism})
    if errors:
        raise ScenarioError(errors)
    return events
