"""The embedded S3 server of the default set-up: moto's server, in this process.

In:  a bucket name, region and prefix (or a `StorageConfig` whose endpoint_url is None).
Out: a running S3 endpoint on ``http://127.0.0.1:<free port>`` with the bucket created,
     and a `StorageConfig` pointing at it; stopped when the ``with`` block ends.

The server listens on 127.0.0.1 only and keeps objects in memory: they vanish with the
process. If no credentials are configured, dummy ones are put into ``os.environ`` (boto3
must sign requests; moto accepts any) and removed again on exit. Start it before a local
Spark session so Spark's Python workers inherit those variables.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from regionchaos.storage.s3 import StorageConfig, StorageError, check_bucket

LOOPBACK = "127.0.0.1"
_DUMMY_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
}


class EmbeddedS3:
    """Context manager: moto's ThreadedMotoServer on loopback, with the bucket created."""

    def __init__(
        self,
        bucket: str = "regionchaos",
        region_name: str = "us-east-1",
        prefix: str = "runs",
        port: int = 0,
    ) -> None:
        self._bucket = bucket
        self._region_name = region_name
        self._prefix = prefix
        self._port = port  # 0: let the OS pick a free port
        self._server = None
        self._env_added: list[str] = []
        self.endpoint_url: str | None = None
        self.config: StorageConfig | None = None
        self.start_seconds: float | None = None

    def start(self) -> StorageConfig:
        """Start the server, create the bucket; returns the config that points at it.

        `start_seconds` records how long this took, moto's import included.
        """
        if self._server is not None:
            raise RuntimeError(f"embedded S3 server already running at {self.endpoint_url}")
        started = time.perf_counter()
        from moto.server import ThreadedMotoServer  # heavy import, only when needed

        if self._port:
            _check_port_free(self._port)
        self._set_dummy_credentials()
        _quiet_request_log()
        self._server = ThreadedMotoServer(ip_address=LOOPBACK, port=self._port, verbose=False)
        self._server.start()
        try:
            host, port = self._server.get_host_and_port()
            self.endpoint_url = f"http://{host}:{port}"
            self.config = StorageConfig(
                endpoint_url=self.endpoint_url,
                bucket=self._bucket,
                region_name=self._region_name,
                prefix=self._prefix,
            )
            create_bucket(self.config)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - started
        return self.config

    def stop(self) -> None:
        """Stop the server and remove the dummy credentials this instance set."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        for name in self._env_added:
            os.environ.pop(name, None)
        self._env_added = []

    def __enter__(self) -> EmbeddedS3:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _set_dummy_credentials(self) -> None:
        has_credentials = "AWS_ACCESS_KEY_ID" in os.environ or "AWS_PROFILE" in os.environ
        wanted = {} if has_credentials else dict(_DUMMY_CREDENTIALS)
        wanted.setdefault("AWS_DEFAULT_REGION", self._region_name)
        for name, value in wanted.items():
            if name not in os.environ:
                os.environ[name] = value
                self._env_added.append(name)


def _check_port_free(port: int) -> None:
    """Raise StorageError if 127.0.0.1:`port` is taken.

    ThreadedMotoServer.start() waits forever when its server cannot bind, so a busy
    port must be caught before starting it.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError as exc:
            raise StorageError(
                f"cannot start the embedded S3 server on {LOOPBACK}:{port}: {exc}"
            ) from exc


def _quiet_request_log() -> None:
    """Silence werkzeug's one-line-per-request log unless the caller configured it.

    moto's server logs every request to stderr through the "werkzeug" logger, which
    floods the console and costs throughput; an explicitly set level is left alone.
    """
    logger = logging.getLogger("werkzeug")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def create_bucket(config: StorageConfig) -> None:
    """Create `config.bucket` if absent (for the embedded server and test set-ups)."""
    client = config.client()
    try:
        kwargs = {}
        if config.region_name != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": config.region_name}
        try:
            client.create_bucket(Bucket=config.bucket, **kwargs)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
    finally:
        client.close()


@contextmanager
def ensure_storage(config: StorageConfig) -> Iterator[StorageConfig]:
    """Yield a usable storage config.

    ``config.endpoint_url is None``: start an `EmbeddedS3` with the same bucket, region
    and prefix, yield its config, stop it afterwards. Otherwise: probe the given
    endpoint and bucket (StorageUnreachable / BucketMissing, nothing created) and yield
    `config` unchanged.
    """
    if config.endpoint_url is not None:
        check_bucket(config)
        yield config
        return
    with EmbeddedS3(config.bucket, config.region_name, config.prefix) as server:
        assert server.config is not None
        yield server.config
