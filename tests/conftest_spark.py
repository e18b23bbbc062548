"""Pytest fixture for Spark: one local session for the whole test session.

Load with ``-p tests.conftest_spark`` or ``pytest_plugins`` in tests/conftest.py.
In:  ``REGIONCHAOS_SPARK_MASTER`` (default ``local[2]``).
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


@pytest.fixture(scope="session")
def spark() -> Iterator["pyspark.sql.SparkSession"]:  # noqa: F821
    from regionchaos.spark import get_spark, stop_spark

    if "AWS_ACCESS_KEY_ID" not in os.environ and "AWS_PROFILE" not in os.environ:
        os.environ.update(_DUMMY_CREDENTIALS)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    session = get_spark("regionchaos-tests")
    yield session
    stop_spark()
