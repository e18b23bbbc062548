"""regionchaos.jsonform: msgspec writes and reads the artifacts' JSON exactly as Python's json does.

Each property compares with ``json`` itself (the reference), never with a value computed here:
- `dumps` gives json's bytes (``sort_keys``, compact, ASCII) for any JSON-able value with finite
  floats, including the values whose msgspec bytes differ (floats with exponents, non-ASCII text,
  keys that are not strings), which must take json's path;
- `loads` returns what ``json.loads`` returns, and fails where it fails, for well-formed documents
  and for the inputs msgspec refuses (NaN, lone surrogates, huge exponents, BOMs, UTF-16);
- every artifact of every emulated catalogue scenario (seeds 1-2, with and without the swarm's fault mix,
  and every mutant on `smoke`) is json's bytes: the runs go with the check on (``REGIONCHAOS_JSON_CHECK``),
  which encodes each value with json too and raises on any difference, a set msgspec would write included;
- a scenario refuses NaN and infinities in every float field, the one difference the bytes cannot
  show (``null`` against ``NaN``).
"""

from __future__ import annotations

import copy
import json
import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from regionchaos import jsonform, runner
from regionchaos.runner import emulate_in_memory
from regionchaos.scenario import MUTANTS, ScenarioError, catalogue, from_dict, load
from regionchaos.storage.memory import MemoryStore
from regionchaos.swarm import SWARM_OVERRIDES

REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"))

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text())
keys = st.text() | st.sampled_from(["seq", "kind", "0e1", "1E5", "0.00001", "é", "\u2028"])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
                      | st.dictionaries(keys, inner, max_size=5), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(values)
def test_dumps_writes_jsons_bytes(value):
    assert jsonform.dumps(value) == REFERENCE.encode(value).encode()


@pytest.mark.parametrize("value", [
    1e16, 1.5e16, -1.7976931348623157e308, 1e-05, 5.711195986520146e-05, 3e-07, 5e-324, 0.0001, -0.0,
    {"p": [1e-05, 0.5]}, "é", {"é": 1}, "\ud800", {1: "a", 10: "b", 2: "c"}, {True: 1, False: 2},
    {"drawn": {"timeout": 5.711195986520146e-05, "decline": 0.07342751683747904}},
], ids=repr)
def test_dumps_where_msgspec_differs(value):
    """Each of these is written differently by msgspec (or refused by it): json's bytes still."""
    assert jsonform.dumps(value) == REFERENCE.encode(value).encode()


def _outcome(fn, raw):
    try:
        return ("value", fn(raw))
    except Exception as exc:  # noqa: BLE001 - the error's type is what is compared
        return ("error", type(exc))


@settings(max_examples=300, deadline=None)
@given(values)
def test_loads_reads_what_json_reads(value):
    for raw in (json.dumps(value), json.dumps(value, indent=1).encode(), json.dumps(value, ensure_ascii=False)):
        mine, theirs = jsonform.loads(raw), json.loads(raw)
        assert mine == theirs
        assert REFERENCE.encode(mine) == REFERENCE.encode(theirs)  # and of the same types: 1 is not 1.0, nor True


@pytest.mark.parametrize("raw", [
    b"NaN", b"[Infinity, -Infinity]", b'"\\ud800"', b"1e400", b'{"a": 1, "a": 2}', b"\xef\xbb\xbf{}",
    '{"x": [1, 2.5]}'.encode("utf-16"), b'"\xff"', b"", b"{", b"[1,]", b" 12 ", "\u2028[1]", b"-0", b"-0.0",
    str(2**80).encode(), b"[" * 5000 + b"]" * 5000,
], ids=repr)
def test_loads_edge_inputs_like_json(raw):
    mine, theirs = _outcome(jsonform.loads, raw), _outcome(json.loads, raw)
    if mine[0] == "value" and theirs[0] == "value" and isinstance(theirs[1], float) and math.isnan(theirs[1]):
        assert math.isnan(mine[1])
    else:
        assert repr(mine) == repr(theirs)


def _catalogue_runs():
    for name in sorted(n for n in catalogue("emulation") if n != "large"):
        for seed in (1, 2):
            for overrides in ({}, dict(SWARM_OVERRIDES)):
                yield name, seed, None, overrides
    for mutant in sorted(MUTANTS):
        yield "smoke", 1, mutant, {}


@pytest.mark.slow
def test_every_catalogue_artifact_is_jsons_bytes(monkeypatch):
    """The check behind the two differences the bytes cannot show (a set msgspec writes, NaN as null): every
    object each run leaves on its store, and every JSON column of its tables, encoded by json as well."""
    monkeypatch.setattr(jsonform, "_CHECKED", True)
    with pytest.raises(TypeError):
        REFERENCE.encode({"ids": {3, 1}})  # json refuses a set ...
    with pytest.raises(jsonform.JSONFormDiffers, match="json refuses"):
        jsonform.dumps({"ids": {3, 1}})  # ... which msgspec would write: the check says so
    runs = 0
    for name, seed, mutant, overrides in _catalogue_runs():
        try:
            scenario = load(name, overrides=overrides, seed=seed)
        except ScenarioError:  # a pinned fault schedule takes no swarm mix: not a run
            continue
        store = MemoryStore.for_run(None, runner.default_run_id(scenario, mutant))
        emulate_in_memory(scenario, mutant, store=store)  # raises JSONFormDiffers on a difference
        runs += 1
    assert runs >= 80, runs


def test_the_check_finds_differing_bytes(monkeypatch):
    """The comparison itself: a reference that disagrees is reported with where."""
    monkeypatch.setattr(jsonform, "_CHECKED", True)
    monkeypatch.setattr(jsonform, "PYTHON", json.JSONEncoder(sort_keys=True, separators=(", ", ":")))
    with pytest.raises(jsonform.JSONFormDiffers, match="differ at byte"):
        jsonform.dumps([1, 2])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=repr)
def test_a_scenario_refuses_non_finite_floats(value):
    """msgspec writes NaN as null where json writes NaN, and nothing in the bytes shows it: every float
    of a run comes from a scenario, whose float fields refuse them (the setting is on the sections' base
    model; three fields of two sections are tried here)."""
    data = yaml.safe_load(catalogue()["smoke"].read_text())
    for where in (("faults", "decline"), ("faults", "timeout"), ("flink", "execution.checkpointing.region.max-failure-ratio")):
        bad = copy.deepcopy(data)
        section = bad.setdefault(where[0], {})
        section[where[1]] = value
        with pytest.raises(ScenarioError, match="finite"):
            from_dict(bad, {})
