"""Shared fixtures: one embedded S3 server and one Spark session per test session."""

pytest_plugins = ["tests.conftest_storage", "tests.conftest_spark"]
