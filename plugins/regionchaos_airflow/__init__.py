"""What the Airflow side of regionchaos shares: DAG params, storage hook, task bodies, UI.

Modules:
  `params`         the trigger forms (typed Params), their whole-form check, params -> Scenario
  `runs`           run ids keyed by the Airflow run, result rows, the nightly/swarm judgements
  `storage`        StorageConfig from the `regionchaos_s3` connection or the environment
  `operators`      task bodies the DAGs share (runner call, publish) and the spark-submit switch;
                   the verdict in Airflow's terms (failed task, note XCom, "Chaos report" link)
  `jvmlog`         the Spark driver JVM's output in a task's log at WARNING (not as stderr's ERROR)
  `listener`       the plugin's listener: a finished DAG run's note from its tasks' verdicts
  `app`            the FastAPI app of the plugin: runs listed from storage, reports served
  `trend`          the runs view's nightly trend: the chart's data per nightly DAG run
  `datadocs`       a run's Data Docs inside Airflow: the capability and the sandbox they are served in
  `trigger_check`  the plugin's middleware: a trigger's whole form checked before the run exists

Nothing here imports pyspark, great_expectations or boto3 at import time: DAG files import
this package while they are parsed.
"""
