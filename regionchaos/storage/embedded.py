"""The embedded S3 server of the default set-up: moto's S3 service, in a child process.

In:  a bucket name, region and prefix (or a `StorageConfig` whose endpoint_url is None).
Out: a running S3 endpoint on ``http://127.0.0.1:<free port>`` with the bucket created,
     and a `StorageConfig` pointing at it; stopped when the ``with`` block ends.

The server listens on 127.0.0.1 only and keeps objects in memory: they vanish with it.
This process binds the socket (a busy port is a `StorageError` here, at once) and hands it
to a child running `regionchaos.storage.s3serve`, which creates the bucket and serves; `start`
returns once it serves. The child ends when stopped or when this process dies (its stdin is our pipe). ``in_process=True``
serves on a thread of this process instead (``scripts/local_s3.py``: it mirrors moto's
backend, which must then live here). If no credentials are configured, dummy ones are put
into ``os.environ`` (boto3 must sign requests; moto accepts any) and removed again on exit.
Start it before a local Spark session so Spark's Python workers inherit those variables.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from regionchaos.storage import s3serve
from regionchaos.storage.s3 import StorageConfig, StorageError, check_bucket

LOOPBACK = "127.0.0.1"
CHILD_START_TIMEOUT_S = 60.0  # the server's child must serve within this (a few tenths of a second when idle)
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
        *,
        in_process: bool = False,
    ) -> None:
        self._bucket = bucket
        self._region_name = region_name
        self._prefix = prefix
        self._port = port  # 0: let the OS pick a free port
        self._in_process = in_process
        self._server: s3serve.S3Server | _ChildServer | None = None
        self._env_added: list[str] = []
        self.endpoint_url: str | None = None
        self.config: StorageConfig | None = None
        self.start_seconds: float | None = None

    def start(self) -> StorageConfig:
        """Start the server, create the bucket; returns the config that points at it.

        `start_seconds` records how long this took, moto's import included (in the child, or here).
        """
        if self._server is not None:
            raise RuntimeError(f"embedded S3 server already running at {self.endpoint_url}")
        started = time.perf_counter()
        self._set_dummy_credentials()
        try:
            if self._in_process:
                try:
                    self._server = s3serve.serve(self._bucket, self._region_name, LOOPBACK, self._port)
                except OSError as exc:
                    raise _cannot_start(LOOPBACK, self._port, str(exc)) from exc
            else:
                self._server = _ChildServer(LOOPBACK, self._port, self._bucket, self._region_name)
            host, port = self._server.host_and_port
            self.endpoint_url = f"http://{host}:{port}"
            self.config = StorageConfig(
                endpoint_url=self.endpoint_url,
                bucket=self._bucket,
                region_name=self._region_name,
                prefix=self._prefix,
            )
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


def _cannot_start(host: str, port: int, why: str) -> StorageError:
    return StorageError(f"cannot start the embedded S3 server on {host}:{port}: {why}")


class _ChildServer:
    """`regionchaos.storage.s3serve` in a child process, serving a socket bound and listening here."""

    def __init__(self, host: str, port: int, bucket: str, region: str) -> None:
        try:
            sock = socket.create_server((host, port))
        except OSError as exc:
            raise _cannot_start(host, port, exc.strerror or str(exc)) from exc
        with sock:  # the child has its own copy: once it is gone, the port refuses connections
            self.host_and_port = sock.getsockname()[:2]
            self._process = subprocess.Popen(
                [sys.executable, s3serve.__file__, "--fd", str(sock.fileno()), "--bucket", bucket, "--region", region],
                pass_fds=(sock.fileno(),), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                start_new_session=True)  # a terminal's Ctrl-C reaches this process, which then stops the child
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Until the child prints `s3serve.READY` (it serves, the bucket exists): a slow start on a loaded machine
        is waited for here, not met by a request's short timeout later; a child that died is a `StorageError`."""
        (host, port), process, out = self.host_and_port, self._process, self._process.stdout
        ready, _, _ = select.select([out], [], [], CHILD_START_TIMEOUT_S)
        line = out.readline().decode(errors="replace").strip() if ready else ""
        if line == s3serve.READY:
            return
        try:
            code = process.wait(timeout=5) if ready else None  # its stdout ended: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        self.stop()
        why = f"it exited with code {code}" if code is not None else f"it did not serve within {CHILD_START_TIMEOUT_S:g} s"
        raise _cannot_start(host, port, f"{why} (its errors are above)")

    def stop(self) -> None:
        process = self._process
        for pipe in (process.stdin, process.stdout):
            try:
                pipe.close()  # stdin's end is what ends the child if this process dies
            except OSError:
                pass
        process.terminate()  # now: a process forked from this one may hold the pipe's other end too
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
