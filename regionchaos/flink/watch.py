"""Copy what a live checkpoint folder holds, while the job runs (Flink deletes it when the job FINISHES).

In:  the cluster's checkpoint root (``ROOT/JOB_ID/chk-N/...``, ``shared/``, ``taskowned/``) and its REST client.
Out: a `CheckpointWatcher` thread that scans every `every_s` seconds and keeps:
     - `metadata`: the bytes of every ``chk-N/_metadata`` it saw, by (job id, N), copied when first seen
       (and again while its size on disk differs from the copy's);
     - `inventory`: every file it saw, relative to ROOT, with its last size and the scan times it was
       first and last seen (``present_at_end``: still there at the last scan);
     - `raced`: files that vanished between listing and reading (subsumption races: such a file is
       unknown, never missing);
     - `rest_history`: the latest REST checkpoint statistics of every job the JobManager knew
       (a killed JobManager forgets its jobs: the copy is all that is left).
     A ``chk-N`` that never showed a ``_metadata`` is not a checkpoint (`incomplete_checkpoints`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

from regionchaos.flink.rest import FlinkRest, RestUnavailable

CHK_DIR = re.compile(r"chk-(\d+)")


class CheckpointWatcher(threading.Thread):
    """See the module docstring; use as a context manager (start ... final scan and join)."""

    def __init__(self, root: Path, rest: FlinkRest, every_s: float = 0.25, rest_every_s: float = 1.0) -> None:
        super().__init__(name="flink-checkpoint-watcher", daemon=True)
        self.root, self.rest = Path(root), rest
        self.every_s, self.rest_every_s = every_s, rest_every_s
        self.metadata: dict[tuple[str, int], bytes] = {}
        self.inventory: dict[str, dict] = {}
        self.raced: list[dict] = []
        self.rest_history: dict[str, dict] = {}
        self.chk_dirs: set[tuple[str, int]] = set()
        self.scans = 0
        self._t0 = time.monotonic()
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self.error: BaseException | None = None

    def __enter__(self) -> CheckpointWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=30)
        self.scan()  # one last look, after the thread is done

    def run(self) -> None:
        last_rest = 0.0
        try:
            while not self._halt.is_set():
                self.scan()
                if time.monotonic() - last_rest >= self.rest_every_s:
                    self.poll_rest()
                    last_rest = time.monotonic()
                self._halt.wait(self.every_s)
        except BaseException as exc:  # noqa: BLE001 - kept and re-raised by the run
            self.error = exc

    def now(self) -> float:
        return round(time.monotonic() - self._t0, 3)

    def scan(self) -> None:
        """One pass over ROOT: sizes of every file, _metadata copies of new checkpoints."""
        with self._lock:
            now = self.now()
            seen = set()
            for dirpath, _dirs, files in os.walk(self.root):
                for name in files:
                    rel = os.path.relpath(os.path.join(dirpath, name), self.root)
                    size = self._size(rel, now)
                    if size is not None:
                        seen.add(rel)
                        self._record(rel, size, now)
                self._note_checkpoint(Path(dirpath), files, now)
            for rel, entry in self.inventory.items():
                entry["present_at_end"] = rel in seen
            self.scans += 1

    def _size(self, rel: str, now: float) -> int | None:
        try:
            return (self.root / rel).stat().st_size
        except FileNotFoundError:
            self.raced.append({"path": rel, "at_s": now, "what": "stat"})
            return None

    def _record(self, rel: str, size: int, now: float) -> None:
        entry = self.inventory.setdefault(rel, {"path": rel, "first_seen_s": now})
        entry.update(size=size, last_seen_s=now)

    def _note_checkpoint(self, folder: Path, files: list[str], now: float) -> None:
        match = CHK_DIR.fullmatch(folder.name)
        if not match or folder.parent.parent != self.root:
            return
        key = (folder.parent.name, int(match.group(1)))
        self.chk_dirs.add(key)
        if "_metadata" not in files:
            return
        entry = self.inventory.get(str((folder / "_metadata").relative_to(self.root)))
        if key in self.metadata and entry is not None and entry["size"] == len(self.metadata[key]):
            return  # copied whole (a copy taken while Flink was still writing is taken again)
        try:
            self.metadata[key] = (folder / "_metadata").read_bytes()
        except FileNotFoundError:  # subsumed between the listing and the read
            self.raced.append({"path": str((folder / "_metadata").relative_to(self.root)), "at_s": now,
                               "what": "read"})

    def poll_rest(self) -> None:
        try:
            for job in self.rest.jobs():
                self.rest_history[job["jid"]] = self.rest.checkpoints(job["jid"])
        except (RestUnavailable, KeyError):
            pass  # the JobManager is down or restarting: keep what was copied

    def incomplete_checkpoints(self) -> list[tuple[str, int]]:
        """chk-N folders that never showed a _metadata: garbage (or a race), never a checkpoint."""
        return sorted(self.chk_dirs - set(self.metadata))

    def inventory_rows(self) -> list[dict]:
        with self._lock:
            return [dict(self.inventory[rel]) for rel in sorted(self.inventory)]
