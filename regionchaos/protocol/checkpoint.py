"""CompletedCheckpoint: the metadata of one completed checkpoint.

In:  the coordinator's decision for checkpoint N (per operator x subtask
     entries, fresh or referenced, the OperatorCoordinator state, the
     consecutive-regional counter).
Out: an immutable record, its set of referenced physical objects, and a
     JSON form for ``chk-N/_metadata`` that a restarted JobManager can read back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .. import jsonform
from .state import ChannelStateHandle, OperatorSubtaskState, StateHandle

GLOBAL = "GLOBAL"
REGIONAL = "REGIONAL"

EntryKey = tuple[str, int]  # (operator name, subtask index)


@dataclass(frozen=True)
class CompletedCheckpoint:
    checkpoint_id: int
    checkpoint_type: str  # GLOBAL or REGIONAL
    parallelism: dict[str, int]  # operator -> parallelism at the time
    operator_states: dict[EntryKey, OperatorSubtaskState]
    coordinator_state: dict[str, Any] = field(default_factory=dict)
    consecutive_regional: int = 0  # counter value after this checkpoint
    failed_regions: tuple[int, ...] = ()
    num_regions: int = 1

    def object_keys(self) -> frozenset[str]:
        return self._object_keys

    @cached_property
    def _object_keys(self) -> frozenset[str]:
        out: set[str] = set()
        for s in self.operator_states.values():
            out |= s.object_keys()
        return frozenset(out)

    def ref_ids(self) -> set[int]:
        return {s.ref_checkpoint_id for s in self.operator_states.values() if s.ref_checkpoint_id is not None}

    # -- metadata serialisation ------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return self._json

    @cached_property
    def _json(self) -> dict[str, Any]:
        entries = []
        for (op, sub), s in sorted(self.operator_states.items()):
            entries.append(
                {
                    "operator": op,
                    "subtask": sub,
                    "refCheckpointId": s.ref_checkpoint_id,
                    "handles": [[h.object_key, h.segment, h.checkpoint_id, list(h.elements)] for h in s.handles],
                    "channelState": [
                        [c.object_key, c.segment, c.checkpoint_id, c.channel, list(c.records)] for c in s.channel_state
                    ],
                }
            )
        return {
            "checkpointId": self.checkpoint_id,
            "type": self.checkpoint_type,
            "parallelism": self.parallelism,
            "consecutiveRegional": self.consecutive_regional,
            "failedRegions": list(self.failed_regions),
            "numRegions": self.num_regions,
            "coordinatorState": self.coordinator_state,
            "operatorSubtaskStates": entries,
        }

    def to_bytes(self) -> bytes:
        return self._bytes

    @cached_property
    def _bytes(self) -> bytes:
        return jsonform.dumps(self._json)

    @staticmethod
    def from_json(data: dict[str, Any]) -> CompletedCheckpoint:
        def _elem(e):
            return tuple(e) if isinstance(e, list) else e

        states = {}
        for entry in data["operatorSubtaskStates"]:
            handles = tuple(
                StateHandle(k, seg, cid, tuple(_elem(e) for e in els)) for k, seg, cid, els in entry["handles"]
            )
            channels = tuple(
                ChannelStateHandle(k, seg, cid, _elem(ch), tuple(rec)) for k, seg, cid, ch, rec in entry["channelState"]
            )
            states[(entry["operator"], entry["subtask"])] = OperatorSubtaskState(
                handles, channels, entry["refCheckpointId"]
            )
        return CompletedCheckpoint(
            checkpoint_id=data["checkpointId"],
            checkpoint_type=data["type"],
            parallelism=dict(data["parallelism"]),
            operator_states=states,
            coordinator_state=data["coordinatorState"],
            consecutive_regional=data["consecutiveRegional"],
            failed_regions=tuple(data["failedRegions"]),
            num_regions=data["numRegions"],
        )

    @staticmethod
    def from_bytes(raw: bytes) -> CompletedCheckpoint:
        return CompletedCheckpoint.from_json(jsonform.loads(raw))
