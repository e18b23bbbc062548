"""The embedded S3 server of the default set-up: moto's S3 service, in this process.

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
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from regionchaos.storage.s3 import StorageConfig, StorageError, check_bucket

LOOPBACK = "127.0.0.1"
_DUMMY_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
}


class EmbeddedS3:
    """Context manager: moto's S3 service on loopback, with the bucket created."""

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
        self._set_dummy_credentials()
        _quiet_request_log()
        try:
            self._server = _S3Server(LOOPBACK, self._port)
            host, port = self._server.host_and_port
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


class _S3Server:
    """moto's S3 service alone, served by werkzeug's threaded server on a thread of this process.

    moto's `ThreadedMotoServer` serves every AWS service: per request it works out the
    service from the request, under one lock. Only S3 is ever asked for, so its Flask app is
    served directly, with moto's own request handler: a quarter to a third less server CPU per
    request (bench/results/s3_requests/README.md). The socket is bound here, in the caller's thread, so a busy
    port is an error at once.
    """

    def __init__(self, host: str, port: int) -> None:
        from moto.moto_server.threaded_moto_server import MotoRequestHandler  # heavy imports, only when needed
        from moto.moto_server.werkzeug_app import create_backend_app
        from werkzeug.serving import make_server

        try:
            self._server: Any = make_server(host, port, _AtomicConditionalWrites(create_backend_app("s3")), threaded=True,
                                            request_handler=MotoRequestHandler)
        except (OSError, SystemExit) as exc:  # werkzeug prints a busy port's error and exits
            raise StorageError(f"cannot start the embedded S3 server on {host}:{port}: "
                               f"{exc if isinstance(exc, OSError) else 'address already in use'}") from exc
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-s3", daemon=True)
        self._thread.start()

    @property
    def host_and_port(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _AtomicConditionalWrites:
    """WSGI middleware: conditional requests (``If-None-Match`` / ``If-Match``) one at a time.

    moto checks a PUT's condition and then stores the object as two steps, so two concurrent
    ``If-None-Match: *`` PUTs of one key can both succeed on its threaded server; S3 and MinIO
    decide them atomically (one wins, the other gets 412 or 409). Serialising the conditional
    requests (only the run-id lease makes them: a few per run) gives the embedded server S3's
    semantics."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict, start_response: Any) -> Any:
        if not (environ.get("HTTP_IF_NONE_MATCH") or environ.get("HTTP_IF_MATCH")):
            return self._app(environ, start_response)
        with self._lock:  # the whole request, its response body included
            result = self._app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


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
