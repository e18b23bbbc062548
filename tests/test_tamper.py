"""Tamper tests: editing one raw artifact of a valid run makes the rule that guards it fail.

In:  the smoke run (seed 1) emulated once into the embedded S3 server; per case a copy of it
     (`tests.tamper_helpers.copy_run`) with one raw artifact edited on storage (a state object, a
     sink commit file, the history, ``scenario.json``): never the emulator or the tables.
Out: the untampered base passes every rule (17 rules covered, see `CASES`); each case's target rule is among the failed rules
     of its suite (other rules may fail too). All copies are judged in ONE pass of the GX suites.
     `TAMPERED` lists the rules covered here; expectations/README.md marks them.
"""

from __future__ import annotations

import json

import pytest

from regionchaos import runner
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests import tamper_helpers as H

pytestmark = pytest.mark.spark
BASE = "tamper-smoke-s1"


def _last_chk(store: ObjectStore) -> int:
    return max(int(k.split("/")[1].removeprefix("chk-")) for k in H.retained_metadata_keys(store))


def _state_keys(store: ObjectStore, checkpoint_id: int | None = None) -> list[str]:
    prefix = f"checkpoints/chk-{checkpoint_id}/" if checkpoint_id is not None else "checkpoints/"
    return sorted(k for k in store.list_keys(prefix) if k.endswith(".state"))


def leak_an_object(store):
    store.put("checkpoints/chk-9999/tm-0.state", json.dumps({"checkpoint_id": 9999, "segments": {}}).encode())


def delete_retained_state(store):
    store.delete_many(_state_keys(store, _last_chk(store)))


def duplicate_a_commit(store):
    key = sorted(store.list_keys("sink/commits/"))[0]
    H.tamper(store, key, H.edit_json(lambda commits: commits.append(dict(commits[0]))))


def shift_counter_sum(store):
    def edit(doc):
        for name, seg in sorted(doc["segments"].items()):
            if name.startswith("counter/") and "/channel/" not in name and seg:
                seg[0]["sum"] += 1
                return
        raise AssertionError("no counter segment")
    for key in _state_keys(store, _last_chk(store)):
        if any(n.startswith("counter/") for n in json.loads(store.get(key))["segments"]):
            H.tamper(store, key, H.edit_json(edit))
            return
    raise AssertionError("no counter state in the last retained checkpoint")


def drop_abort_reasons(store):
    def fn(events):
        hits = [e for e in events if e["kind"] == "checkpoint_decided" and e.get("status") == "ABORTED"]
        assert hits, "the base run has no aborted checkpoint"
        for e in hits:
            e["reason"] = None
        return events
    H.edit_history(store, fn)


def lower_the_regional_bound(store):
    def fn(doc):
        doc["scenario"]["flink"]["execution.checkpointing.region.max-consecutive-failures"] = 0
    H.tamper(store, "scenario.json", H.edit_json(fn))


def _decided(store, status: str) -> list[dict]:
    return [e for e in H.read_history(store) if e["kind"] == "checkpoint_decided" and e.get("status") == status]


def leave_an_object_of_an_aborted_checkpoint(store):
    aborted = _decided(store, "ABORTED")
    assert aborted, "the base run has no aborted checkpoint"
    cid = aborted[0]["checkpoint_id"]
    store.put(f"checkpoints/chk-{cid}/tm-0.state", json.dumps({"checkpoint_id": cid, "segments": {}}).encode())


def commit_upon_an_unknown_checkpoint(store):
    def fn(commits):
        hit = next(c for c in commits if c["cause"] == "notify")
        hit["notified_checkpoint_id"] = 99_999
    key = next(k for k in sorted(store.list_keys("sink/commits/"))
               if any(c["cause"] == "notify" for c in json.loads(store.get(k))))
    H.tamper(store, key, H.edit_json(fn))


def drop_a_counter_segment(store):
    def edit(doc):
        name = next(n for n in sorted(doc["segments"]) if n.startswith("counter/") and "/channel/" not in n)
        del doc["segments"][name]
    for key in _state_keys(store, _last_chk(store)):
        if any(n.startswith("counter/") for n in json.loads(store.get(key))["segments"]):
            H.tamper(store, key, H.edit_json(edit))
            return
    raise AssertionError("no counter state in the last retained checkpoint")


def misstate_the_counter_after_a_global(store):
    def fn(events):
        hit = next(e for e in events if e["kind"] == "checkpoint_decided" and e.get("status") == "GLOBAL")
        hit["counter_after"] = 5
        return events
    H.edit_history(store, fn)


def stretch_a_committed_range(store):
    key = sorted(store.list_keys("sink/commits/"))[0]
    H.tamper(store, key, H.edit_json(lambda commits: commits[0].update(end=commits[0]["end"] + 1)))


def fail_a_region_of_a_global(store):
    def fn(events):
        hit = next(e for e in events if e["kind"] == "checkpoint_decided" and e.get("status") == "GLOBAL")
        hit["failed_regions"] = [0]
        return events
    H.edit_history(store, fn)


def shift_a_transaction_sum(store):
    key = sorted(k for k in store.list_keys("sink/txn/") if k.endswith(".json"))[0]
    H.tamper(store, key, H.edit_json(lambda txns: txns[0].update(sum=txns[0]["sum"] + 1)))


def commit_a_later_transaction(store):
    def fn(commits):
        hit = next(c for c in commits if c["cause"] == "notify")
        hit["txn_checkpoint_id"] = hit["notified_checkpoint_id"] + 1000
    key = next(k for k in sorted(store.list_keys("sink/commits/"))
               if any(c["cause"] == "notify" for c in json.loads(store.get(k))))
    H.tamper(store, key, H.edit_json(fn))


def rewind_the_source(store):
    def edit(doc):
        for name, seg in doc["segments"].items():
            if name.startswith("source/"):
                for element in seg:
                    element["src"] = 0
    for key in _state_keys(store, _last_chk(store)):
        H.tamper(store, key, H.edit_json(edit))


def drop_the_heal_phase(store):
    H.edit_history(store, lambda events: [e for e in events if e["kind"] != "heal_started"])


def drop_an_entry_from_the_metadata(store):
    """The first ``checkpoint_completed`` event's metadata loses one OperatorSubtaskState entry."""
    def fn(events):
        for e in events:
            if e["kind"] == "checkpoint_completed":
                for value in e["metadata"].values():
                    if isinstance(value, list) and len(value) > 1 and all(
                            isinstance(v, dict) and "subtask" in v for v in value):
                        del value[0]
                        return events
        return events
    H.edit_history(store, fn)


# rule -> (suite, edit of the copied run's raw artifacts)
CASES = {
    "no_leaked_objects": ("storage_safety", leak_an_object),
    "retained_objects_exist": ("storage_safety", delete_retained_state),
    "no_duplicate_commit": ("exactly_once_output", duplicate_a_commit),
    "counter_equals_truth": ("state_consistency", shift_counter_sum),
    "abort_has_a_reason": ("decisions_follow_rules", drop_abort_reasons),
    "consecutive_regional_within_bound": ("flip_bounds", lower_the_regional_bound),
    "aborted_leave_nothing": ("storage_safety", leave_an_object_of_an_aborted_checkpoint),
    "commits_only_on_completion": ("notifications", commit_upon_an_unknown_checkpoint),
    "named_state_present": ("state_consistency", drop_a_counter_segment),
    "counter_follows_decisions": ("decisions_follow_rules", misstate_the_counter_after_a_global),
    "committed_records_not_lost": ("exactly_once_output", stretch_a_committed_range),
    "global_has_no_refs": ("decisions_follow_rules", fail_a_region_of_a_global),
    "transactions_equal_truth": ("state_consistency", shift_a_transaction_sum),
    "commit_within_checkpoint": ("exactly_once_output", commit_a_later_transaction),
    "source_ahead_of_counter": ("state_consistency", rewind_the_source),
    "global_after_faults": ("liveness", drop_the_heal_phase),
    "one_entry_per_operator_subtask": ("metadata_well_formed", drop_an_entry_from_the_metadata),
}
TAMPERED = sorted(CASES)


def _case_id(rule: str) -> str:
    return f"{BASE}-{rule.replace('_', '-')}"


@pytest.fixture(scope="module")
def judged(s3_server, spark) -> dict[str, dict]:
    scenario = load("smoke", seed=1)
    base = ObjectStore.for_run(s3_server.config, BASE)
    runner.prepare_run(base, scenario, run_id=BASE, mutant=None, replay="tamper base")
    runner.emulate(scenario, store=base, spark=None)
    stores = [base]
    for rule, (_, edit) in CASES.items():
        copy = H.copy_run(base, _case_id(rule))
        edit(copy)
        stores.append(copy)
    return H.judge(spark, stores)


def test_the_untampered_base_passes_every_rule(judged):
    result = judged[BASE]
    assert result["verdict"] == "valid", {c["name"]: c.get("error") for c in result["checks"] if c["success"] is not True}
    assert all(c["failed_rules"] == [] and all(n == 0 for n in c["rules"].values()) for c in result["checks"])


@pytest.mark.parametrize("rule", TAMPERED)
def test_tampering_the_raw_artifact_fails_the_rule(judged, rule):
    suite, _ = CASES[rule]
    result = judged[_case_id(rule)]
    assert rule in H.failed_rules(result, suite), [(c["name"], c.get("failed_rules"), c.get("error"))
                                                   for c in result["checks"] if c["success"] is not True]
    assert result["verdict"] == "invalid"
