"""What a real-Flink run is: the job's shape and the faults to draw (pydantic only, no cluster code).

In:  a scenario's ``real_flink:`` section (`RealFlink`: every field below, each validated; bad input names
     the field), or the same fields and a seed for ``python -m regionchaos.flink`` (`FlinkRunSpec`).
Out: `RealFlink`, the section `regionchaos.scenario.Scenario` holds for ``backend: flink``, and `FlinkRunSpec`,
     that section with the seed (`RealFlink.with_seed`), which `regionchaos.flink.run.run_flink` runs.

The fields are declared here once: the scenario key, the shell entry and the run read the same model.
"""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic

# strict like the scenario's scalars: YAML already gives real types, "yes" for a flag is a mistake
Int = Annotated[int, pydantic.Strict()]
Bool = Annotated[bool, pydantic.Strict()]


class RealFlink(pydantic.BaseModel):
    """The job's shape and the faults a seed draws for it (a scenario's ``real_flink:`` section)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    records: Int = pydantic.Field(20000, ge=1, le=10_000_000, description="records the sequence source emits")
    keys: Int = pydantic.Field(16, ge=1, le=1_000_000, description="keys of the keyed counter")
    duration_s: float = pydantic.Field(40.0, gt=0, le=3600, description="seconds the source takes to emit them")
    parallelism: Int = pydantic.Field(2, ge=1, le=64, description="the job's parallelism")
    taskmanagers: Int = pydantic.Field(2, ge=1, le=16, description="TaskManagers of the loopback cluster")
    slots: Int = pydantic.Field(2, ge=1, le=64, description="slots per TaskManager")
    interval_ms: Int = pydantic.Field(500, ge=100, le=600_000, description="checkpoint interval")
    state_backend: Literal["hashmap", "rocksdb"] = pydantic.Field(
        "hashmap", description="hashmap, or rocksdb (incremental checkpoints)")
    retained: Int = pydantic.Field(3, ge=1, le=100, description="retained checkpoints (num-retained)")
    tm_kills: Int = pydantic.Field(1, ge=0, le=20, description="TaskManager kills (kill -9, each replaced)")
    jm_kill: Bool = pydantic.Field(False, description="a JobManager kill, then a resume from a retained checkpoint")
    resume: Literal["latest", "older"] = pydantic.Field(
        "latest", description="the checkpoint the resume takes: the latest retained, or an older one (a negative "
                              "control: it duplicates output)")
    inline_threshold_bytes: Int | None = pydantic.Field(
        None, ge=0, le=1 << 20, description="state below this many bytes is inline in _metadata (None: Flink's "
                                            "default, 20 KB)")

    @pydantic.model_validator(mode="after")
    def _resume_needs_jm_kill(self) -> RealFlink:
        if self.resume == "older" and not self.jm_kill:
            raise ValueError("resume: 'older' needs jm_kill: true (a resume follows a JobManager kill)")
        return self

    def with_seed(self, seed: int) -> FlinkRunSpec:
        return FlinkRunSpec(seed=seed, **self.model_dump())


class FlinkRunSpec(RealFlink):
    """One run: the section's fields and the seed that draws the fault schedule."""

    seed: Int = pydantic.Field(ge=0, le=2**63 - 1)
