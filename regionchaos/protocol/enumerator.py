"""The source's OperatorCoordinator: a split enumerator.

In:  discovered splits, subtask failures/resets, checkpoint notifications.
Out: split assignments, the coordinator's checkpointed state, and its
     region-fallback state for a regional checkpoint.

Checkpointed state is ``{"discovered": [...], "unassigned": [...]}``: every
discovered split is either unassigned or owned by exactly one source subtask
in the same checkpoint. For a regional checkpoint the enumerator must describe
the mixed view: splits handed to a failed region after its fallback checkpoint
L are not in that region's state, so they are reported as not yet assigned
(``checkpoint_coordinator_for_region_fallback``).
"""

from __future__ import annotations

import heapq
from typing import Iterable


class SplitEnumerator:
    def __init__(self, parallelism: int, *, supports_region_fallback: bool = True, mutant: str | None = None):
        self.parallelism = parallelism
        self.supports_region_fallback = supports_region_fallback
        self.mutant = mutant
        self.discovered: list[int] = []
        self.owner: dict[int, int] = {}  # split -> subtask
        self.unassigned: list[int] = []

    # -- running ------------------------------------------------------------------

    def add_splits(self, splits: Iterable[int]) -> None:
        for s in splits:
            if s not in self.owner and s not in self.unassigned:
                self.discovered.append(s)
                self.unassigned.append(s)

    def assign_pending(self, eligible: Iterable[int] | None = None) -> dict[int, list[int]]:
        """Hand every unassigned split to the eligible subtask with the fewest
        splits (ties to the lowest index). Returns subtask -> new splits."""
        candidates = sorted(set(range(self.parallelism) if eligible is None else eligible))
        if not candidates or not self.unassigned:
            return {}
        load = {i: 0 for i in candidates}
        for o in self.owner.values():
            if o in load:
                load[o] += 1
        heap = [(n, i) for i, n in load.items()]
        heapq.heapify(heap)
        out: dict[int, list[int]] = {}
        for split in sorted(self.unassigned):
            n, target = heapq.heappop(heap)  # fewest splits, ties to the lowest index
            heapq.heappush(heap, (n + 1, target))
            self.owner[split] = target
            out.setdefault(target, []).append(split)
        self.unassigned = []
        return out

    def add_splits_back(self, subtask: int, restored_splits: Iterable[int]) -> list[int]:
        """A subtask was reset to a state holding ``restored_splits``: splits it
        owned that are not in that state go back to the unassigned pool."""
        restored = set(restored_splits)
        back = sorted(s for s, o in self.owner.items() if o == subtask and s not in restored)
        for s in back:
            del self.owner[s]
        self.unassigned = sorted(set(self.unassigned) | set(back))
        for s in restored:
            self.owner[s] = subtask
        return back

    # -- checkpointing ----------------------------------------------------------------

    def checkpoint_coordinator(self) -> dict:
        return {"discovered": sorted(self.discovered), "unassigned": sorted(self.unassigned)}

    def checkpoint_coordinator_for_region_fallback(self, mixed_view_splits: dict[int, Iterable[int]]) -> dict | None:
        """State consistent with the mixed view (subtask -> splits in its entry),
        or None when this coordinator cannot produce one."""
        if not self.supports_region_fallback:
            return None
        if self.mutant == "enumerator-no-fallback":
            return self.checkpoint_coordinator()
        held = set()
        for splits in mixed_view_splits.values():
            held |= set(splits)
        return {"discovered": sorted(self.discovered), "unassigned": sorted(set(self.discovered) - held)}

    def reset_to_checkpoint(self, state: dict, subtask_splits: dict[int, Iterable[int]], parallelism: int) -> None:
        """Global restore: rebuild from the checkpointed state and the restored subtasks' splits."""
        self.parallelism = parallelism
        self.discovered = list(state["discovered"])
        self.unassigned = list(state["unassigned"])
        self.owner = {s: sub for sub, splits in subtask_splits.items() for s in splits}
