"""The manual trigger form: typed DAG params, and DAG params -> Scenario.

In:  the params of a DAG run (the trigger form's values, or ``dag_run.conf``).
Out: `manual_params()` (the Param schema the UI renders and the API validates before a
     run is created), `scenario_from_params()` (a validated Scenario) and
     `mutant_from_params()`; both raise ScenarioError naming the offending field.

An optional field left empty (null) keeps the catalogue scenario's own value. The
schema checks each value on its own (types, ranges, enums, the rescale plan's shape) so a
bad value is refused by the form and by ``POST /api/v2/dags/{id}/dagRuns`` with a 400;
what only the scenario as a whole can judge (a rescale beyond the last checkpoint) fails
the run's first task, before anything is emulated.
"""

from __future__ import annotations

import re
from typing import Any

from regionchaos.nemesis import FAULT_KINDS
from regionchaos.scenario import MUTANTS, Faults, ScenarioError, catalogue, check_mutant, load

# JavaScript numbers in the trigger form are exact only up to 2**53 - 1.
MAX_FORM_SEED = 2**53 - 1
MAX_PARALLELISM = 8192

FAULT_FIELDS = FAULT_KINDS  # one list of fault kinds: the nemesis's

# param name -> scenario override key (Flink key names for checkpoint settings)
OVERRIDE_KEYS = {
    "parallelism": "topology.parallelism",
    "partitioning": "topology.partitioning",
    "max_failure_ratio": "execution.checkpointing.region.max-failure-ratio",
    "max_consecutive_failures": "execution.checkpointing.region.max-consecutive-failures",
    **{name: f"faults.{name}" for name in FAULT_FIELDS},
}

RESCALE_PATTERN = r"^\s*(|none|\d+\s*:\s*\d+(\s*,\s*\d+\s*:\s*\d+)*)\s*$"
_RESCALE_RE = re.compile(RESCALE_PATTERN)


def scenario_names() -> list[str]:
    """Catalogue scenario names, sorted (the scenario enum)."""
    return sorted(catalogue())


def mutant_choices() -> list[str]:
    return ["none", *MUTANTS]


def manual_params() -> dict[str, Any]:
    """The Params of the manual chaos DAG (title, description and section each)."""
    from airflow.sdk import Param

    names = scenario_names()
    fault_params = {
        name: Param(
            None,
            type=["null", "number"],
            minimum=0.0,
            maximum=1.0,
            title=f"Fault: {name.replace('_', ' ')}",
            description=f"Probability per checkpoint that {Faults.model_fields[name].description}. "
            "Empty: the scenario's value.",
            section="Faults",
        )
        for name in FAULT_FIELDS
    }
    return {
        "scenario": Param(
            "smoke" if "smoke" in names else names[0],
            type="string",
            enum=names,
            title="Scenario",
            description="Catalogue scenario to run (regionchaos/catalogue/*.yaml).",
            section="Scenario",
        ),
        "seed": Param(
            None,
            type=["null", "integer"],
            minimum=0,
            maximum=MAX_FORM_SEED,
            title="Seed",
            description="Seed of the fault schedule; the same seed replays the same run. "
            "Empty: the scenario's seed.",
            section="Scenario",
        ),
        "parallelism": Param(
            None,
            type=["null", "integer"],
            minimum=1,
            maximum=MAX_PARALLELISM,
            title="Parallelism (regions)",
            description="Subtasks per vertex. With forward partitioning every subtask index is "
            "its own pipeline region, so this is also the number of regions. Empty: the scenario's.",
            section="Topology",
        ),
        "partitioning": Param(
            None,
            type=["null", "string"],
            enum=[None, "forward", "rebalance"],
            title="Partitioning",
            description="source -> process edge: forward (one region per subtask index) or "
            "rebalance (ALL_TO_ALL: a single region). Empty: the scenario's.",
            section="Topology",
        ),
        **fault_params,
        "max_failure_ratio": Param(
            None,
            type=["null", "number"],
            minimum=0.0,
            maximum=1.0,
            title="Max failure ratio",
            description="execution.checkpointing.region.max-failure-ratio: the largest share of "
            "failed regions a regional checkpoint may have. Empty: the scenario's.",
            section="Regional checkpoints",
        ),
        "max_consecutive_failures": Param(
            None,
            type=["null", "integer"],
            minimum=0,
            maximum=10_000,
            title="Max consecutive failures",
            description="execution.checkpointing.region.max-consecutive-failures: regional "
            "checkpoints in a row before a global one is forced. Empty: the scenario's.",
            section="Regional checkpoints",
        ),
        "rescale": Param(
            None,
            type=["null", "string"],
            pattern=RESCALE_PATTERN,
            title="Rescale plan",
            description="AFTER:PARALLELISM pairs, e.g. 3:2,7:1 (after checkpoint index 3 restore "
            "at parallelism 2, after 7 at 1); 'none' for no rescale. Empty: the scenario's plan.",
            section="Rescale",
        ),
        "mutant": Param(
            "none",
            type="string",
            enum=mutant_choices(),
            values_display={"none": "none (the protocol as specified)", **{k: k for k in MUTANTS}},
            title="Mutant",
            description="A deliberately broken protocol variant the checks must catch; "
            "'none' runs the protocol as PROTOCOL.md specifies.",
            section="Mutant",
        ),
    }


PARAM_NAMES = frozenset({"scenario", "seed", "rescale", "mutant", *OVERRIDE_KEYS})


def parse_rescale(text: str) -> list[dict[str, int]] | None:
    """``"3:2,7:1"`` -> rescale events; ``"none"`` -> []; empty -> None (keep the scenario's)."""
    if not _RESCALE_RE.match(text):
        raise ScenarioError([("rescale", f"{text!r} is not a plan like '3:2,7:1' or 'none'")])
    text = text.strip()
    if not text:
        return None
    if text == "none":
        return []
    events = []
    for pair in text.split(","):
        after, _, parallelism = pair.partition(":")
        events.append({"after_checkpoint": int(after), "parallelism": int(parallelism)})
    return events


def overrides_from_params(params: dict[str, Any], *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario overrides (``--set`` keys) a DAG run asks for; the seed is not one.

    `extra` adds overrides the DAG itself sets (the swarm sets ``faults.swarm``).
    """
    unknown = sorted(set(params) - PARAM_NAMES)
    if unknown:
        raise ScenarioError([(key, "unknown parameter of this DAG") for key in unknown])
    overrides: dict[str, Any] = {}
    for param, key in OVERRIDE_KEYS.items():
        if params.get(param) is not None:
            overrides[key] = params[param]
    if params.get("rescale") is not None:
        events = parse_rescale(str(params["rescale"]))
        if events is not None:
            overrides["rescale"] = events
    overrides.update(extra or {})
    return overrides


def scenario_from_params(params: dict[str, Any], *, extra: dict[str, Any] | None = None):
    """Build the Scenario a DAG run asks for; ScenarioError names every bad field."""
    overrides = overrides_from_params(params, extra=extra)
    name = params.get("scenario")
    if not isinstance(name, str) or not name:
        raise ScenarioError([("scenario", "a catalogue scenario name is required")])
    return load(name, overrides=overrides, seed=params.get("seed"))


def mutant_from_params(params: dict[str, Any]) -> str | None:
    return check_mutant(params.get("mutant"))
