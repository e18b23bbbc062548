"""A real Apache Flink cluster as a second source of artifacts.

In:  a Flink distribution (env ``FLINK_HOME``, else the pinned one ``scripts/setup.sh``
     installs into ``.flink/VERSION/pyflink``), Java, a seed and a run's shape (a scenario with
     ``backend: flink``).
Out: a chaos run on a loopback cluster whose raw artifacts (metadata dumps, checkpoint inventory,
     REST checkpoint history, the sink's committed files, the source's range) land under the run's
     S3 prefix, judged by the GX suites that apply to it (`regionchaos run`: `regionchaos.runner.real_flink`).

Modules, in the order they build on each other:
- `spec`: the run's shape and faults (`RealFlink`, a scenario's ``real_flink:`` section; `FlinkRunSpec`);
- `dist`: find and check the distribution (FLINK_HOME, java);
- `build`: compile the Java sources in ``flink/java`` into a cached jar (the job, the metadata dumper);
- `rest`: Flink's REST API (job state, checkpoint history, TaskManagers);
- `cluster`: a standalone cluster of 1 JobManager and K TaskManagers on 127.0.0.1, free ports,
  kill -9 and replacements, job submission, stopping every process it started;
- `watch`: copies what the checkpoint folder holds while the job runs (it is deleted on FINISHED);
- `run`: one seeded chaos run (faults, artifacts to S3); `checks`: exactly-once on the artifacts (a
  cross-check stored beside them, never a verdict: only the suites give one);
- `tables`, `judging`: the artifacts as the suites' tables, judged through the one judge (`regionchaos.judge`).
"""
