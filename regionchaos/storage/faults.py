"""Storage faults injected into an ObjectStore from a deterministic plan.

In:  a `FaultPlan` drawn by the caller (the nemesis) from the run's seed: which PUTs fail
     and how many times, which PUTs are slow, and the key whose PUT "crashes the
     JobManager". Nothing here is random.
Out: a `FaultyObjectStore` that behaves like `ObjectStore` except for the planned faults,
     and `injected`: one dict per fault that fired, for the run's history, under the name of
     the fault kind that plans it (`regionchaos.faultkinds.STORAGE_PLANS`: ``put_failure``,
     ``slow_put``, ``crash_before_metadata``; one vocabulary from the scenario to the history).

Faults apply to `put`, `put_if_absent` and `put_many` (which calls `put`); keys in the plan
are relative to the run prefix, like every key given to the store. A faulted PUT sends no
request, so it is not counted in `stats`. On an in-memory store (`regionchaos.storage.memory`)
a slow PUT is recorded but not slept: there is no network to be slow, and the emulation's
clock is emulated anyway.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pydantic

from regionchaos.faultkinds import STORAGE_PLANS
from regionchaos.storage.s3 import ObjectStore, StorageConfig, StorageError

FAIL_ALWAYS = sys.maxsize  # a failed_put_keys count that never runs out


class InjectedPutFailure(StorageError):
    """A planned PUT failure (the object is not written)."""


class InjectedCrash(Exception):
    """A planned JobManager crash just before a PUT (e.g. of a ``_metadata`` key).

    Deliberately not a StorageError: code that retries storage errors must not swallow
    a crash. The object is not written.
    """


class FaultPlan(pydantic.BaseModel):
    """Which storage faults to inject. Picklable and JSON-able for the run's history.

    failed_put_keys: key -> how many PUT attempts of it fail before one succeeds
        (`FAIL_ALWAYS` for every attempt); a set/list of keys means once each.
    slow_put_ms: key -> delay before each PUT of it, in milliseconds.
    crash_before_key: the PUT of exactly this key raises `InjectedCrash`, once.
    """

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    failed_put_keys: dict[str, pydantic.PositiveInt] = {}
    slow_put_ms: dict[str, pydantic.NonNegativeInt] = {}
    crash_before_key: str | None = None

    @pydantic.field_validator("failed_put_keys", mode="before")
    @classmethod
    def _keys_fail_once(cls, value: Any) -> Any:
        if isinstance(value, (set, frozenset, list, tuple)):
            return {key: 1 for key in value}
        return value


class FaultyObjectStore(ObjectStore):
    """An ObjectStore whose PUTs fail, stall or crash as `plan` says."""

    def __init__(
        self,
        config: StorageConfig,
        run_prefix: str,
        plan: FaultPlan,
        client: Any = None,
    ) -> None:
        super().__init__(config, run_prefix, client=client)
        self.plan = plan
        self.injected: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._failures_left = dict(plan.failed_put_keys)
        self._crash_pending = plan.crash_before_key is not None

    def put(self, key: str, body: bytes) -> None:
        self._before_put(key)
        super().put(key, body)

    def put_if_absent(self, key: str, body: bytes) -> bool:
        self._before_put(key)
        return super().put_if_absent(key, body)

    def _before_put(self, key: str) -> None:
        """Apply the plan to one PUT attempt of `key`: crash, then failure, then delay."""
        with self._lock:
            if self._crash_pending and key == self.plan.crash_before_key:
                self._crash_pending = False
                self._record(STORAGE_PLANS["crash_before_key"], key)
                raise InjectedCrash(f"injected JobManager crash before PUT of {self.uri(key)}")
            left = self._failures_left.get(key, 0)
            if left > 0:
                self._failures_left[key] = left - 1
                self._record(STORAGE_PLANS["failed_put_keys"], key)
                raise InjectedPutFailure(f"injected PUT failure of {self.uri(key)}")
            delay_ms = self.plan.slow_put_ms.get(key, 0)
            if delay_ms:
                self._record(STORAGE_PLANS["slow_put_ms"], key, delay_ms=delay_ms)
        if delay_ms and not getattr(self.client, "in_memory", False):
            time.sleep(delay_ms / 1000)  # outside the lock: slows this PUT only

    def _record(self, kind: str, key: str, **details: Any) -> None:
        self.injected.append({"kind": kind, "key": key, **details})
