"""The catalogue scenario `concurrent-forced-global` reaches the race the mutant ``forced-flag-at-trigger`` needs:
a REGIONAL completion brings the consecutive counter to the bound while a newer checkpoint is still pending, and
that checkpoint is then decided with a failed region. Its history shows it on the scenario's own seed, and the
swarm's seeds (`faults.swarm`, as bench/mutant_swarm.py swarms the mutant) reach it often.

In:  the scenario, emulated in memory (`tests.memrun`; no Spark, no S3), correct and mutated.
Out: the decisions of its history (``checkpoint_decided``, ``checkpoint_triggered``): what
     decisions_follow_rules.forced_exactly_at_bound judges, the forced flag against the counter the decision read.
"""

from __future__ import annotations

import pytest

from regionchaos.scenario import load
from tests import memrun

SCENARIO = "concurrent-forced-global"
MUTANT = "forced-flag-at-trigger"
UNDECIDED = ("job-failover-region", "checkpoint-subsumed", "checkpoint-coordinator-shutdown")  # never judged forced or not


def _events(mutant=None, **overrides):
    return memrun.emulate(load(SCENARIO, overrides=overrides or None), mutant)[0].events


def _decided(events):
    return [e for e in events if e["kind"] == "checkpoint_decided" and e["reason"] not in UNDECIDED]


def _raced(events):
    """Checkpoints triggered below the bound and decided at it: a REGIONAL completion came in between."""
    at_trigger = {e["checkpoint_id"]: e["counter"] for e in events if e["kind"] == "checkpoint_triggered"}
    return [e for e in _decided(events)
            if at_trigger[e["checkpoint_id"]] < e["max_consecutive_failures"] <= e["counter_at_decision"]]


def _flag_off_the_counter(events):
    """Decisions whose forced flag disagrees with the counter they read (forced_exactly_at_bound's question)."""
    return [e for e in _decided(events)
            if e["forced_global"] != (e["counter_at_decision"] >= e["max_consecutive_failures"])]


def test_its_own_seed_decides_a_checkpoint_after_a_regional_completion_reached_the_bound():
    events = _events()
    raced = _raced(events)
    assert raced, "no checkpoint was pending while a REGIONAL completion reached the bound"
    assert any(e["status"] == "ABORTED" and e["reason"] == "forced-global-failed" and e["failed_regions"]
               for e in raced), raced  # decided with a failed region: forced, aborted
    assert all(e["forced_global"] for e in raced) and not _flag_off_the_counter(events)


def test_the_mutant_on_its_own_seed_completes_a_second_regional_checkpoint_in_a_row():
    off = _flag_off_the_counter(_events(MUTANT))
    assert any(e["status"] == "REGIONAL" and not e["forced_global"] and e["counter_at_decision"] >= 1
               for e in off), off


@pytest.mark.slow
def test_the_swarm_reaches_the_race_in_at_least_a_fifth_of_its_seeds():
    """bench/mutant_swarm.py's criterion, on the model: the mutant's decisions disagree with the counter in at
    least 20 % of the swarm's seeds (each seed its own fault mix, shape, concurrency and delays)."""
    seeds = range(1, 31)
    caught = [s for s in seeds if _flag_off_the_counter(_events(MUTANT, **{"faults.swarm": True, "seed": s}))]
    assert len(caught) >= 0.2 * len(seeds), caught
