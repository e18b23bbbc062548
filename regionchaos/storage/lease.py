"""The run-id lease: one run at a time owns a run prefix.

In:  an `ObjectStore` of one run prefix (``runs/RUN_ID/``), a time to live, a clock.
Out: `RunLease`, a context manager holding the object ``runs/RUN_ID/_lease.json`` (owner
     token, host, pid, acquired and expiry times) for the ``with`` block, renewed by a
     background thread; `RunIdBusy` (a StorageError: exit 3) if another run holds it;
     `LeaseLost` if it was taken over while held (the holder stalled past its expiry).

Every write is conditional, so the store decides who wins, never a read-then-write race:
taking a free run id is a PUT with ``If-None-Match: *``; taking over an expired (or
unreadable) lease, renewing, and releasing are a PUT / DELETE with ``If-Match`` on the ETag of
the lease object that was read. After every take the lease is read back and its token
checked. The lease key is one of `s3.RESERVED_KEYS`: `ObjectStore.list_keys` never lists it,
so clearing a run prefix for a re-run (`runner.prepare_run`) leaves it in place, and it is
neither mirrored nor judged. A crashed run's lease blocks its run id until it expires
(`LEASE_TTL_S`); a finished run releases it, so re-running a run id stays idempotent.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from types import TracebackType

from regionchaos.storage.s3 import PROBE_CONNECT_TIMEOUT_S, PROBE_READ_TIMEOUT_S, ObjectStore, StorageError

LEASE_KEY = "_lease.json"
LEASE_TTL_S = 300.0  # a crashed run blocks its run id for at most this long
RENEW_EVERY_S = 30.0  # the holder renews well before expiry: ten renewals per time to live
TAKE_ATTEMPTS = 3  # a lease released or taken over between our read and our write: look again

log = logging.getLogger(__name__)


class RunIdBusy(StorageError):
    """Another run holds the run id's lease: refused before anything was written."""


class LeaseLost(StorageError):
    """The lease was taken over (it had expired) while this run still thought it held it."""


def _iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class RunLease:
    """The lease of one run prefix: `acquire` / `renew` / `release`, or ``with RunLease(...)``
    (acquired on entry, renewed every `renew_every_s` in a daemon thread, released on exit,
    also when the block raises)."""

    def __init__(self, store: ObjectStore, run_id: str, *, ttl_s: float = LEASE_TTL_S,
                 renew_every_s: float = RENEW_EVERY_S, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.run_id = run_id
        self.ttl_s = ttl_s
        self.renew_every_s = renew_every_s
        self.clock = clock
        self.token = uuid.uuid4().hex
        self.acquired_at: float | None = None
        self.expires_at: float | None = None
        self.lost: str | None = None  # why, once the lease was found taken over
        self._etag: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the lease object ---------------------------------------------------------------------

    def _body(self, now: float) -> bytes:
        self.expires_at = now + self.ttl_s
        return json.dumps({
            "run_id": self.run_id, "owner": self.token, "host": socket.gethostname(), "pid": os.getpid(),
            "acquired_at": _iso(self.acquired_at or now), "renewed_at": _iso(now),
            "expires_at": _iso(self.expires_at), "expires_at_epoch_s": self.expires_at,
        }, sort_keys=True).encode()

    @staticmethod
    def _parse(body: bytes) -> dict | None:
        try:
            doc = json.loads(body)
            float(doc["expires_at_epoch_s"])
            str(doc["owner"])
        except (ValueError, TypeError, KeyError):
            return None
        return doc

    def _refusal(self, doc: dict) -> RunIdBusy:
        return RunIdBusy(
            f"run id {self.run_id} is held by another run (host {doc.get('host')}, pid {doc.get('pid')}, since "
            f"{doc.get('acquired_at')}) until {doc.get('expires_at')}: use another --run-id, or wait for that run "
            f"to end (a crashed run's hold expires by itself). Lease object: {self.store.uri(LEASE_KEY)}")

    # -- acquire, renew, release ----------------------------------------------------------------

    def acquire(self) -> RunLease:
        """Take the run id: free, or held by a lease that expired (a crashed run) or cannot be read.
        Raises RunIdBusy, naming the holder and until when, if another run holds it."""
        for _ in range(TAKE_ATTEMPTS):
            now = self.clock()
            self.acquired_at = now
            etag = self.store.put_if_absent_etag(LEASE_KEY, self._body(now))
            if etag is None:
                held = self.store.get_with_etag(LEASE_KEY)
                if held is None:
                    continue  # released between our PUT and our GET: try again
                body, held_etag = held
                doc = self._parse(body)
                if doc is not None and doc["owner"] == self.token:  # our write landed; botocore retried it
                    self._etag = held_etag
                    return self
                if doc is not None and float(doc["expires_at_epoch_s"]) > now:
                    raise self._refusal(doc)
                log.warning("run id %s: taking over the %s lease %s", self.run_id,
                            "unreadable" if doc is None else f"expired ({doc.get('expires_at')})", body[:200])
                etag = self.store.put_if_match(LEASE_KEY, self._body(now), held_etag)
                if etag is None:
                    continue  # someone else renewed or took it over first: look again
            self._etag = etag
            self._verify()
            return self
        held = self.store.get_or_none(LEASE_KEY)
        doc = self._parse(held) if held is not None else None
        raise self._refusal(doc or {"expires_at": "unknown (the lease changed hands while we tried)"})

    def _verify(self) -> None:
        """Read the lease back: ours (our token), else RunIdBusy."""
        held = self.store.get_with_etag(LEASE_KEY)
        doc = self._parse(held[0]) if held is not None else None
        if doc is None or doc["owner"] != self.token:
            self._etag = None
            raise self._refusal(doc or {"expires_at": "unknown (the lease vanished as we took it)"})
        self._etag = held[1] or self._etag

    def renew(self) -> None:
        """Push the expiry on, if the lease is still ours; LeaseLost otherwise."""
        if self._etag is None:
            raise LeaseLost(f"run id {self.run_id}: the lease is not held")
        etag = self.store.put_if_match(LEASE_KEY, self._body(self.clock()), self._etag)
        if etag is None:
            self.lost = (f"the lease of run id {self.run_id} was taken over by another run after it expired "
                         f"(this run stalled for more than {self.ttl_s:g} s)")
            self._etag = None
            raise LeaseLost(self.lost)
        self._etag = etag

    def check(self) -> None:
        """LeaseLost if the heartbeat found the lease taken over: the prefix is no longer ours."""
        if self.lost:
            raise LeaseLost(self.lost)

    def release(self, *, quick: bool = False) -> bool:
        """Delete the lease if it is still ours (If-Match); True if it was. ``quick``: one attempt
        with the probe's short timeouts (the end of a block: an endpoint that stopped answering
        must not hold the run up for minutes; the lease then expires by itself)."""
        etag, self._etag = self._etag, None
        if etag is None:
            return False
        store = self.store
        if quick:
            config = store.config
            store = ObjectStore(config, store.run_prefix, client=config.client(
                connect_timeout_s=min(PROBE_CONNECT_TIMEOUT_S, config.connect_timeout_s),
                read_timeout_s=min(PROBE_READ_TIMEOUT_S, config.read_timeout_s), max_attempts=1))
        try:
            return store.delete_if_match(LEASE_KEY, etag)
        finally:
            if quick:
                store.client.close()

    # -- context manager: hold for a block -------------------------------------------------------

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.renew_every_s):
            try:
                self.renew()
            except LeaseLost:
                return
            except StorageError as exc:  # storage is down: the run fails on its own; the lease expires
                log.info("run id %s: lease not renewed: %s", self.run_id, exc)

    def __enter__(self) -> RunLease:
        self.acquire()
        self._stop.clear()
        self._thread = threading.Thread(target=self._heartbeat, name=f"lease-{self.run_id}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:  # a renewal in flight takes milliseconds, unless storage hangs
            self._thread.join(timeout=PROBE_READ_TIMEOUT_S)
            self._thread = None
        try:
            self.release(quick=True)
        except StorageError as release_exc:  # storage went away: the lease expires by itself
            log.warning("run id %s: lease not released (it expires at %s): %s", self.run_id,
                        _iso(self.expires_at or 0), release_exc)
