"""The trigger forms: typed DAG params, the whole-form check, and DAG params -> Scenario.

In:  the params of a DAG run (a trigger form's values, or ``dag_run.conf``).
Out: `manual_params()` and `swarm_params()` (the Param schemas the UI renders and Airflow
     checks field by field); `check_manual_conf()` and `check_swarm_conf()` (every error of
     a conf as `FieldError`s, each naming the form field by its title and param name, e.g.
     ``Rescale plan (rescale): ...``, never a scenario key like ``topology.parallelism``) and
     `refusal()` (what the form shows of them); `typed()` (a number field's typed text as its
     number); `scenario_from_params()` (a validated Scenario, or ScenarioError) and
     `mutant_from_params()`.

An optional field left empty (null) keeps the catalogue scenario's own value. An optional number
field is a text field in the form (`_number_text`): what was typed is sent as typed, so a value the
field cannot take (``-1`` for a seed) is refused, never replaced by another. A conf is
refused before its DAG run exists, in two steps:
- each value against its Param's JSON schema (types, ranges, enums, the rescale plan's
  shape and its parallelism range): Airflow does this itself wherever a run is created
  (trigger form, REST API, CLI);
- the whole form (`TRIGGER_CHECKS`: the same field checks, then the scenario built from all
  fields, e.g. a rescale after the scenario's last checkpoint, pairs out of order, a
  parallelism below the scenario's TaskManagers): the plugin's trigger check
  (`regionchaos_airflow.trigger_check`) runs it on every trigger that reaches the
  api-server (the UI's form, ``POST /api/v2/dags/{dag_id}/dagRuns``, backfills) and answers
  400 with the field errors.
A run created around the api-server (``airflow dags trigger`` or ``airflow dags test``
straight on the metadata DB) gets the same check in its first task, which fails with the
same messages before anything is emulated or written.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from regionchaos.nemesis import FAULT_KINDS
from regionchaos.scenario import MUTANTS, Faults, ScenarioError, catalogue, check_mutant, load, require_emulation
from regionchaos.rescaleplan import (MAX_PARALLELISM, MAX_RESCALE_TEXT, RESCALE_EXAMPLE, RESCALE_PATTERN,  # noqa: F401
                                     parse_rescale)

# JavaScript numbers in the trigger form are exact only up to 2**53 - 1.
MAX_FORM_SEED = 2**53 - 1
MANUAL_DAG_ID = "regionchaos_manual"
SWARM_DAG_ID = "regionchaos_swarm"

FAULT_FIELDS = FAULT_KINDS  # one list of fault kinds: the nemesis's

# param name -> scenario override key (Flink key names for checkpoint settings)
OVERRIDE_KEYS = {
    "parallelism": "topology.parallelism",
    "partitioning": "topology.partitioning",
    "max_failure_ratio": "execution.checkpointing.region.max-failure-ratio",
    "max_consecutive_failures": "execution.checkpointing.region.max-consecutive-failures",
    **{name: f"faults.{name}" for name in FAULT_FIELDS},
}

def scenario_names(backend: str | None = None) -> list[str]:
    """Catalogue scenario names, sorted (the scenario enum); ``backend``: only those of this backend
    (the swarm and the form's optional fields are the emulation's)."""
    return sorted(catalogue(backend))


def real_flink_refusal(scenario) -> str | None:
    """Why a ``backend: flink`` scenario cannot run here (no Flink distribution or Java: the reason names
    ``scripts/setup.sh`` and FLINK_HOME), else None (also for an emulated scenario)."""
    if scenario.backend != "flink":
        return None
    from regionchaos.flink.dist import FlinkNotInstalled, find_dist

    try:
        find_dist()
    except FlinkNotInstalled as exc:
        return f"scenario {scenario.name} runs on real Flink, and this machine has no Flink distribution: {exc}"
    return None


def mutant_choices() -> list[str]:
    return ["none", *MUTANTS]


def _range(minimum: float | None = None, maximum: float | None = None) -> dict[str, Any]:
    """A number's range as JSON schema, inside ``allOf``: Airflow's own check and the whole-form
    check refuse a value outside it, naming the value typed ("must be at least 1, got 0"), while
    the form's number input, which reads only a top-level minimum/maximum and clamps to it when
    the field loses focus, leaves the typed value alone (a typed 0 became 1, and the error then
    spoke of 1)."""
    bounds = {key: value for key, value in (("minimum", minimum), ("maximum", maximum)) if value is not None}
    return {"allOf": [bounds]}


def bounds(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The minimum/maximum of a Param's schema, wherever `_range` put them."""
    out = {key: schema[key] for key in ("minimum", "maximum") if key in schema}
    for part in schema.get("allOf", ()):
        out.update({key: part[key] for key in ("minimum", "maximum") if key in part})
    return out


def _shown_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# param -> the scenario's value that an empty field keeps
_SCENARIO_VALUE: dict[str, Callable[[Any], Any]] = {
    "seed": lambda sc: sc.seed,
    "parallelism": lambda sc: sc.topology.parallelism,
    "partitioning": lambda sc: sc.topology.partitioning.value,
    "max_failure_ratio": lambda sc: sc.flink.max_failure_ratio,
    "max_consecutive_failures": lambda sc: sc.flink.max_consecutive_failures,
    "rescale": lambda sc: ",".join(f"{e.after_checkpoint}:{e.parallelism}" for e in sc.rescale) or "none",
    **{name: (lambda sc, name=name: getattr(sc.faults, name)) for name in FAULT_FIELDS},
}


@functools.lru_cache(maxsize=1)
def scenario_values() -> dict[str, dict[str, Any]]:
    """param -> emulated catalogue scenario name -> the value an empty field keeps (read from the catalogue;
    a real-Flink scenario takes none of these fields but the seed)."""
    scenarios = {name: load(name) for name in scenario_names("emulation")}
    return {param: {name: get(sc) for name, sc in scenarios.items()} for param, get in _SCENARIO_VALUE.items()}


def empty_keeps(param: str) -> str:
    """What an empty field keeps, with the values: "Empty: the scenario's value: 64 in large;
    4 in the others." (the most common value last, as "the others")."""
    groups: dict[str, list[str]] = {}
    for name, value in scenario_values()[param].items():
        groups.setdefault(_shown_value(value), []).append(name)
    if len(groups) == 1:
        return f"Empty: the scenario's value, {next(iter(groups))} in every emulated scenario."
    ordered = sorted(groups.items(), key=lambda item: (len(item[1]), item[0]))
    *rare, (common, _) = ordered
    parts = [f"{value} in {', '.join(names)}" for value, names in rare]
    return f"Empty: the scenario's value: {'; '.join(parts)}; {common} in the others."


# What text an optional number field takes (surrounding spaces allowed; `typed` reads it).
NUMBER_TEXT = {"integer": r"^\s*-?[0-9]+\s*$", "number": r"^\s*-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$"}
_KIND_WORDS = {"integer": "a whole number", "number": "a number"}


def _number_text(kind: str, examples: list[Any]) -> dict[str, Any]:
    """The schema of an optional number field: a number (the REST API, the CLI) or the text typed into
    the form. Airflow's form draws a number type as a number input, which cannot hold a typed ``-1``:
    it showed NaN, emptied itself on blur, and the run started with the scenario's value instead. A
    field whose first type is text, with ``examples``, is a text input (the examples as suggestions),
    which keeps what was typed; the whole-form check (`typed`, `check_conf`) then takes the text for the
    number it spells, or refuses it naming the field."""
    shown = sorted({_shown_value(v) for v in examples if v is not None}, key=float)
    # the form draws the widget of the first type that is not null: text first
    return {"type": ["null", "string", kind], "pattern": NUMBER_TEXT[kind], "examples": shown}


def _optional(param: str, kind: str, title: str, description: str, section: str, **schema: Any) -> Any:
    """A form field that may stay empty: empty keeps the scenario's value (the description says
    which, scenario by scenario). A number field takes typed text too (`_number_text`), its
    suggestions the catalogue's own values."""
    from airflow.sdk import Param

    catalogue_values = list(scenario_values()[param].values())
    types = _number_text(kind, catalogue_values) if kind in NUMBER_TEXT else {"type": ["null", kind]}
    return Param(None, title=title, description=f"{description} {empty_keeps(param)}", section=section,
                 **types, **schema)


def mutant_labels() -> dict[str, str]:
    """How the mutant list shows each choice: its name and what it breaks."""
    return {"none": "none: the protocol as PROTOCOL.md specifies",
            **{name: f"{name}: {what}" for name, what in MUTANTS.items()}}


def _scenario_param(default: str, description: str, names: list[str] | None = None, **extra: Any) -> Any:
    """The scenario field: text with the catalogue names as suggestions (``examples``), not a
    closed list. A closed list lets a person type a name that matches nothing ("No options")
    and trigger with the previous choice still set; typed text is sent as typed, and an unknown
    name is refused by Airflow (``pattern``) and by the whole-form check, naming the known ones."""
    from airflow.sdk import Param

    names = names or scenario_names()
    return Param(default, type="string", examples=names,
                 pattern="^(?:" + "|".join(re.escape(n) for n in names) + ")$",
                 title="Scenario", description=f"{description} Known: {', '.join(names)}.", **extra)


def not_flink_keys_note(names: list[str]) -> str:
    """The sentence of the scenario field that marks the keys Flink does not have: each such key the
    catalogue's scenarios set, with the scenarios that set it ("" if none does)."""
    from regionchaos.scenario import flink_settings

    setters: dict[str, list[str]] = {}
    for name in names:
        scenario = load(name)
        if scenario.backend != "flink":
            for key, _value, is_flink in flink_settings(scenario):
                if not is_flink:
                    setters.setdefault(key, []).append(name)
    if not setters:
        return ""
    return " Keys that are not Flink keys (the model's options): " + "; ".join(
        f"{key} (not a Flink key), set by {', '.join(users)}" for key, users in sorted(setters.items())) + "."


def manual_params() -> dict[str, Any]:
    """The Params of the manual chaos DAG (title, description and section each)."""
    from airflow.sdk import Param

    names = scenario_names()
    fault_params = {
        name: _optional(name, "number", f"Fault: {name.replace('_', ' ')}",
                        f"Probability per checkpoint that {Faults.model_fields[name].description}.", "Faults",
                        **_range(0.0, 1.0))
        for name in FAULT_FIELDS
    }
    partitionings = scenario_values()["partitioning"]
    return {
        "scenario": _scenario_param("smoke" if "smoke" in names else names[0],
                                    "Catalogue scenario to run (regionchaos/catalogue/*.yaml). The real-Flink ones "
                                    f"({', '.join(scenario_names('flink'))}: backend flink, a loopback cluster, "
                                    "minutes) take the seed and no other field of this form."
                                    + not_flink_keys_note(names), section="Scenario"),
        "seed": _optional("seed", "integer", "Seed", "Seed of the fault schedule; the same seed replays the same run.",
                          "Scenario", **_range(0, MAX_FORM_SEED)),
        "parallelism": _optional(
            "parallelism", "integer", "Parallelism (regions)",
            "Subtasks per vertex. With forward partitioning every subtask index is its own pipeline region, so "
            f"this is also the number of regions; 1 to {MAX_PARALLELISM}, at least the scenario's TaskManagers.",
            "Topology", **_range(1, MAX_PARALLELISM)),
        "partitioning": _optional(
            "partitioning", "string", "Partitioning",
            "source -> process edge: forward (one region per subtask index) or rebalance (ALL_TO_ALL: a single "
            "region).", "Topology", enum=[None, "forward", "rebalance"],
            values_display={"null": "the scenario's own" + (
                f" ({next(iter(set(partitionings.values())))} in every catalogue scenario)"
                if len(set(partitionings.values())) == 1 else ""),
                "forward": "forward: one region per subtask index", "rebalance": "rebalance: a single region"}),
        **fault_params,
        "max_failure_ratio": _optional(
            "max_failure_ratio", "number", "Max failure ratio",
            "execution.checkpointing.region.max-failure-ratio: the largest share of failed regions a regional "
            "checkpoint may have.", "Regional checkpoints", **_range(0.0, 1.0)),
        "max_consecutive_failures": _optional(
            "max_consecutive_failures", "integer", "Max consecutive failures",
            "execution.checkpointing.region.max-consecutive-failures: regional checkpoints in a row before a "
            "global one is forced.", "Regional checkpoints", **_range(0, 10_000)),
        "rescale": _optional(
            "rescale", "string", "Rescale plan",
            "AFTER:PARALLELISM pairs, e.g. 3:2,7:1 (after checkpoint index 3 restore at parallelism 2, after 7 "
            f"at 1): parallelism 1 to {MAX_PARALLELISM}, checkpoint indices increasing and below the scenario's "
            "number of checkpoints; 'none' for no rescale.", "Rescale",
            pattern=RESCALE_PATTERN, maxLength=MAX_RESCALE_TEXT),
        "mutant": Param(
            "none",
            type="string",
            enum=mutant_choices(),
            values_display=mutant_labels(),
            title="Mutant",
            description="A deliberately broken protocol variant the checks must catch; "
            "'none' runs the protocol as PROTOCOL.md specifies.",
            section="Mutant",
        ),
    }


def swarm_params() -> dict[str, Any]:
    """The Params of the swarm DAG."""
    from airflow.sdk import Param

    return {
        "scenario": _scenario_param("smoke", "Base scenario (an emulated one); the swarm turns on faults.swarm, so "
                                    "each seed also draws which fault kinds are on and how likely."
                                    + not_flink_keys_note(scenario_names("emulation")),
                                    scenario_names("emulation")),
        "seeds": Param(200, type="integer", **_range(1, 100_000), title="Seeds",
                       description="How many consecutive seeds to run (1 to 100,000)."),
        "first_seed": Param(None, **_number_text("integer", list(scenario_values()["seed"].values())),
                            **_range(0, MAX_FORM_SEED), title="First seed", description="Empty: derived from the "
                            "run's date (YYYYMMDD x 1,000,000), so each scheduled run explores new seeds."),
        "batch_size": Param(50, type="integer", **_range(1, 10_000), title="Seeds per batch",
                            description="Seeds per mapped task (one Spark session per batch; 1 to 10,000)."),
        "mutant": Param("none", type="string", enum=mutant_choices(), values_display=mutant_labels(),
                        title="Mutant", description="With a mutant, the swarm fails if no seed catches it."),
    }


PARAM_NAMES = frozenset({"scenario", "seed", "rescale", "mutant", *OVERRIDE_KEYS})
# the number fields that take typed text (`_number_text`), of both forms, and their kind
NUMBER_FIELDS = {"seed": "integer", "first_seed": "integer", "parallelism": "integer",
                 "max_consecutive_failures": "integer", "max_failure_ratio": "number",
                 **{name: "number" for name in FAULT_FIELDS}}


def typed(params: Mapping[str, Any]) -> dict[str, Any]:
    """The params with each number field's typed text read as the number it spells (``" 7 "`` -> 7,
    ``"0.05"`` -> 0.05, ``""`` -> empty); text that spells no number is left as it is, for the check
    to refuse (`check_conf`)."""
    out = dict(params)
    for name, kind in NUMBER_FIELDS.items():
        value = out.get(name)
        if isinstance(value, str):
            text = value.strip()
            if not text:
                out[name] = None
            elif re.fullmatch(NUMBER_TEXT[kind], text):
                out[name] = int(text) if kind == "integer" else float(text)
    return out


def overrides_from_params(params: dict[str, Any], *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario overrides (``--set`` keys) a DAG run asks for; the seed is not one.

    `extra` adds overrides the DAG itself sets (the swarm sets ``faults.swarm``).
    """
    params = typed(params)
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
    params = typed(params)
    overrides = overrides_from_params(params, extra=extra)
    name = params.get("scenario")
    if not isinstance(name, str) or not name:
        raise ScenarioError([("scenario", "a catalogue scenario name is required")])
    return load(name, overrides=overrides, seed=params.get("seed"))


def mutant_from_params(params: dict[str, Any]) -> str | None:
    return check_mutant(params.get("mutant"))


# -- the whole-form check ------------------------------------------------------------------

class FieldError(NamedTuple):
    """One bad value of a form: the param (the form field), why, and the field's title."""

    param: str
    reason: str
    title: str | None = None

    def __str__(self) -> str:
        if self.title and self.title != self.param:
            return f"{self.title} ({self.param}): {self.reason}"
        return f"{self.param}: {self.reason}"


_PAIR_FIELD = re.compile(r"^rescale\.(\d+)\.(\w+)$")
_BEYOND = re.compile(r"^(\d+) is beyond the (\d+) checkpoints")
_TASKMANAGERS = re.compile(r"^(\d+) TaskManagers for (\d+) subtasks")
_CORRELATED = re.compile(r"^(\d+) is more than the (\d+) pipeline region")


def _param_of_scenario_field() -> dict[str, str]:
    """Scenario error field -> the form param that sets it (Flink keys with and without ``flink.``)."""
    fields = {}
    for param, key in OVERRIDE_KEYS.items():
        fields[key] = param
        if key.split(".")[0] not in ("topology", "faults"):
            fields[f"flink.{key}"] = param
    return fields


def _pair_text(plan: Any, index: int) -> str:
    try:
        event = (parse_rescale(plan) or [])[index] if isinstance(plan, str) else None
    except (ScenarioError, IndexError):
        event = None
    return f"{event['after_checkpoint']}:{event['parallelism']}" if event else f"pair {index + 1}"


def _form_field(field: str, reason: str, values: Mapping[str, Any]) -> tuple[str, str]:
    """(param, reason) of one ScenarioError entry, worded for the person at the form."""
    scenario = values.get("scenario")
    if match := _PAIR_FIELD.match(field):
        index, attribute = int(match[1]), match[2]
        pair = _pair_text(values.get("rescale"), index)
        if attribute == "after_checkpoint" and (beyond := _BEYOND.match(reason)):
            after, count = int(beyond[1]), int(beyond[2])
            return "rescale", (f"'{pair}' rescales after checkpoint {after}, but scenario {scenario} "
                               f"has {count} checkpoints (indices 0 to {count - 1})")
        return "rescale", f"'{pair}': {attribute.replace('_', ' ')}: {reason}"
    if field == "topology.taskmanagers" and (match := _TASKMANAGERS.match(reason)):
        taskmanagers, subtasks = int(match[1]), int(match[2])
        return "parallelism", (f"{subtasks} is fewer than the {taskmanagers} TaskManagers of scenario "
                               f"{scenario} (at most one TaskManager per subtask): at least {taskmanagers}")
    if field == "faults.correlated_regions" and (match := _CORRELATED.match(reason)):
        together, regions = int(match[1]), int(match[2])
        if values.get("partitioning") == "rebalance":
            return "partitioning", (f"rebalance joins every subtask into one pipeline region, but "
                                    f"scenario {scenario} fails {together} regions together: use forward")
        return "parallelism", (f"{regions} pipeline region(s) are fewer than the {together} regions "
                               f"scenario {scenario} fails together: at least {together}")
    params = _param_of_scenario_field()
    if field in params:
        return params[field], reason
    if field in values or "." not in field:  # a param itself (seed, scenario, rescale) or an unknown key
        return field, reason
    # not reachable from a form field: say so on the scenario, with the scenario's own key
    return "scenario", f"scenario {scenario} cannot run with these values: {field}: {reason}"


def form_errors(exc: ScenarioError, values: Mapping[str, Any],
                titles: Mapping[str, str | None] | None = None) -> list[FieldError]:
    """A ScenarioError of `scenario_from_params(values)` as errors of the form's fields.

    Each error names the param the person typed into (``rescale``, ``parallelism``), by its
    title when `titles` has one, never the scenario's key (``rescale.0.after_checkpoint``,
    ``topology.taskmanagers``, ``flink.execution.checkpointing...``).
    """
    titles = titles or {}
    out: list[FieldError] = []
    for field, reason in exc.errors:
        param, text = _form_field(field, reason, values)
        error = FieldError(param, text, titles.get(param))
        if error not in out:
            out.append(error)
    return out


def _value_error(name: str, schema: Mapping[str, Any], value: Any) -> str | None:
    """Why `value` fails the Param's JSON schema (as Airflow checks it), or None."""
    from jsonschema import FormatChecker, ValidationError, validate

    if name == "scenario" and isinstance(value, str) and value not in catalogue():
        return f"unknown scenario {value!r}; known: {', '.join(scenario_names())}"  # never another scenario
    if name == "scenario" and isinstance(value, str) and value not in schema.get("examples", [value]):
        return (f"{value!r} runs on real Flink (backend flink), and this DAG only emulates the protocol; "
                f"known: {', '.join(schema['examples'])}")  # the swarm's form offers the emulated ones
    if name == "rescale" and isinstance(value, str):
        try:  # the plan's own reasons (which pair, why) rather than the pattern
            parse_rescale(value)
        except ScenarioError as exc:
            return "; ".join(reason for _, reason in exc.errors)
    if name in NUMBER_FIELDS and isinstance(value, str):  # typed text `typed` could not read as a number
        limits = bounds(schema)
        bounds_text = (f" from {_shown_value(limits['minimum'])} to {_shown_value(limits['maximum'])}"
                       if len(limits) == 2 else "")
        return f"must be {_KIND_WORDS[NUMBER_FIELDS[name]]}{bounds_text} or left empty, got {value!r}"
    try:
        validate(value, dict(schema), format_checker=FormatChecker())
    except ValidationError as exc:
        return schema_sentence(exc, schema)
    return None


_TYPE_WORDS = {"integer": "a whole number", "number": "a number", "string": "text", "boolean": "true or false",
               "null": "empty", "array": "a list", "object": "an object"}


def schema_sentence(exc: Any, schema: Mapping[str, Any]) -> str:
    """A JSON-schema failure as a sentence about the field's value, as a person filling the
    form reads it ("must be at most 8192, got 9000"), not the validator's dump."""
    got = json.dumps(exc.instance) if not isinstance(exc.instance, str) else repr(exc.instance)
    rule, limit = exc.validator, exc.validator_value
    if rule == "type":
        kinds = [limit] if isinstance(limit, str) else list(limit)
        typed_text = "string" in kinds and {"integer", "number"} & set(kinds)  # a number field's typed text
        words = [_TYPE_WORDS.get(k, k) for k in kinds if k != "null" and not (typed_text and k == "string")]
        empty = " or left empty" if "null" in kinds else ""
        return f"must be {' or '.join(words)}{empty}, got {got}"
    if rule == "minimum":
        return f"must be at least {limit}, got {got}"
    if rule == "maximum":
        return f"must be at most {limit}, got {got}"
    if rule == "exclusiveMinimum":
        return f"must be more than {limit}, got {got}"
    if rule == "exclusiveMaximum":
        return f"must be less than {limit}, got {got}"
    if rule == "enum":
        choices = ", ".join(str(c) for c in limit if c is not None)
        return f"{got} is not one of the choices: {choices}" + (" (or empty)" if None in limit else "")
    if rule == "maxLength":
        return f"must be at most {limit} characters long, got {len(exc.instance)}"
    if rule == "minLength":
        return f"must be at least {limit} characters long"
    if rule == "pattern":
        example = schema.get("description", "").split(":")[0] or "the form the description gives"
        return f"{got} is not in the expected form ({example})"
    return exc.message  # a rule no Param here uses: the validator's own words


def check_conf(spec: Mapping[str, Any], conf: Any, whole: Callable[[dict[str, Any]], Any]) -> list[FieldError]:
    """Every error of `conf` against the Params `spec`: unknown keys, each value against its
    schema, then (when every value is fine) `whole` on the values merged over the defaults,
    as the DAG run would see them. Empty: the conf is good."""
    titles = {name: param.schema.get("title") for name, param in spec.items()}
    if not isinstance(conf, Mapping):
        return [FieldError("conf", "must be a JSON object of the form's fields")]
    errors = [FieldError(str(key), f"unknown parameter of this DAG; its fields are {', '.join(spec)}")
              for key in sorted(set(conf) - set(spec), key=str)]
    values = {name: param.value for name, param in spec.items()}
    values.update(typed({key: value for key, value in conf.items() if key in spec}))
    for name, param in spec.items():
        reason = _value_error(name, param.schema, values[name])
        if reason is not None:
            errors.append(FieldError(name, reason, titles[name]))
    if not errors:
        try:
            whole(values)
        except ScenarioError as exc:
            errors.extend(form_errors(exc, values, titles))
    return errors


def _whole_manual(values: dict[str, Any]) -> None:
    scenario = scenario_from_params(values)
    if mutant_from_params(values) and scenario.backend == "flink":
        raise ScenarioError([("mutant", f"scenario {scenario.name} runs on real Flink: mutants break the emulated "
                                        "protocol, a real run has none")])
    refusal = real_flink_refusal(scenario)
    if refusal:
        raise ScenarioError([("scenario", refusal)])


def _whole_swarm(values: dict[str, Any]) -> None:
    require_emulation(load(values["scenario"]), "the swarm")  # before faults.swarm, which it would refuse
    load(values["scenario"], overrides={"faults.swarm": True})
    check_mutant(values["mutant"])


def check_manual_conf(conf: Any) -> list[FieldError]:
    """Every error of a manual DAG run's conf (see `check_conf`)."""
    return check_conf(manual_params(), conf, _whole_manual)


def check_swarm_conf(conf: Any) -> list[FieldError]:
    """Every error of a swarm DAG run's conf (see `check_conf`)."""
    return check_conf(swarm_params(), conf, _whole_swarm)


# DAG id -> its whole-form check, run by the plugin's trigger check before a run is created
TRIGGER_CHECKS: dict[str, Callable[[Any], list[FieldError]]] = {
    MANUAL_DAG_ID: check_manual_conf,
    SWARM_DAG_ID: check_swarm_conf,
}
_STARTED = {MANUAL_DAG_ID: "chaos run", SWARM_DAG_ID: "swarm"}


def refusal(dag_id: str, errors: list[FieldError]) -> str:
    """What the trigger form shows when the check refuses a conf: a sentence about the run that did not
    start, then one line per field error."""
    fields = "this field" if len(errors) == 1 else f"these {len(errors)} fields"
    return (f"No {_STARTED.get(dag_id, 'DAG run')} was started: correct {fields} and trigger again.\n"
            + "\n".join(str(error) for error in errors))
