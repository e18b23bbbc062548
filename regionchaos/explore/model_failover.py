"""The explorer's run model, faults at their instants and failures with their restarts (`regionchaos.instants`,
`regionchaos.failover`), restated without the data plane: a part of `regionchaos.explore.model.Model`.

In:  the `Model`'s state (its coordinator, queue, attempts and faults).
Out: the methods `Model` inherits: each says which method of the emulator it restates."""

from __future__ import annotations

from ..faultkinds import AttemptFaults
from ..protocol.rules import R_FAILOVER
from ..protocol.store import CompletedCheckpointStore
from ..scenario import Partitioning
from .model_base import Attempt


class Failures:
    """Faults at their instants, failures and restarts (a part of `Model`)."""

    # -- faults at their instants (`regionchaos.instants.Instants`) ---------------------------------

    def _land_rest(self, cid: int) -> None:
        attempt = self.attempts[cid]
        for instant in ("pending", "finalize"):
            self._land_inside(attempt, instant, None)

    def _land_inside(self, attempt: Attempt, instant: str, arrived: int | None) -> None:
        if not attempt.faults.inside or attempt.life != self.life:
            return
        due = [(k, t) for k, t, n in attempt.faults.landing(instant)
               if instant != "pending" or arrived is None or n == arrived]
        for kind, target in due:
            attempt.faults.inside.pop((kind, target), None)
            if attempt.life != self.life:
                return
            self._land(kind, target)

    def _await_fallback(self, faults: AttemptFaults) -> None:
        waiting = [(k, t) for k, t, _ in faults.landing("fallback")]
        for key in waiting:
            faults.inside.pop(key, None)
        self.awaiting_fallback += waiting

    def _land_at_fallback(self, attempt: Attempt) -> None:
        while self.awaiting_fallback and attempt.life == self.life:
            kind, target = self.awaiting_fallback.pop(0)
            self._land(kind, target)

    def _crash_before_metadata(self, attempt: Attempt, kind: str | None) -> bool:
        """`Instants.crash_before_metadata`."""
        if not attempt.faults.crash_before_metadata or attempt.index in self.crashed_in:
            return False
        self.crashed_in.add(attempt.index)
        cid, pending = attempt.checkpoint_id, attempt.pending
        self._shape("crash_before_metadata", kind)
        if kind is not None and self.mutant == "metadata-before-state":
            outcome = self.coord.complete(pending, pending.decision, kind)
            self._decided(outcome)
            self._completed(outcome.checkpoint)
        else:
            self.coord.pending.pop(cid, None)
            self._log("voided", cid)
        self._jobmanager_failover()
        return True

    # -- failures and restarts (`regionchaos.failover.Failover`) -------------------------------------

    def _crash(self, faults: AttemptFaults) -> bool:
        """`Failover.crash`."""
        if faults.between("jobmanager_failover", faults.jobmanager_failover):
            self._jobmanager_failover()
            return True
        regions = list(faults.between("subtask_crash", faults.region_crashes))
        for tm in faults.between("taskmanager_loss", faults.taskmanager_losses):
            regions += self._lost(tm)
        self._fail_regions(regions)
        return bool(regions)

    def _land(self, kind: str, target) -> None:
        """`Failover.land`."""
        if kind == "jobmanager_failover":
            self._jobmanager_failover()
            return
        regions = self._lost(target) if kind == "taskmanager_loss" else [target]
        if all(r < self.coord.num_regions for r in regions):
            self._fail_regions(regions)
            self._assign_splits()

    def _lost(self, tm: int) -> list[int]:
        coord = self.coord
        return sorted({coord.regions[t] for t in coord.graph.tasks() if t[1] % self.tms == tm})

    def _fail_regions(self, regions: list[int]) -> None:
        for region in dict.fromkeys(regions):
            self._region_failover(region)

    def _region_failover(self, region: int) -> None:
        """`Failover.region_failover`."""
        coord = self.coord
        if coord.store.latest() is None or not self._embarrassingly_parallel():
            self._global_restore(None)
            return
        self._shape("region_failover", self._phases())
        self._abort_pending()
        restored = coord.restore_region(region)
        self._log("region_failover", region, coord.store.latest().checkpoint_id)
        self._apply_restore(restored, partial=True)

    def _embarrassingly_parallel(self) -> bool:
        t = self.sc.topology
        return (t.partitioning == Partitioning.FORWARD and t.exchange.value == "pipelined"
                and self.coord.num_regions > 1)

    def _abort_pending(self) -> None:
        if self.coord.pending:
            self._abort_all(R_FAILOVER)

    def _global_restore(self, parallelism: int | None, *, rescale: bool = False) -> None:
        """`Failover.global_restore` (and `Failover.rescale`, whose caller checked for a completed checkpoint)."""
        self._shape("global_restore", self._phases(), rescale)
        self._abort_pending()
        coord = self.coord
        if coord.store.latest() is None:
            self._restart_from_scratch()
            return
        new_p = parallelism or self.parallelism
        latest = coord.store.latest()
        restored = coord.restore_global(new_p)
        self._rediscover()
        self.parallelism = new_p
        self._log("global_restore", latest.checkpoint_id, new_p)
        self._apply_restore(restored, partial=False)

    def _rediscover(self) -> None:
        """`Failover._rediscover`: the initial splits (discovered ones are data here: see `regionchaos.explore.scope`)."""
        enum = self.coord.enumerator
        known = set(enum.discovered)
        enum.add_splits(s for s in range(self.sc.workload.splits) if s not in known)

    def _restart_from_scratch(self) -> None:
        """`Failover.restart_from_scratch`."""
        self._log("restart_from_scratch")
        enum = self.coord.enumerator
        self._rediscover()
        self._flow_from_scratch()
        self.coord.source.gateways.reset_all()
        enum.owner = {}
        enum.unassigned = sorted(enum.discovered)
        self.coord.finished = {}
        self._assign_splits()

    def _jobmanager_failover(self) -> None:
        """`Failover.jobmanager_failover`: a new coordinator from what is on storage."""
        self._shape("jobmanager_failover", self._phases())
        for cid in sorted(self.coord.pending):  # in memory only: never completed, never aborted
            self._log("voided", cid)
        next_id = self.coord.next_checkpoint_id
        store = CompletedCheckpointStore.recover(sorted(self.storage.values(), key=lambda c: c.checkpoint_id),
                                                 self.sc.flink.num_retained, mutant=self.mutant,
                                                 semantics=self.sc.flink.semantics)
        latest = store.latest()
        configured = self.parallelism
        if latest is not None:
            self.parallelism = latest.parallelism["source"]
        self.coord = self._new_coordinator(store, next_id)
        self.life += 1
        self._log("jobmanager_failover", [c.checkpoint_id for c in store.retained])
        if latest is None:
            self._restart_from_scratch()
        else:
            self._global_restore(configured)
        self._resume()
