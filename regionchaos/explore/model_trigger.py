"""The explorer's run model, its triggering and the start of a checkpoint (`regionchaos.triggering`, the trigger
of `regionchaos.checkpointing`), restated without the data plane: a part of `regionchaos.explore.model.Model`.

In:  the `Model`'s state (its coordinator, queue, attempts and faults).
Out: the methods `Model` inherits: each says which method of the emulator it restates."""

from __future__ import annotations

from ..faultkinds import AttemptFaults
from ..protocol.coordinator import CheckpointOutcome
from ..protocol.rules import UNCOUNTED
from ..protocol.state import OperatorSubtaskState, StateHandle
from ..protocol.topology import Task
from ..task_side import object_key
from .model_base import ARRIVE, CANCELLER, DUE, INTERVAL, RESTART, Attempt


class Triggering:
    """Triggering and the trigger of a checkpoint (a part of `Model`)."""

    # -- triggering (`regionchaos.triggering.Triggering`) ------------------------------------------

    def _due(self, index: int) -> None:
        """`Triggering.due` (a finished job triggers nothing: its run has ended, `Input._job_finished`)."""
        f = self.sc.flink
        if len(self.coord.pending) >= f.max_concurrent:
            self.waiting = index
            return
        if self.last_end_ms is not None and self.now_ms < self.last_end_ms + f.min_pause_ms:
            self._at(self.last_end_ms + f.min_pause_ms, DUE, index)
            return
        self.waiting = None
        self._check_end_of_input()
        attempt = self._trigger(index, self.faults[index])
        self.times = [(attempt.checkpoint_id, self.now_ms)]
        self._at(self.now_ms + f.interval_ms // 2, INTERVAL, index + 1)

    def _checkpoint_ended(self, attempt: Attempt, outcome: CheckpointOutcome) -> None:
        """`Triggering.checkpoint_ended`."""
        self.last_end_ms = self.now_ms
        rescale = outcome.reason not in UNCOUNTED and attempt.index in self.rescales
        if outcome.job_failed or rescale:
            self._at(self.now_ms, RESTART, outcome.job_failed, self.rescales.pop(attempt.index) if rescale else None)
        self._resume()

    def _restart(self, job_failed: bool, parallelism: int | None) -> None:
        """`Triggering._restart`."""
        if job_failed:
            self._global_restore(None)
        if parallelism is not None:
            if self.coord.store.latest() is None:
                self._log("rescale_skipped", parallelism)
            else:
                self._global_restore(parallelism, rescale=True)
        self._resume()

    def _resume(self) -> None:
        """`Triggering.resume`."""
        if self.deferred is not None and not self.coord.pending:
            self._at(self.now_ms, INTERVAL, self.deferred)
            self.deferred = None
        if self.waiting is not None:
            self._at(self.now_ms, DUE, self.waiting)
            self.waiting = None

    # -- a checkpoint's life (`regionchaos.checkpointing.Checkpointing`) ---------------------------

    def _trigger(self, index: int, faults: AttemptFaults) -> Attempt:
        """`Checkpointing.trigger` with `regionchaos.task_side.respond`: each expected task's response
        planned at the trigger (a decline at its upload time, an ack then, a silent task's ack after the
        timeout)."""
        coord = self.coord
        pending = coord.trigger_checkpoint()
        cid = pending.checkpoint_id
        attempt = Attempt(index, cid, self.life, faults, pending)
        self.attempts[cid] = attempt
        expected = sorted(pending.expected)
        timeout = self.sc.flink.timeout_ms
        upload = self.cache.upload_times(self.nemesis, index, expected, timeout)
        states = {t: self._states(cid, t) for t in expected if t not in faults.declines}  # in task order, as taken
        attempt.sources_done = self._sources_done()
        self._await_fallback(faults)
        for task in expected:
            lat = upload[task]
            if task in faults.declines:
                self._at(self.now_ms + lat, ARRIVE, cid, task, None, faults.declines[task])
                continue
            at = timeout + 1 + lat if task in faults.timeouts else lat
            self._at(self.now_ms + at, ARRIVE, cid, task, states[task], None)
        self._at(self.now_ms + (self.settings.deadline_ms or timeout), CANCELLER, cid)
        self._land_inside(attempt, "pending", 0)
        return attempt

    def _states(self, cid: int, task: Task) -> dict[str, OperatorSubtaskState]:
        """A task's snapshot as its operator states: one handle per operator in the object the task side
        names; the source's holds the splits the enumerator gave that subtask (what the coordinator's
        region fallback reads). A bounded job's: the data flow's snapshot (`Input._snapshot`: its positions)."""
        if self.flow is not None:
            return self._snapshot(cid, task)
        splits = tuple(sorted(s for s, sub in self.coord.enumerator.owner.items() if sub == task[1]))
        cached = self.cache.states.get((cid, task, splits))
        if cached is None:
            key = object_key(cid, task, self.tms, self.sc.flink.file_merging)
            cached = self.cache.states[(cid, task, splits)] = {
                op: OperatorSubtaskState((StateHandle(key, f"{op}/{task[1]}", cid,
                                                      splits if op == self.coord.source_operator else ()),))
                for op in self.coord.graph.vertex(task[0]).operators}
        return cached

    def live(self, attempt: Attempt) -> bool:
        return attempt.life == self.life and attempt.checkpoint_id in self.coord.pending
