"""CompletedCheckpointStore and its cleaner.

In:  completed checkpoints in completion order; aborted checkpoints' objects; the semantics
     (``flip`` or ``pr``) the retention follows.
Out: the retained checkpoints and, for every subsumption or abort, the physical objects that
     may be deleted.

FLIP (PROTOCOL.md section 4): the store keeps ``state.checkpoints.num-retained`` checkpoints. An
object lives while any retained checkpoint references it, directly or through a ref chain
(N -> L -> ...): a regional checkpoint's fallback entries name L's physical handles, so those
files of L outlive L's subsumption, and only those. With file merging many subtasks' segments
share one object; counting references per object keeps the whole file alive while any segment
is referenced.

PR: a checkpoint referenced by a retained one is kept whole, transitively, beyond
``num-retained``: it is not subsumed at all (its metadata and every file stay) until no
retained checkpoint's ref chain reaches it. As apache/flink's
``DefaultCompletedCheckpointStore.computeReferencedCheckpointIds(completedCheckpoints,
numRetain)`` (FLIP-600's implementation; its contract read in ``RegionalCheckpointCleanerTest``
at commit ea6bf33b47488efcaf83168968af88f8aa09fb5c: ``testReferencedCheckpointNotCleaned``,
``testTransitiveReferenceProtection``, ``testReferenceChainBrokenAfterGlobalCheckpoint``,
``testComputeReferencedCheckpointIdsRefToExternalCheckpoint``): the ids referenced by the
``numRetain`` newest checkpoints, then by every referenced checkpoint still in the store, and
so on; an id no longer in the store is protected too, though its refs cannot be followed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .checkpoint import CompletedCheckpoint

FLIP, PR = "flip", "pr"  # as `regionchaos.protocol.rules`


def referenced_checkpoint_ids(checkpoints: Sequence[CompletedCheckpoint], num_retained: int) -> set[int]:
    """The ids the ``num_retained`` newest of ``checkpoints`` (in completion order) reach through
    refCheckpointId, transitively through the checkpoints still in ``checkpoints``
    (``computeReferencedCheckpointIds``)."""
    by_id = {c.checkpoint_id: c for c in checkpoints}
    todo = [r for c in list(checkpoints)[-num_retained:] for r in c.ref_ids()]
    protected: set[int] = set()
    while todo:
        cid = todo.pop()
        if cid in protected:
            continue
        protected.add(cid)
        if cid in by_id:
            todo.extend(by_id[cid].ref_ids())
    return protected


class CompletedCheckpointStore:
    def __init__(self, num_retained: int, *, mutant: str | None = None, semantics: str = FLIP):
        if num_retained < 1:
            raise ValueError("num_retained must be >= 1")
        if semantics not in (FLIP, PR):
            raise ValueError(f"semantics: {semantics!r}, expected {FLIP!r} or {PR!r}")
        self.num_retained = num_retained
        self.mutant = mutant
        # the objects the finished tasks' final states are in (set by their coordinator): every later checkpoint
        # reuses those states (FLIP-147), so they stay live however old their checkpoint
        self.pinned: Callable[[], set[str]] = set
        self.semantics = semantics
        self._retained: list[CompletedCheckpoint] = []

    @property
    def retained(self) -> list[CompletedCheckpoint]:
        return list(self._retained)

    def latest(self) -> CompletedCheckpoint | None:
        return self._retained[-1] if self._retained else None

    def get(self, checkpoint_id: int) -> CompletedCheckpoint | None:
        return next((c for c in self._retained if c.checkpoint_id == checkpoint_id), None)

    def live_objects(self) -> set[str]:
        """The objects a retained checkpoint names, and those the finished tasks' final states are in."""
        out: set[str] = set(self.pinned())
        for c in self._retained:
            out.update(c.object_keys())
        return out

    def _keep(self, checkpoints: list[CompletedCheckpoint]) -> list[CompletedCheckpoint]:
        """Which of ``checkpoints`` (completion order) stay: the ``num_retained`` newest, and under
        the PR every checkpoint their ref chains reach, whole."""
        newest = checkpoints[-self.num_retained:]
        if self.semantics != PR:
            return newest
        keep = referenced_checkpoint_ids(checkpoints, self.num_retained) | {c.checkpoint_id for c in newest}
        return [c for c in checkpoints if c.checkpoint_id in keep]

    def add(self, checkpoint: CompletedCheckpoint) -> tuple[list[CompletedCheckpoint], set[str]]:
        """Add a completed checkpoint; return (subsumed checkpoints, objects to delete)."""
        latest = self.latest()
        if latest is not None and checkpoint.checkpoint_id <= latest.checkpoint_id:
            raise ValueError(f"checkpoint {checkpoint.checkpoint_id} is not newer than {latest.checkpoint_id}")
        everything = [*self._retained, checkpoint]
        self._retained = self._keep(everything)
        kept = {c.checkpoint_id for c in self._retained}
        subsumed = [c for c in everything if c.checkpoint_id not in kept]
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
    def recover(checkpoints: list[CompletedCheckpoint], num_retained: int, *, mutant: str | None = None,
                semantics: str = FLIP):
        """Rebuild a store from the metadata found on storage (JobManager failover): the same
        retention as `add` applies to what is found."""
        store = CompletedCheckpointStore(num_retained, mutant=mutant, semantics=semantics)
        store._retained = store._keep(sorted(checkpoints, key=lambda c: c.checkpoint_id))
        return store
