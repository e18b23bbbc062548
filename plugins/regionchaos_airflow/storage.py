"""Where runs live, seen from Airflow: a StorageConfig from a connection or the environment.

In:  the Airflow connection ``regionchaos_s3`` (extra: ``endpoint_url``, ``bucket``,
     ``region_name``, ``prefix``; login/password = access key/secret), else the
     environment: ``REGIONCHAOS_S3_ENDPOINT`` (or ``AWS_ENDPOINT_URL_S3`` /
     ``AWS_ENDPOINT_URL``), ``REGIONCHAOS_BUCKET``, ``REGIONCHAOS_PREFIX``,
     ``AWS_DEFAULT_REGION``.
Out: a `StorageConfig`, or None when nothing is configured: then the runner starts its
     embedded S3 server for the duration of one task, and nothing outlives that task.

Shared storage (MinIO in docker-compose, or any S3) is what lets the plugin list runs and
serve reports after the task that made them has finished.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

log = logging.getLogger(__name__)

CONN_ID = "regionchaos_s3"
DEFAULT_BUCKET = "regionchaos"
DEFAULT_PREFIX = "runs"
DEFAULT_REGION = "us-east-1"
ENDPOINT_ENV = ("REGIONCHAOS_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


def storage_from_env(env: Mapping[str, str] = os.environ):
    """StorageConfig from environment variables; None if no endpoint is set."""
    from regionchaos.storage.s3 import StorageConfig

    endpoint = next((env[name] for name in ENDPOINT_ENV if env.get(name)), None)
    if endpoint is None:
        return None
    return StorageConfig(
        endpoint_url=endpoint,
        bucket=env.get("REGIONCHAOS_BUCKET") or DEFAULT_BUCKET,
        region_name=env.get("AWS_DEFAULT_REGION") or env.get("AWS_REGION") or DEFAULT_REGION,
        prefix=env.get("REGIONCHAOS_PREFIX") or DEFAULT_PREFIX,
    )


def storage_from_connection(conn: Any):
    """StorageConfig from an Airflow Connection (``extra`` holds the S3 settings)."""
    from regionchaos.storage.s3 import StorageConfig

    extra = conn.extra_dejson or {}
    endpoint = extra.get("endpoint_url")
    if not endpoint and conn.host:
        scheme = conn.schema or "http"
        endpoint = f"{scheme}://{conn.host}" + (f":{conn.port}" if conn.port else "")
    return StorageConfig(
        endpoint_url=endpoint or None,
        bucket=extra.get("bucket") or DEFAULT_BUCKET,
        region_name=extra.get("region_name") or DEFAULT_REGION,
        prefix=extra.get("prefix") or DEFAULT_PREFIX,
    )


class RegionChaosStorageHook(BaseHook):
    """Resolve the storage of regionchaos runs: connection first, then the environment."""

    conn_name_attr = "conn_id"
    default_conn_name = CONN_ID
    conn_type = "aws"
    hook_name = "regionchaos S3 storage"

    def __init__(self, conn_id: str = CONN_ID) -> None:
        super().__init__()
        self.conn_id = conn_id

    def storage_config(self, *, export_credentials: bool = True):
        """The StorageConfig, or None (embedded S3). With `export_credentials`, the
        connection's login/password become AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of
        this process (boto3 and local Spark workers read them from there)."""
        conn = self._connection_or_none()
        if conn is None:
            return storage_from_env()
        if export_credentials and conn.login:
            os.environ["AWS_ACCESS_KEY_ID"] = conn.login
            os.environ["AWS_SECRET_ACCESS_KEY"] = conn.password or ""
        config = storage_from_connection(conn)
        if config.endpoint_url is None:  # a connection without endpoint: AWS itself or env
            env_config = storage_from_env()
            if env_config is not None:
                config = config.model_copy(update={"endpoint_url": env_config.endpoint_url})
        return config

    def _connection_or_none(self):
        try:
            return self.get_connection(self.conn_id)
        except AirflowNotFoundException:
            return None


def resolve_storage():
    """The storage of this process's runs (see the module docstring)."""
    config = RegionChaosStorageHook().storage_config()
    if config is None:
        log.info("no %s connection and no S3 endpoint in the environment: embedded S3", CONN_ID)
    else:
        log.info("run storage: %s bucket %s prefix %s", config.endpoint_url, config.bucket, config.prefix)
    return config
