"""The last run's frames, kept for the report that follows validation.

In:  a run's store and its frames (`regionchaos.validate` after judging it).
Out: `remember_frames` keeps them (one run at a time), `cached_frames` gives them back for the
     same store (`regionchaos.report`), else None.
"""

from __future__ import annotations

_last: dict[tuple[str, str], dict] = {}


def _store_key(store) -> tuple[str, str]:
    return (store.config.bucket, store.run_prefix)


def remember_frames(store, frames: dict) -> None:
    """Keep one run's frames (the report built right after validation reuses them)."""
    _last.clear()
    _last[_store_key(store)] = frames


def cached_frames(store) -> dict | None:
    return _last.get(_store_key(store))
