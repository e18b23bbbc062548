"""The judge: runs' tables in, one `Judgement` per run and its outcome out.

In:  a run's artifacts (a deep run's prefix, a swarm's Parquet parts, runs given as rows, a real-Flink run's
     artifacts) and the suites in ``expectations/``.
Out: `Judgement`s and, through the one policy table, their `RunOutcome`s (exit code, DAG colour, sentence).

One module a job, each importing only those above it:
- `suites`: the registry of invariants, the suites and rules as files (`load_suites`, `load_custom`);
- `checks`: one run's check per suite from the rules' results, merged into a verdict (`merge_verdict`);
- `stats`: a run's numbers from its tables (`run_stats`);
- `engine`: Great Expectations and Spark session tuning, the one pass (`engine.judge`), `judging_session`;
- `intake`: the tables of a deep run, of many runs, of a swarm (keyed Parquet) and of a real-Flink run;
- `judgement`: `Judgement` and `judgement_of`, the one caller of `regionchaos.findings.outcome` and
  `regionchaos.findings.meets_expectation`;
- `policy`: the outcome table (`run_outcome`, `swarm_outcome`, `RunOutcome`);
- `upload`: the validation results and Data Docs under a run's prefix;
- `runs`: each path's way in (`judge_deep_run`, `judge_stores`, `judge_keyed`, `judge_rows`).

Re-exported here: the judgement and the policy (cheap to import). The engine, intake and runs import Spark's
and GX's helpers: import them by name (`from regionchaos.judge import runs`).
"""

from __future__ import annotations

from .judgement import Judgement, crashed, judgement_of
from .policy import RunOutcome, run_outcome, swarm_outcome

__all__ = ["Judgement", "RunOutcome", "crashed", "judgement_of", "run_outcome", "swarm_outcome"]
