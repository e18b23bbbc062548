"""Scenario configuration: the catalogue loads, and bad input is rejected
with the field and the reason."""

from __future__ import annotations

import pytest

from regionchaos.scenario import ScenarioError, catalogue, check_mutant, from_dict, load

BASE = {"name": "t", "flink": {"execution.checkpointing.region.enabled": True}}


def _with(**sections):
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BASE.items()}
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def test_catalogue_has_every_design_scenario():
    names = set(catalogue())
    assert {"smoke", "regional-basic", "forced-global", "rescale-4-2-1", "bounded-final", "coordinator-fallback",
            "unaligned-recovery-7-2", "storage-faults", "jm-failover", "large", "global-vs-regional"} <= names
    for name in names:
        assert load(name).name == name


INVALID = [
    (_with(flink={"execution.checkpointing.region.max-failure-ratio": 1.5}),
     "flink.execution.checkpointing.region.max-failure-ratio", "must be at most 1.0, got 1.5"),
    (_with(flink={"execution.checkpointing.region.max-consecutive-failures": -1}),
     "flink.execution.checkpointing.region.max-consecutive-failures", "must be at least 0, got -1"),
    (_with(flink={"execution.checkpointing.region.enabeld": True}),
     "flink.execution.checkpointing.region.enabeld", "unknown key"),
    (_with(topology={"keyed_state": True}), "topology.keyed_state", "keyed state is not supported"),
    (_with(flink={"state.backend.changelog.enabled": True}),
     "flink.state.backend.changelog.enabled", "changelog state backend is not supported"),
    (_with(topology={"parallelism": 0}), "topology.parallelism", "must be at least 1, got 0"),
    (_with(faults={"decline": 2}), "faults.decline", "must be at most 1.0, got 2"),
    (_with(faults={"earthquake": 0.1}), "faults.earthquake", "unknown key"),
    (_with(workload={"records_per_interval": [10, 2]}), "workload.records_per_interval", "0 <= min <= max"),
    (_with(rescale=[{"after_checkpoint": 50, "parallelism": 2}]), "rescale.0.after_checkpoint", "beyond"),
    (_with(rescale=[{"after_checkpoint": 3, "parallelism": 0}]), "rescale.0.parallelism", "must be at least 1, got 0"),
    (_with(flink={"state.checkpoints.num-retained": 0}), "flink.state.checkpoints.num-retained", "must be at least 1, got 0"),
    (_with(flink={"execution.state-recovery.claim-mode": "LEGACY"}), "flink.execution.state-recovery.claim-mode", "CLAIM"),
    (_with(checkpoints="many"), "checkpoints", "must be a whole number, got 'many'"),
    (_with(expect={"verdict": "invalid"}), "expect.invariant", "must name the invariant"),
    (_with(flink={"execution.checkpointing.timeout": 1000, "execution.checkpointing.region.timeout": 5000}),
     "flink.execution.checkpointing.region.timeout", "must not exceed"),
    # the PR's handler has its own tier 2: a keep-forcing run under it would follow the PR and be judged
    # against keep-forcing (a false counter_follows_decisions; bench seeds matrix, keep-forcing x pr-*)
    (_with(flink={"execution.checkpointing.region.semantics": "pr",
                  "execution.checkpointing.region.forced-global-failure": "keep-forcing"}),
     "flink.execution.checkpointing.region.forced-global-failure", "has no effect under"),
]


def test_keep_forcing_stays_available_under_the_flip_and_reset_counter_under_the_pr():
    flip = from_dict(_with(flink={"execution.checkpointing.region.forced-global-failure": "keep-forcing"}))
    assert flip.flink.forced_global_policy == "keep-forcing"
    pr = from_dict(_with(flink={"execution.checkpointing.region.semantics": "pr",
                                "execution.checkpointing.region.forced-global-failure": "reset-counter"}))
    assert (pr.flink.semantics, pr.flink.forced_global_policy) == ("pr", "reset-counter")


@pytest.mark.parametrize("data,field,reason", INVALID, ids=[i[1] for i in INVALID])
def test_invalid_scenarios_name_field_and_reason(data, field, reason):
    with pytest.raises(ScenarioError) as err:
        from_dict(data)
    fields = [f for f, _ in err.value.errors]
    assert field in fields, (fields, str(err.value))
    assert reason in str(err.value)


def test_unknown_scenario_and_mutant():
    with pytest.raises(ScenarioError, match="unknown scenario 'nope'"):
        load("nope")
    with pytest.raises(ScenarioError, match="unknown mutant 'nope'"):
        check_mutant("nope")
    assert check_mutant("none") is None


def test_overrides_reach_flink_keys_and_sections():
    sc = load("smoke", overrides={"execution.checkpointing.region.enabled": False, "faults.decline": 0.2,
                                  "topology.parallelism": 6}, seed=9)
    assert (sc.flink.region_enabled, sc.faults.decline, sc.topology.parallelism, sc.seed) == (False, 0.2, 6, 9)
    with pytest.raises(ScenarioError) as err:
        load("smoke", overrides={"faults.decline": -1})
    assert err.value.errors[0][0] == "faults.decline"


def test_warnings_for_blocking_edges_and_no_claim():
    sc = from_dict(_with(topology={"exchange": "hybrid"}, flink={"execution.state-recovery.claim-mode": "NO_CLAIM"}))
    text = " ".join(sc.warnings)
    assert "regional checkpoints are disabled at runtime" in text and "NO_CLAIM" in text
    assert not sc.region_enabled_effective
    assert from_dict(_with()).warnings == []


def test_regional_off_allows_keyed_state_and_changelog():
    sc = from_dict({"name": "t", "topology": {"keyed_state": True},
                    "flink": {"state.backend.changelog.enabled": True}})
    assert sc.topology.keyed_state and sc.flink.changelog


def _documented_keys() -> dict[str, tuple[str, str]]:
    """docs/ARCHITECTURE.md's table of the scenario's flink keys: key -> (default here, Flink's default)."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md").read_text()
    section = text.split("## The scenario's `flink:` keys", 1)[1].split("\n## ", 1)[0]
    return {m[1]: (m[2].strip(), m[3].strip())
            for m in re.finditer(r"^\| `([^`]+)` \| ([^|]+) \| (.+) \|$", section, re.MULTILINE)}


def test_the_docs_list_every_flink_key_with_its_default_and_mark():
    """Every `flink` key of the model is in the docs' table with the model's default, and the keys Flink
    does not have are exactly those marked "not a Flink key" in the model and in the docs."""
    import json

    from regionchaos.scenario import FlinkConfig, not_flink_keys

    documented = _documented_keys()
    model = {f.alias: f for f in FlinkConfig.model_fields.values()}
    assert set(documented) == set(model)
    for key, field in model.items():
        default = field.default
        shown = "unset" if default is None else json.dumps(getattr(default, "value", default)).strip('"')
        assert documented[key][0] == shown, key
    assert {k for k, (_, flink) in documented.items() if flink.startswith("not a Flink key")} == set(not_flink_keys())
    assert set(not_flink_keys()) == {"execution.checkpointing.region.timeout",
                                     "execution.checkpointing.region.forced-global-failure",
                                     "execution.checkpointing.region.semantics"}


def test_the_scenario_listing_and_the_forms_mark_what_is_not_a_flink_key(capsys):
    """`regionchaos scenarios` marks each key Flink does not have where a scenario sets it, and no Flink
    key; the trigger forms' scenario field names each such key the catalogue sets."""
    import sys

    from regionchaos import cli
    from regionchaos.scenario import not_flink_keys

    assert cli.main(["scenarios"]) == 0
    out = capsys.readouterr().out
    marked = {m.split("=")[0].split()[-1] for m in out.replace("\n", " ").split(", ") if "(not a Flink key)" in m}
    flagged = {key for key in not_flink_keys() if f'{key}="' in out.replace("\n", " ")}
    assert "execution.checkpointing.region.semantics" in flagged  # the pr-* scenarios set it
    assert marked >= flagged and all(key in not_flink_keys() for key in marked), (marked, flagged)
    assert "max-failure-ratio=0.5 (not a Flink key)" not in out.replace("\n", " ")

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "plugins"))
    from regionchaos_airflow.params import manual_params, swarm_params

    for params in (manual_params(), swarm_params()):
        description = params["scenario"].description
        assert f"{'execution.checkpointing.region.semantics'} (not a Flink key), set by pr-" in description
        assert "max-failure-ratio (not a Flink key)" not in description
