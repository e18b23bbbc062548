"""The source coordinator's gateways to its readers: events it sends a subtask that are held back.

In:  a REGIONAL checkpoint N's completion under the PR's semantics, which source subtasks declined N before
     their snapshot (a decline in the synchronous phase), subtask resets, global restores, and the split
     assignments the coordinator sends.
Out: `Gateways`: which subtasks' gateways are closed, for which checkpoint; a split assignment to a closed
     gateway is held (not delivered to the reader) until the gateway opens again; the held splits a reset
     drops (the enumerator gets them back through ``subtaskReset``, `regionchaos.protocol.enumerator`).

Flink closes a subtask's gateway for checkpoint N when the coordinator's snapshot of N completes
(``OperatorCoordinatorHolder.checkpointCoordinatorInternal``: ``markForCheckpoint``, ``closeGateways``) and
buffers every event sent to it meanwhile (``SubtaskGatewayImpl``: ``blockedEventsMap``; an opening of a later
checkpoint does not release an earlier one's events). It reopens on the subtask's
``AcknowledgeCheckpointEvent(N)``, sent at the end of its synchronous snapshot, on the holder's
``notifyCheckpointComplete`` / ``notifyRegionalCheckpointComplete`` / ``notifyCheckpointAborted`` of N
(``openGatewayAndUnmarkCheckpoint``), on a reset (``subtaskReset`` -> ``setupSubtaskGateway``: a fresh one) and
on a global restore (``resetToCheckpoint``). ``notifyRegionalCheckpointFallback``, which the coordinator of a
failed region gets after a REGIONAL completion, is the one notification that does not call
``openGatewayAndUnmarkCheckpoint`` (raoraoxiong/flink fada049d0bbf90ac4035b171bb2607cb74894215,
``OperatorCoordinatorHolder``; the modern ``SubtaskGatewayImpl`` read from the index, inferred for the PR's
base). So a source subtask that declined N before its snapshot keeps its gateway closed for N after N
completed REGIONAL, until it is reset. The model keeps only that: every other closing lasts no emulated time
(the snapshot is taken at the trigger), and under the FLIP, which is silent on it, the failed region's
coordinator is told of N's end as of an abort, and opens.
"""

from __future__ import annotations


class Gateways:
    def __init__(self) -> None:
        self.closed: dict[int, set[int]] = {}  # subtask -> the checkpoints its gateway is closed for
        self.held: dict[int, list[int]] = {}  # subtask -> splits assigned to it, not delivered

    def close(self, checkpoint_id: int, subtasks) -> None:
        for sub in subtasks:
            self.closed.setdefault(sub, set()).add(checkpoint_id)

    def blocked(self, subtask: int) -> bool:
        return bool(self.closed.get(subtask))

    def hold(self, subtask: int, splits: list[int]) -> None:
        self.held.setdefault(subtask, []).extend(splits)

    def reset(self, subtask: int) -> list[int]:
        """A fresh gateway for a restarted subtask: the splits held for the old one are dropped (returned)."""
        self.closed.pop(subtask, None)
        return self.held.pop(subtask, [])

    def reset_all(self) -> None:
        self.closed, self.held = {}, {}
