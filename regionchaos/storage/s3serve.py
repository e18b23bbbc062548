"""moto's S3 service behind werkzeug: the server of `regionchaos.storage.EmbeddedS3`, in a process of its own.

In:  as a script (``python s3serve.py --fd FD --bucket B --region R``): a listening socket inherited from the
     parent (`EmbeddedS3` binds it, so a busy port is the parent's error), the bucket to create; the parent's
     end of stdin.
Out: S3 served on that socket until stdin reaches its end (the parent stopped it, or died) or SIGTERM; the line
     `READY` on stdout once it serves.
     `EmbeddedS3(in_process=True)` calls `serve` in its own process instead (``scripts/local_s3.py`` mirrors moto's
     backend to disk, which needs the backend there).

Why a process of its own: moto's request handling is Python, and in the run's process it took the same
interpreter lock as the emulation, reading the run back and GX (bench/results/probes/README.md:
``large``'s validation 47.1 s against 50.4-51.4 s with the server on a thread). This file imports only the standard
library and moto (not this package), so the child serves a few tenths of a second after it starts; moto and
werkzeug are imported inside the functions that serve, so the parent, which imports this module, never loads them.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from typing import Any

READY = "ready"  # the line the child prints on stdout once it serves


class S3Server:
    """moto's S3 service alone, served by werkzeug's threaded server on a thread of this process.

    moto's `ThreadedMotoServer` serves every AWS service: per request it works out the
    service from the request, under one lock. Only S3 is ever asked for, so its Flask app is
    served directly, with moto's own request handler: a quarter to a third less server CPU per
    request (bench/results/s3_requests/README.md). Either ``fd``, a socket already listening, or
    ``host`` and ``port`` to bind here (OSError when that fails).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, fd: int | None = None) -> None:
        from moto.moto_server.threaded_moto_server import MotoRequestHandler  # heavy imports, only when needed
        from moto.moto_server.werkzeug_app import create_backend_app
        from werkzeug.serving import make_server

        quiet_request_log()
        try:
            self._server: Any = make_server(host, port, AtomicConditionalWrites(create_backend_app("s3")),
                                            threaded=True, request_handler=MotoRequestHandler, fd=fd)
        except SystemExit as exc:  # werkzeug prints a busy port's error and exits
            raise OSError("address already in use") from exc
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


class AtomicConditionalWrites:
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


def quiet_request_log() -> None:
    """Silence werkzeug's one-line-per-request log unless the caller configured it.

    moto's server logs every request to stderr through the "werkzeug" logger, which
    floods the console and costs throughput; an explicitly set level is left alone.
    """
    logger = logging.getLogger("werkzeug")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def create_bucket_in_backend(bucket: str, region: str) -> None:
    """The bucket, made in moto's backend of this process (the account every request maps to without STS)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    backend = s3_backends[DEFAULT_ACCOUNT_ID][get_partition(region)]
    if bucket not in backend.buckets:
        backend.create_bucket(bucket, region)


def serve(bucket: str, region: str, host: str = "127.0.0.1", port: int = 0, *, fd: int | None = None) -> S3Server:
    """The bucket made, then S3 served (`S3Server`): the first request finds the bucket, in either process."""
    create_bucket_in_backend(bucket, region)
    return S3Server(host, port, fd=fd)


def _exit_when_stdin_ends() -> None:
    """The parent holds our stdin's other end: its end (a stop, or the parent's death) ends this process."""
    try:
        while sys.stdin.buffer.read(65536):
            pass
    finally:
        os._exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="moto's S3 on an inherited listening socket (EmbeddedS3's child)")
    parser.add_argument("--fd", type=int, required=True, help="the listening socket's file descriptor")
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--region", required=True)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the parent's to handle; it stops us
    threading.Thread(target=_exit_when_stdin_ends, name="parent-watch", daemon=True).start()
    serve(args.bucket, args.region, fd=args.fd)
    print(READY, flush=True)  # the parent waits for this line
    threading.Event().wait()  # serve until stdin ends or SIGTERM
    return 0


if __name__ == "__main__":
    sys.exit(main())
