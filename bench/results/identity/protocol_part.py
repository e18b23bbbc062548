"""bench/identity.py's runs, fingerprinted without the record values: what the record-value change may not move.

    .venv/bin/python bench/results/identity/protocol_part.py OUT.json [--seeds N]

Per run (the same matrix and in-memory emulation as ``bench/identity.py``), one SHA-256 over: every
key on the store; the bytes of every object that holds no record value (``scenario.json``, the
history, ``ha/``, the checkpoints' ``_metadata``); the row count of every table; the run's counters
without wall times. State files, sink transactions and commits carry counts and sums of record
values and are left out. Equal before and after a change to the record values: the change moved
record values only (no decision, fault, key or count).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from identity import MUTANTS, fingerprints  # noqa: E402
NO_RECORD_VALUES = ("scenario.json", "history/", "ha/")


def fingerprint(store, rows: dict, stats: dict) -> str:
    h = hashlib.sha256()
    for key in store.list_keys(""):
        h.update(key.encode())
        if key.startswith(NO_RECORD_VALUES) or key.endswith("/_metadata"):
            h.update(store.get(key))
    for table in sorted(rows):
        h.update(f"{table}:{len(rows[table])}".encode())
    counters = {k: v for k, v in stats.items() if "wall" not in k and k != "s3"}
    h.update(json.dumps(counters, sort_keys=True, default=str).encode())
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    # its own records say "not loadable" without the reason: kept, so they compare with these
    out = fingerprints(fingerprint, seeds=args.seeds, mutants=MUTANTS, not_loadable=lambda exc: "not loadable")
    args.out.write_text(json.dumps(out, indent=0, sort_keys=True))
    print(f"{len(out)} runs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
