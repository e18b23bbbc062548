"""A cross-check on a real-Flink run's raw artifacts: exactly-once output (stored beside them, never the verdict).

In:  the sink's committed files as text (``key,count,seq`` lines, as flink/java/.../CounterJob writes them)
     and the source's range (records 0..N-1, K keys, key = seq mod K), both read back from the run's
     S3 prefix.
Out: a dict: ``status`` passed | failed, and the evidence: records seen, duplicated and missing
     sequence numbers, seq outside the range, lines that do not parse, lines whose key is not seq mod K,
     keys whose counts are not exactly 1..n (n = the key's records in the range), a few examples of each.
     Exactly-once holds when every seq of the range is committed once and every key counts 1..n.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

EXAMPLES = 5


def parse_lines(lines: Iterable[str]) -> tuple[list[tuple[int, int, int]], list[str]]:
    """(key, count, seq) per line, and the lines that are not three integers."""
    rows, bad = [], []
    for line in lines:
        if not line.strip():
            continue
        parts = line.strip().split(",")
        try:
            key, count, seq = (int(part) for part in parts)
        except ValueError:
            bad.append(line)
            continue
        rows.append((key, count, seq))
    return rows, bad


def records_per_key(records: int, keys: int) -> dict[int, int]:
    """How many of seq 0..records-1 fall on each key (key = seq mod keys)."""
    return {key: records // keys + (1 if key < records % keys else 0) for key in range(keys)}


def exactly_once(lines: Iterable[str], records: int, keys: int) -> dict:
    """Check the committed output against the source's range; see the module docstring."""
    rows, bad = parse_lines(lines)
    seqs = Counter(seq for _key, _count, seq in rows)
    duplicated = sorted(seq for seq, times in seqs.items() if times > 1)
    outside = sorted(seq for seq in seqs if not 0 <= seq < records)
    missing = [seq for seq in range(records) if seq not in seqs]
    wrong_key = [row for row in rows if row[0] != row[2] % keys]
    counts: dict[int, list[int]] = defaultdict(list)
    for key, count, _seq in rows:
        counts[key].append(count)
    expected = records_per_key(records, keys)
    bad_keys = sorted(key for key in set(expected) | set(counts)
                      if sorted(counts.get(key, [])) != list(range(1, expected.get(key, 0) + 1)))
    failed = bool(bad or duplicated or outside or missing or wrong_key or bad_keys)
    return {
        "check": "exactly_once", "status": "failed" if failed else "passed",
        "records_expected": records, "lines": len(rows) + len(bad),
        "duplicated": len(duplicated), "duplicated_examples": duplicated[:EXAMPLES],
        "missing": len(missing), "missing_examples": missing[:EXAMPLES],
        "outside_range": len(outside), "malformed": len(bad), "malformed_examples": bad[:EXAMPLES],
        "wrong_key": len(wrong_key), "keys_not_1_to_n": bad_keys[:EXAMPLES * 4],
    }
