"""Swarm testing: many seeds, each drawing its own fault mix (``faults.swarm``).

In:  a base scenario name, a number of seeds, an optional mutant, storage.
Out: ``{"judged", "failing": [{seed, run_id, failed, replay}], "unknown",
     "wall_seconds", "runs": [...]}``. One embedded S3 server and one Spark
     session serve every seed; a failing seed's replay line reproduces it alone.
"""

from __future__ import annotations

import time

from . import runner
from .scenario import load


def swarm(scenario_name: str, seeds: int, *, first_seed: int = 1, mutant: str | None = None, storage=None,
          console=None, spark=None) -> dict:
    say = console.print if console is not None else (lambda *a, **k: None)
    started = time.perf_counter()
    runs, failing, unknown = [], [], 0
    with runner.storage_for(storage) as config:
        if spark is None:
            from .spark import get_spark

            spark = get_spark()
        for i, seed in enumerate(range(first_seed, first_seed + seeds)):
            overrides = {"faults.swarm": True}
            scenario = load(scenario_name, overrides=overrides, seed=seed)
            replay = runner.replay_line(scenario_name, seed, overrides, mutant)
            summary = runner.run(scenario, mutant=mutant, storage=config, spark=spark, replay=replay,
                                 overrides=overrides)
            failed = [c["name"] for c in summary["checks"] if c.get("success") is False]
            runs.append({"seed": seed, "run_id": summary["run_id"], "verdict": summary["verdict"], "failed": failed})
            if summary["verdict"] == "invalid":
                failing.append({"seed": seed, "run_id": summary["run_id"], "failed": failed, "replay": replay})
            elif summary["verdict"] != "valid":
                unknown += 1
            say(f"  [{i + 1}/{seeds}] seed {seed}: {summary['verdict']}" + (f" ({', '.join(failed)})" if failed else ""))
    return {"scenario": scenario_name, "mutant": mutant, "judged": len(runs), "failing": failing, "unknown": unknown,
            "wall_seconds": round(time.perf_counter() - started, 1), "runs": runs}
