"""A hypothesis state machine drives the CheckpointCoordinator, its store and
cleaner with random acks, declines, timeouts, split discovery, region
failovers, global restores with rescale and bounded-source completion, and
checks invariants 1, 2, 4 and 8 of PROTOCOL.md section 9 after every step.

Every mutant that lives in the model must make this machine fail.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from regionchaos.protocol import coordinator as C
from regionchaos.protocol.checkpoint import GLOBAL, REGIONAL

from .model_helpers import MODES, ack_states, coordinator, start


def _expected_redistribution(old: list[list], new_p: int, mode: str) -> list[list]:
    """Section 5 written out independently of the model's code."""
    flat = [e for s in old for e in s]
    if mode == "union":
        return [flat for _ in range(new_p)]
    if len(old) == new_p:
        return [list(s) for s in old]
    if mode == "broadcast":
        return [list(old[i % len(old)]) for i in range(new_p)]
    out, pos = [], 0
    for i in range(new_p):
        size = len(flat) // new_p + (1 if i < len(flat) % new_p else 0)
        out.append(flat[pos : pos + size])
        pos += size
    return out


class CoordinatorMachine(RuleBasedStateMachine):
    mutant: str | None = None

    @initialize(
        parallelism=st.integers(2, 5),
        splits=st.integers(1, 8),
        ratio=st.sampled_from([0.25, 0.5, 0.75, 1.0]),
        max_consecutive=st.integers(0, 3),
        policy=st.sampled_from(["reset-counter", "keep-forcing"]),
        retained=st.integers(1, 3),
    )
    def setup(self, parallelism, splits, ratio, max_consecutive, policy, retained):
        self.coord = coordinator(parallelism, ratio=ratio, max_consecutive=max_consecutive, policy=policy,
                                 retained=retained, mutant=self.mutant)
        self.owned = start(self.coord, splits)
        self.next_split = splits
        self.storage: set[str] = set()
        self.completed: set[int] = set()

    # -- rules -------------------------------------------------------------------------

    @rule(data=st.data())
    def checkpoint(self, data):
        coord = self.coord
        pending = coord.trigger_checkpoint()
        cid = pending.checkpoint_id
        for task in sorted(pending.expected - set(pending.acks)):
            fate = data.draw(st.sampled_from(["ack"] * 4 + ["decline", "silent"]), label=f"{task}")
            if fate == "decline":
                coord.receive_decline(pending, task, "CHECKPOINT_DECLINED")
                continue
            states = ack_states(cid, task, self.owned)
            self.storage |= {h.object_key for st_ in states.values() for h in st_.handles}
            if fate == "ack":
                coord.receive_acknowledge(pending, task, states)
        outcome = coord.complete_pending_checkpoint(pending)
        self.storage -= set(outcome.objects_to_delete)
        self._check_decision(outcome)
        if outcome.completed:
            self.completed.add(cid)

    @rule(count=st.integers(1, 3))
    def discover_splits(self, count):
        self.coord.enumerator.add_splits(range(self.next_split, self.next_split + count))
        self.next_split += count
        self._assign()

    @rule(data=st.data())
    def region_failover(self, data):
        coord = self.coord
        if coord.store.latest() is None:
            return
        region = data.draw(st.integers(0, coord.num_regions - 1), label="region")
        restored = coord.restore_region(region)
        for (vertex, sub), states in restored.items():
            if vertex == "src":
                self.owned[sub] = list(states["source"].elements)
        self._assign()

    @rule(new_p=st.integers(1, 6))
    def restore_and_rescale(self, new_p):
        coord = self.coord
        latest = coord.store.latest()
        if latest is None:
            return
        old = {op: [list(latest.operator_states[(op, i)].elements) for i in range(latest.parallelism[op])]
               for op in MODES}
        restored = coord.restore_global(new_p)
        for op, mode in MODES.items():
            vertex = coord.vertex_of[op]
            got = [list(restored[(vertex, i)][op].elements) for i in range(new_p)]
            # invariant 8: redistribution, element by element
            assert got == _expected_redistribution(old[op], new_p, mode), (op, mode, old[op], got)
        self.owned = {sub: list(restored[("src", sub)]["source"].elements) for sub in range(new_p)}
        self._assign()

    @precondition(lambda self: not self.coord.sources_exhausted)
    @rule()
    def sources_exhausted(self):
        self.coord.sources_exhausted = True

    def _assign(self):
        for sub, new in self.coord.enumerator.assign_pending().items():
            self.owned.setdefault(sub, []).extend(new)

    # -- invariant 2: decisions follow section 3 ------------------------------------------

    def _check_decision(self, o: C.CheckpointOutcome) -> None:
        s = self.coord.settings
        assert o.forced_global == (s.region_enabled and o.counter_before >= s.max_consecutive_failures)
        if o.status == GLOBAL:
            assert not o.failed_regions and not o.checkpoint.ref_ids() and o.counter_after == 0
            assert set(o.notifications.values()) == {C.N_COMPLETE}
        elif o.status == REGIONAL:
            assert o.failed_regions and s.region_enabled and self.coord.num_regions > 1
            assert len(o.failed_regions) / self.coord.num_regions <= s.max_failure_ratio
            assert not o.forced_global and not o.final and self.completed
            assert o.counter_after == o.counter_before + 1
            regions = self.coord.regions
            fresh = {regions[(self.coord.vertex_of[op], sub)] for (op, sub), st_ in o.checkpoint.operator_states.items()
                     if st_.ref_checkpoint_id is None}
            assert fresh and set(o.failed_regions) and not fresh & set(o.failed_regions)
            for task, kind in o.notifications.items():
                assert kind == (C.N_FALLBACK if regions[task] in o.failed_regions else C.N_REGIONAL_COMPLETE)
            # the coordinator's fallback state matches the mixed view
            state = o.checkpoint.coordinator_state
            held = [e for (op, _), st_ in o.checkpoint.operator_states.items() if op == "source" for e in st_.elements]
            assert len(held) == len(set(held))
            assert set(state["discovered"]) == set(held) | set(state["unassigned"])
            assert not set(held) & set(state["unassigned"])
        else:
            assert o.failed_regions and o.reason
            reset = o.forced_global and s.forced_global_policy == "reset-counter"
            assert o.counter_after == (0 if reset else o.counter_before)

    # -- invariants after every step -------------------------------------------------------

    @invariant()
    def metadata_well_formed(self):  # invariant 1
        for cp in self.coord.store.retained:
            keys = set(cp.operator_states)
            expected = {(op, i) for op in MODES for i in range(cp.parallelism[op])}
            assert keys == expected
            for st_ in cp.operator_states.values():
                if st_.ref_checkpoint_id is None:
                    assert {h.checkpoint_id for h in st_.handles} <= {cp.checkpoint_id}
                else:
                    assert st_.ref_checkpoint_id < cp.checkpoint_id
                    assert st_.ref_checkpoint_id in self.completed, "ref names a checkpoint that never completed"

    @invariant()
    def storage_safety(self):  # invariant 4
        for cp in self.coord.store.retained:
            missing = cp.object_keys() - self.storage
            assert not missing, f"checkpoint {cp.checkpoint_id} references deleted objects {sorted(missing)}"


SETTINGS = settings(max_examples=150, stateful_step_count=25, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


def test_correct_protocol_keeps_invariants():
    run_state_machine_as_test(CoordinatorMachine, settings=SETTINGS)


MODEL_MUTANTS = ["cleaner-ignores-refs", "regional-final-checkpoint", "failed-region-commits", "no-forced-global",
                 "ignore-failure-ratio", "enumerator-no-fallback", "split-drops-remainder", "union-as-split",
                 "fallback-to-aborted"]


@pytest.mark.parametrize("mutant", [pytest.param(m, marks=pytest.mark.slow) if m == "enumerator-no-fallback" else m
                                    for m in MODEL_MUTANTS])  # that one's search takes several seconds
def test_each_model_mutant_breaks_an_invariant(mutant):
    machine = type(f"Machine_{mutant}", (CoordinatorMachine,), {"mutant": mutant})
    with pytest.raises(AssertionError):
        # no shrinking: the point is that some sequence fails, quickly
        run_state_machine_as_test(machine, settings=settings(SETTINGS, max_examples=2000, phases=[Phase.generate],
                                                             report_multiple_bugs=False))
