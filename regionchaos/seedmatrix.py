"""Many deep runs at once: seed matrices through the S3 layout (the swarm itself runs on the
fast path, `regionchaos.swarm`).

In:  cells: a scenario name, a seed and overrides each (swarm: ``faults.swarm=true``, so the
     seed also draws which fault kinds are on and how likely); an optional mutant.
Out: per seed its judgement's fields (verdict, failed and unknown invariants, failed rules and
     what explains them, its standing against its scenario) and its row of the outcome table
     (``kind``), with replay lines. Every
     seed is emulated into its own run prefix (control plane in the driver, data plane in the
     driver's process: a Spark job per small run costs more than the run), then all runs are
     judged by the GX suites in one pass over tables that carry ``run_id``
     (`regionchaos.judge.runs.judge_stores`).
"""

from __future__ import annotations

from typing import NamedTuple

from . import runner
from .judge import crashed, run_outcome
from .judge.engine import judging_session
from .judge.runs import judge_stores
from .scenario import load, require_emulation
from .storage import ObjectStore


class Cell(NamedTuple):
    """One run of a matrix: a catalogue scenario, a seed, its overrides (``faults.swarm`` and such)."""
    scenario: str
    seed: int
    overrides: dict | None = None


def judge_cells(cells: list[Cell], *, mutant: str | None = None, storage=None, spark=None, console=None,
                batch: int = 25, on_result=None, keep_runs: bool = True) -> list[dict]:
    """Emulate every cell (scenarios may differ), then judge them `batch` at a time, each batch in one
    GX pass; per cell a result dict, in the cells' order within a batch, crashed cells last (also
    passed to ``on_result`` as soon as its batch is judged). ``keep_runs=False`` deletes each run's
    objects once judged (long matrices of big runs on the embedded server)."""
    say = console.print if console is not None else (lambda *a, **k: None)
    cells = list(cells)
    # every cell's scenario, read once; a real-Flink cell is refused before anything is written
    scenarios = [require_emulation(load(c.scenario, overrides=c.overrides, seed=c.seed), "the seeds matrix")
                 for c in cells]
    out: list[dict] = []
    with runner.storage_for(storage) as config:
        if spark is None:
            spark = judging_session()
        for start in range(0, len(cells), batch):
            stores, meta, crashed_runs = [], {}, {}
            for cell, scenario in zip(cells[start : start + batch], scenarios[start : start + batch]):
                run_id = runner.default_run_id(scenario, mutant)
                replay = runner.replay_line(cell.scenario, cell.seed, cell.overrides, mutant)
                store = ObjectStore.for_run(config, run_id)
                meta[run_id] = {"scenario": cell.scenario, "seed": cell.seed, "replay": replay,
                                "expect": scenario.expect.verdict}
                try:
                    result, _ = runner.start(store, scenario, run_id=run_id, mutant=mutant, replay=replay)
                except Exception as exc:  # noqa: BLE001 - a crashed seed is unknown, and the swarm goes on
                    crashed_runs[run_id] = crashed(run_id, f"emulate failed: {type(exc).__name__}: {exc}",
                                                   scenario=scenario, mutant=mutant)
                    meta[run_id]["stats"] = {}
                    continue
                stores.append(store)
                meta[run_id]["stats"] = result.stats
            judged = {**judge_stores(spark, stores), **crashed_runs}
            for run_id, judgement in judged.items():
                out.append({"run_id": run_id, **meta[run_id],
                            **{k: v for k, v in judgement.fields().items() if k != "findings"},
                            "kind": run_outcome(judgement).kind})
                if on_result is not None:
                    on_result(out[-1])
            if not keep_runs:
                for store in stores:
                    store.delete_many(store.list_keys(""))
            say(f"  judged {len(out)}/{len(cells)} runs of {', '.join(sorted({c.scenario for c in cells}))}")
    return out
