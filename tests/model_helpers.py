"""Small builders shared by the protocol-model tests (test code, not an oracle)."""

from __future__ import annotations

from regionchaos.protocol.coordinator import CheckpointCoordinator, CoordinatorSettings
from regionchaos.protocol.enumerator import SplitEnumerator
from regionchaos.protocol.state import BROADCAST, EVEN_SPLIT, UNION, OperatorSubtaskState, StateHandle
from regionchaos.protocol.store import CompletedCheckpointStore
from regionchaos.protocol.topology import POINTWISE, JobEdge, JobGraph, JobVertex

MODES = {"source": EVEN_SPLIT, "union": UNION, "rules": BROADCAST}


def graph(parallelism: int, partitioning: str = POINTWISE, pipelined: bool = True) -> JobGraph:
    """source -> process; the source carries even-split state, process union + broadcast."""
    return JobGraph(
        (JobVertex("src", parallelism, ("source",)), JobVertex("proc", parallelism, ("union", "rules"))),
        (JobEdge("src", "proc", partitioning, pipelined),),
    )


def coordinator(parallelism=4, *, region=True, ratio=0.5, max_consecutive=3, policy="reset-counter",
                partitioning=POINTWISE, pipelined=True, fallback=True, retained=2, mutant=None, first_id=1,
                semantics="flip", store=None):
    enum = SplitEnumerator(parallelism, supports_region_fallback=fallback, mutant=mutant)
    return CheckpointCoordinator(
        graph(parallelism, partitioning, pipelined),
        CoordinatorSettings(region, ratio, max_consecutive, policy, semantics),
        store if store is not None else CompletedCheckpointStore(retained, mutant=mutant),
        operator_modes=MODES,
        enumerator=enum,
        next_checkpoint_id=first_id,
        mutant=mutant,
    )


def ack_states(cid: int, task, owned: dict[int, list[int]]):
    vertex, sub = task
    key = f"chk-{cid}/tm-{sub % 2}"
    if vertex == "src":
        return {"source": OperatorSubtaskState((StateHandle(key, f"source/{sub}", cid, tuple(owned.get(sub, []))),))}
    return {
        "union": OperatorSubtaskState((StateHandle(key, f"union/{sub}", cid, (("u", cid, sub),)),)),
        "rules": OperatorSubtaskState((StateHandle(key, f"rules/{sub}", cid, (("rules", 1),)),)),
    }


def run_checkpoint(coord, owned, fail=(), silent=()):
    """Trigger, let every task respond (decline the tasks in ``fail``,
    stay silent for ``silent``), and complete."""
    pending = coord.trigger_checkpoint()
    for task in sorted(pending.expected - set(pending.acks)):
        if task in fail:
            coord.receive_decline(pending, task, "CHECKPOINT_DECLINED")
        elif task not in silent:
            coord.receive_acknowledge(pending, task, ack_states(pending.checkpoint_id, task, owned))
    return coord.complete_pending_checkpoint(pending)


def start(coord, splits: int) -> dict[int, list[int]]:
    coord.enumerator.add_splits(range(splits))
    owned: dict[int, list[int]] = {}
    for sub, new in coord.enumerator.assign_pending().items():
        owned.setdefault(sub, []).extend(new)
    return owned
