"""The workload room: what the job reads, computes and writes.

- `records`: record values, a pure function of (seed, split, sequence number), which the data plane
  and validation both compute from (the emulator never hands its own sums to validation);
- `dataflow`: the source, the operators and the two-phase-commit sink, in offsets and state handles,
  driven by the control plane (`regionchaos.emulator`).
"""

from .dataflow import (
    OPERATOR_MODES,
    PROCESS,
    PROCESS_OPERATORS,
    SOURCE,
    SOURCE_OPERATORS,
    Dataflow,
    SplitProgress,
)
from .records import range_count_sum, record_value, record_values

__all__ = ["OPERATOR_MODES", "PROCESS", "PROCESS_OPERATORS", "SOURCE", "SOURCE_OPERATORS", "Dataflow",
           "SplitProgress", "range_count_sum", "record_value", "record_values"]
