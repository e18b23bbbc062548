"""CompletedCheckpointStore and its cleaner.

In:  completed checkpoints in completion order; aborted checkpoints' objects.
Out: the retained checkpoints (``state.checkpoints.num-retained``) and, for
     every subsumption or abort, the physical objects that may be deleted.

An object lives while any retained checkpoint references it, directly or
through a ref chain (N -> L -> ...): a regional checkpoint's fallback entries
name L's physical handles, so L's files outlive L's subsumption. With file
merging many subtasks' segments share one object; counting references per
object keeps the whole file alive while any segment is referenced.
"""

from __future__ import annotations

from .checkpoint import CompletedCheckpoint


class CompletedCheckpointStore:
    def __init__(self, num_retained: int, *, mutant: str | None = None):
        if num_retained < 1:
            raise ValueError("num_retained must be >= 1")
        self.num_retained = num_retained
        self.mutant = mutant
        self._retained: list[CompletedCheckpoint] = []

    @property
    def retained(self) -> list[CompletedCheckpoint]:
        return list(self._retained)

    def latest(self) -> CompletedCheckpoint | None:
        return self._retained[-1] if self._retained else None

    def get(self, checkpoint_id: int) -> CompletedCheckpoint | None:
        return next((c for c in self._retained if c.checkpoint_id == checkpoint_id), None)

    def live_objects(self) -> set[str]:
        out: set[str] = set()
        for c in self._retained:
            out.update(c.object_keys())
        return out

    def add(self, checkpoint: CompletedCheckpoint) -> tuple[list[CompletedCheckpoint], set[str]]:
        """Add a completed checkpoint; return (subsumed checkpoints, objects to delete)."""
        latest = self.latest()
        if latest is not None and checkpoint.checkpoint_id <= latest.checkpoint_id:
            raise ValueError(f"checkpoint {checkpoint.checkpoint_id} is not newer than {latest.checkpoint_id}")
        self._retained.append(checkpoint)
        subsumed = self._retained[: -self.num_retained]
        self._retained = self._retained[-self.num_retained :]
        live = self.live_objects()
        doomed: set[str] = set()
        for old in subsumed:
            if self.mutant == "cleaner-ignores-refs":
                doomed |= {h.object_key for s in old.operator_states.values() for h in s.handles
                           if h.checkpoint_id == old.checkpoint_id}
            else:
                doomed |= old.object_keys() - live
        return subsumed, doomed

    def discard_aborted(self, written_objects: set[str]) -> set[str]:
        """Objects written for an aborted checkpoint that no retained one references."""
        return set(written_objects) - self.live_objects()

    @staticmethod
    def recover(checkpoints: list[CompletedCheckpoint], num_retained: int, *, mutant: str | None = None):
        """Rebuild a store from the metadata found on storage (JobManager failover)."""
        store = CompletedCheckpointStore(num_retained, mutant=mutant)
        store._retained = sorted(checkpoints, key=lambda c: c.checkpoint_id)[-num_retained:]
        return store
