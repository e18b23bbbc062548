"""Pytest fixture for Spark: one local session for the whole test session.

Load with ``-p tests.conftest_spark`` or ``pytest_plugins`` in tests/conftest.py.
In:  ``REGIONCHAOS_SPARK_MASTER`` (default ``local[2]``); ``REGIONCHAOS_SPARK_DRIVER_MEMORY`` (default here
     `TESTS_DRIVER_MEMORY`, for this session's JVM only).
Out: `spark`, the process's shared SparkSession (`regionchaos.spark.get_spark`),
     stopped at the end of the test session.

Spark's Python workers inherit the environment the JVM started with, so boto3 in a
Spark task finds credentials only if they were set before the session started. For
the embedded S3 server (which accepts any credentials) dummy ones are set here when
none are configured, exactly as `regionchaos.storage.EmbeddedS3` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

_DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
# The heap of the tests' one long-lived driver JVM (unless REGIONCHAOS_SPARK_DRIVER_MEMORY says otherwise): it judges
# hundreds of runs, and collects less with more heap. Measured (bench/results/probes/README.md, "The driver's heap"):
# tests/test_swarm.py and tests/test_validate.py in one process, alternating, 100.6 and 96.3 JVM CPU s with 2.5 GB
# against 106.5 and 101.7 with the 1.5 GB default; 1 GB had made the whole command a minute slower.
# Only this JVM: the CLI processes the tests start keep the default.
TESTS_DRIVER_MEMORY = "2560m"


@pytest.fixture(scope="session")
def spark() -> Iterator["pyspark.sql.SparkSession"]:  # noqa: F821
    from regionchaos.spark import DRIVER_MEMORY_ENV, get_spark, stop_spark

    if "AWS_ACCESS_KEY_ID" not in os.environ and "AWS_PROFILE" not in os.environ:
        os.environ.update(_DUMMY_CREDENTIALS)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    chosen = os.environ.get(DRIVER_MEMORY_ENV)
    os.environ[DRIVER_MEMORY_ENV] = chosen or TESTS_DRIVER_MEMORY
    try:
        session = get_spark("regionchaos-tests")
    finally:  # the processes the tests start see the environment as it was
        if chosen is None:
            os.environ.pop(DRIVER_MEMORY_ENV, None)
        else:
            os.environ[DRIVER_MEMORY_ENV] = chosen
    yield session
    stop_spark()


@pytest.fixture(scope="session")
def mutant_deep_run(s3_server, spark) -> tuple[str, dict]:
    """One deep run (`runner.run`: Spark data plane, GX, Data Docs, report) of smoke seed 1 with the mutant
    ignore-failure-ratio, on the session's S3 server: (run id, its summary). Read-only for its users
    (tests/test_validate.py's end-to-end checks, tests/test_report_browser.py's page), which asked for
    the same run apart and so paid a deep run twice."""
    from regionchaos import runner
    from regionchaos.scenario import load

    run_id = "e2e-smoke-s1-ignore-failure-ratio"
    summary = runner.run(load("smoke", seed=1), mutant="ignore-failure-ratio", storage=s3_server.config,
                         run_id=run_id, spark=spark)
    return run_id, summary
