"""The workload's records: a pure function of (seed, split, sequence number).

In:  the run's seed, a split id and a range of sequence numbers.
Out: record values (integers in [0, 1000)), vectorised with numpy, and the
     count / sum of a range with some sub-ranges skipped.

Each split's values are keyed by one 64-bit draw from the seed's stream table
(`regionchaos.faultkinds.Stream.RECORDS`, indexed by the split), so every bit of the
seed matters; record ``j`` is the splitmix64 finaliser of ``key + j``, modulo 1000.

Both the data plane (which "processes" the records) and validation (which
recomputes the expected state) call these; the emulator never hands its
own sums to validation.
"""

from __future__ import annotations

import functools
from typing import Iterable

import numpy as np

from ..faultkinds import Stream, stream_rng


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, elementwise on uint64."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


@functools.lru_cache(maxsize=1 << 16)  # a swarm asks for every split of thousands of seeds, each many times
def split_key(seed: int, split: int) -> np.uint64:
    """The 64-bit key of ``split``'s record values: the seed's `Stream.RECORDS` stream, indexed by split."""
    return stream_rng(seed, Stream.RECORDS, split).integers(0, 1 << 64, dtype=np.uint64)


def record_values(seed: int, split: int, start: int, end: int) -> np.ndarray:
    """Values of records ``[start, end)`` of ``split``."""
    if end <= start:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(over="ignore"):
        seq = np.arange(start, end, dtype=np.uint64)
        return (_mix(split_key(seed, split) + seq) % np.uint64(1000)).astype(np.int64)


def record_value(seed: int, split: int, seq: int) -> int:
    return int(record_values(seed, split, seq, seq + 1)[0])


def range_count_sum(seed: int, split: int, start: int, end: int,
                    skipped: Iterable[tuple[int, int]] = ()) -> tuple[int, int]:
    """(count, sum) of records ``[start, end)`` minus the ``skipped`` ranges."""
    values = record_values(seed, split, start, end)
    keep = np.ones(len(values), dtype=bool)
    for a, b in skipped:
        lo, hi = max(a, start), min(b, end)
        if hi > lo:
            keep[lo - start : hi - start] = False
    return int(keep.sum()), int(values[keep].sum())
