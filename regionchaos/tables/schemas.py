"""The tables' schemas: what every other part of `regionchaos.tables` shares.

In:  nothing (constants).
Out: `SCHEMAS` (Spark DDL of every table, the column order of its rows and frames), `TABLES`
     (their names), `column_names`; the DDL helpers `_split_ddl` / `_ddl_types` and the column
     tuples `_COLUMNS`; the key patterns of checkpoint objects (`_CHK`) and sink transaction
     files (`_TXN`) that both reading (`artifacts`) and building rows (`rows`) match.
"""

from __future__ import annotations

import re

_CHK = re.compile(r"^checkpoints/chk-(\d+)/(.+)$")
_TXN = re.compile(r"^sink/txn/chk-(\d+)/tm-(\d+)\.json$")

# Spark DDL of every table (the same column order as the pandas frames)
SCHEMAS: dict[str, str] = {
    "run": (
        "run_id string, scenario string, seed bigint, mutant string, bounded boolean, records_per_split bigint, "
        "splits_total int, initial_splits int, unaligned boolean, region_enabled boolean, max_failure_ratio double, "
        "max_consecutive_failures int, num_retained int, heal_checkpoints int, forced_global_policy string, "
        "coordinator_fallback boolean, partitioning string, exchange string, file_merging boolean, "
        "initial_parallelism int, first_checkpoint_id bigint, fault_attempts int, heal_attempt int, "
        "started boolean, run_finished boolean, job_finished boolean, job_not_finished boolean, "
        "history_events int, history_files int, timeout_ms bigint, region_timeout_ms bigint, semantics string, "
        "findings string"
    ),
    "checkpoints": (
        "run_id string, checkpoint_id bigint, attempt int, trigger_seq bigint, decided_seq bigint, "
        "status string, completed boolean, voided boolean, reason string, forced_global boolean, final boolean, "
        "trigger_counter int, failed_regions array<int>, failed_region_count int, num_regions int, "
        "declined_count int, timed_out_count int, counter_before int, counter_after int, "
        "max_failure_ratio double, max_consecutive_failures int, region_enabled boolean, "
        "subsumed array<bigint>, deleted_count int, healing boolean, job_parallelism int, job_regions int, "
        "metadata_type string, metadata_parallelism string, consecutive_regional int, "
        "coord_discovered array<int>, coord_unassigned array<int>, entry_count int, ref_ids array<bigint>, "
        "ref_depth int, staleness int, completed_seq bigint, stored_digest string, history_digest string"
    ),
    "entries": (
        "run_id string, checkpoint_id bigint, checkpoint_type string, operator string, vertex string, "
        "subtask int, region int, parallelism int, ref_checkpoint_id bigint, min_origin bigint, "
        "max_origin bigint, n_handles int, n_channels int, n_elements int"
    ),
    "entry_splits": (
        "run_id string, checkpoint_id bigint, operator string, subtask int, region int, split int, pos int, "
        "origin_checkpoint_id bigint, ref_checkpoint_id bigint, object_key string, segment string"
    ),
    "handles": (
        "run_id string, checkpoint_id bigint, object_key string, source string, n_segments int"
    ),
    "named_segments": (
        "run_id string, checkpoint_id bigint, operator string, subtask int, kind string, object_key string, "
        "segment string"
    ),
    "object_segments": "run_id string, object_key string, segment string, items int",
    "inventory": "run_id string, key string, area string, checkpoint_id bigint, kind string, size_bytes bigint",
    "deletions": "run_id string, seq bigint, checkpoint_id bigint, object_key string, cause string",
    "retention": "run_id string, checkpoint_id bigint, from_seq bigint, to_seq bigint",
    "state_values": (
        "run_id string, checkpoint_id bigint, operator string, subtask int, ref_checkpoint_id bigint, "
        "origin_checkpoint_id bigint, object_key string, segment string, found boolean, split int, "
        "element string, src bigint, consumed bigint, count bigint, sum bigint, lost string, n_lost int, "
        "pending string, value bigint"
    ),
    "channel_state": (
        "run_id string, checkpoint_id bigint, operator string, subtask int, ref_checkpoint_id bigint, "
        "origin_checkpoint_id bigint, split int, start bigint, end bigint, object_key string, segment string, "
        "readable boolean, found boolean, seg_start bigint, seg_end bigint, seg_count bigint, seg_sum bigint"
    ),
    "truth": "run_id string, split int, start bigint, end bigint, count bigint, sum bigint",
    "commits": (
        "run_id string, commit_file string, pos int, txn_checkpoint_id bigint, split int, start bigint, "
        "end bigint, subtask int, region int, notified_checkpoint_id bigint, cause string, attempt int, "
        "lost string, n_lost int"
    ),
    "transactions": (
        "run_id string, checkpoint_id bigint, tm int, pos int, txn_checkpoint_id bigint, split int, start bigint, "
        "end bigint, count bigint, sum bigint"
    ),
    "task_responses": (
        "run_id string, checkpoint_id bigint, attempt int, vertex string, subtask int, region int, "
        "response string, at_ms bigint, upload_ms bigint, reason string"
    ),
    "events": (
        "run_id string, seq bigint, attempt int, kind string, checkpoint_id bigint, region int, subtask int, "
        "split int, start bigint, end bigint, cause string, restore_from bigint, recovered_latest bigint, "
        "detail string"
    ),
    "redistributions": (
        "run_id string, restore_id int, restore_seq bigint, cause string, restore_from bigint, "
        "old_parallelism int, new_parallelism int, operator string, mode string, side string, kind string, "
        "subtask int, pos int, element string, channel int, start bigint, end bigint"
    ),
}
TABLES = tuple(SCHEMAS)


def column_names(name: str) -> list[str]:
    """The columns of table ``name``, in `SCHEMAS` order."""
    return list(_COLUMNS[name])


def _split_ddl(ddl: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in ddl:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


_COLUMNS = {name: tuple(c.strip().split(" ")[0] for c in _split_ddl(ddl)) for name, ddl in SCHEMAS.items()}


def _ddl_types(ddl: str) -> dict[str, str]:
    return {c.strip().split(" ", 1)[0]: c.strip().split(" ", 1)[1] for c in _split_ddl(ddl)}
