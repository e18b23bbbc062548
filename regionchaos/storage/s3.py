"""Object store of one run on S3-style storage, through boto3.

In:  a `StorageConfig` (endpoint, bucket, region, top-level prefix; credentials come from
     boto3's standard chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_PROFILE ...)
     and a run prefix such as ``runs/RUN_ID/``.
Out: bytes put into and read from ``s3://BUCKET/<run prefix>/<key>``; counts of S3
     requests and bytes in `ObjectStore.stats`; `StorageError` subclasses whose messages
     name the endpoint, bucket or key and the reason.

Every key handed to `ObjectStore` is relative to its run prefix and validated, so a run can
never write outside ``runs/RUN_ID/``. `StorageConfig` is small and picklable: ship it into
Spark tasks and build an `ObjectStore` there (boto3 clients do not pickle).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import boto3
import botocore.config
import botocore.exceptions
import pydantic

# One S3 call against an endpoint that stops answering (frozen, not dead) gives up after at most
# MAX_ATTEMPTS x (CONNECT_TIMEOUT_S or READ_TIMEOUT_S) plus botocore's standard-mode backoff
# (under 2 s per retry here): 3 x 10 s + ~3 s, so a frozen endpoint ends a run as unknown within
# about a minute (`call_budget_s`). A healthy embedded or MinIO server answers in milliseconds.
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 10.0
MAX_ATTEMPTS = 3
# check_ready probes once, quickly: an unreachable endpoint must fail in seconds.
PROBE_CONNECT_TIMEOUT_S = 2.0
PROBE_READ_TIMEOUT_S = 5.0
DELETE_BATCH_SIZE = 1000  # S3's limit for one DeleteObjects call
# Keys a store keeps for itself under a run prefix (the run-id lease, `regionchaos.storage.lease`):
# never listed by `ObjectStore.list_keys`, so never deleted, mirrored or judged as an artifact.
RESERVED_KEYS = frozenset({"_lease.json"})
DEFAULT_THREADS = 16

_MISSING_CODES = frozenset({"404", "NoSuchKey", "NotFound"})
_NO_BUCKET_CODES = frozenset({"NoSuchBucket"})
# a conditional request whose condition does not hold (409: S3's answer to a concurrent one)
_CONDITION_FAILED_CODES = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})
_UNREACHABLE_ERRORS = (
    botocore.exceptions.EndpointConnectionError,  # includes ConnectTimeoutError
    botocore.exceptions.ReadTimeoutError,
    botocore.exceptions.ConnectionClosedError,
)
_T = TypeVar("_T")

# boto3 sessions of this process, by the AWS_* environment they were made under. A new session
# parses the S3 service model again (about 0.1-0.16 s per client, measured in
# bench/results/s3_requests/README.md); a client made from a kept one costs a few ms. Keyed by the environment, so
# a client still sees the credentials and settings of the moment it is made; by process, so a
# forked Spark worker never shares a parent's session. A session is not thread-safe: one lock.
_SESSIONS: dict[tuple[int, tuple[tuple[str, str], ...]], boto3.session.Session] = {}
_SESSIONS_LOCK = threading.Lock()


def _new_client(**kwargs: Any) -> Any:
    key = (os.getpid(), tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))))
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            session = _SESSIONS[key] = boto3.session.Session()
        return session.client("s3", **kwargs)


class StorageError(Exception):
    """Base of every storage failure raised by this package."""


class StorageUnreachable(StorageError):
    """The S3 endpoint did not answer (refused, timed out, DNS, closed connection)."""


class BucketMissing(StorageError):
    """The endpoint answered but the bucket does not exist."""


class ObjectMissing(StorageError):
    """`ObjectStore.get` of a key that holds no object."""


class StorageConfig(pydantic.BaseModel):
    """Where a run's objects live. Picklable; holds no credentials.

    ``endpoint_url=None`` means "start the embedded S3 server" for `ensure_storage`
    (which fills it in); a client built from a config whose endpoint is still None uses
    boto3's defaults (AWS_ENDPOINT_URL, else AWS itself).
    """

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    endpoint_url: str | None = None
    bucket: str = "regionchaos"
    region_name: str = "us-east-1"
    prefix: str = "runs"
    # every client made from this config (driver, Spark tasks) gives up on a silent endpoint after
    # these: see CONNECT_TIMEOUT_S. Settable for tests and slow links.
    connect_timeout_s: float = pydantic.Field(CONNECT_TIMEOUT_S, gt=0, le=600)
    read_timeout_s: float = pydantic.Field(READ_TIMEOUT_S, gt=0, le=3600)
    max_attempts: int = pydantic.Field(MAX_ATTEMPTS, ge=1, le=10)

    def client(
        self,
        *,
        connect_timeout_s: float | None = None,
        read_timeout_s: float | None = None,
        max_attempts: int | None = None,
    ) -> Any:
        """A new boto3 S3 client (path-style, standard retries, 32 pooled connections), made from
        this process's session for the current AWS_* environment; the timeouts and attempts of
        this config unless given."""
        botocore_config = botocore.config.Config(
            retries={"mode": "standard", "total_max_attempts": max_attempts or self.max_attempts},
            max_pool_connections=32,
            connect_timeout=connect_timeout_s or self.connect_timeout_s,
            read_timeout=read_timeout_s or self.read_timeout_s,
            s3={"addressing_style": "path"},
        )
        return _new_client(endpoint_url=self.endpoint_url, region_name=self.region_name, config=botocore_config)

    def call_budget_s(self) -> float:
        """The longest one S3 call of this config can take against an endpoint that accepts
        connections and never answers: every attempt waits out the read timeout, plus
        botocore's standard-mode backoff between attempts (random, at most 2 ** attempt s)."""
        backoff_s = sum(min(20.0, 2.0 ** n) for n in range(self.max_attempts - 1))
        return self.max_attempts * max(self.connect_timeout_s, self.read_timeout_s) + backoff_s

    def describe_endpoint(self) -> str:
        """The endpoint for messages: its URL, or what boto3 falls back to."""
        return self.endpoint_url or "(default: AWS_ENDPOINT_URL or AWS)"

    def run_prefix(self, run_id: str) -> str:
        """The prefix of one run: ``<prefix>/<run_id>/``."""
        return f"{self.prefix.strip('/')}/{run_id}/"


_CLIENTS: dict[StorageConfig, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def cached_client(config: StorageConfig) -> Any:
    """One boto3 client per process and config, so a task's requests share its connection
    pool (`StorageConfig.client` makes a new client, cheap since it comes from a kept session);
    clients are thread-safe."""
    with _CLIENTS_LOCK:
        if config not in _CLIENTS:
            _CLIENTS[config] = config.client()
        return _CLIENTS[config]


def check_bucket(config: StorageConfig) -> None:
    """Probe the endpoint and bucket once with HeadBucket; creates nothing.

    Raises StorageUnreachable, BucketMissing, or StorageError (credentials, access).
    """
    probe = config.client(
        connect_timeout_s=min(PROBE_CONNECT_TIMEOUT_S, config.connect_timeout_s),
        read_timeout_s=min(PROBE_READ_TIMEOUT_S, config.read_timeout_s),
        max_attempts=1,
    )
    try:
        probe.head_bucket(Bucket=config.bucket)
    except botocore.exceptions.ClientError as exc:
        code = _error_code(exc)
        if code in _MISSING_CODES | _NO_BUCKET_CODES:
            raise BucketMissing(
                f"S3 bucket {config.bucket!r} does not exist at "
                f"{config.describe_endpoint()}. Create it, or check --bucket"
            ) from exc
        raise _translate(exc, config, f"HeadBucket {config.bucket!r}") from exc
    except Exception as exc:
        raise _translate(exc, config, f"HeadBucket {config.bucket!r}") from exc
    finally:
        probe.close()


class StorageStats:
    """Thread-safe counts of S3 requests (by operation) and payload bytes.

    Counts API calls made by `ObjectStore` (one per list page / delete batch), not
    botocore's internal retries.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests_by_op: dict[str, int] = {}
        self.bytes_written = 0
        self.bytes_read = 0

    def record(self, op: str, bytes_written: int = 0, bytes_read: int = 0) -> None:
        with self._lock:
            self.requests_by_op[op] = self.requests_by_op.get(op, 0) + 1
            self.bytes_written += bytes_written
            self.bytes_read += bytes_read

    def add_bytes_read(self, bytes_read: int) -> None:
        with self._lock:
            self.bytes_read += bytes_read

    def merge(self, counts: Mapping[str, Any]) -> None:
        """Add the `as_dict()` of another store (e.g. one returned by a Spark task)."""
        with self._lock:
            for op, n in counts.get("requests_by_op", {}).items():
                self.requests_by_op[op] = self.requests_by_op.get(op, 0) + int(n)
            self.bytes_written += int(counts.get("bytes_written", 0))
            self.bytes_read += int(counts.get("bytes_read", 0))

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            by_op = dict(sorted(self.requests_by_op.items()))
            return {
                "requests": sum(by_op.values()),
                "requests_by_op": by_op,
                "bytes_written": self.bytes_written,
                "bytes_read": self.bytes_read,
            }


def validate_key(key: str) -> str:
    """Return `key` if it is a safe relative key, else raise ValueError.

    Rejected: empty keys, ``..`` anywhere, a leading ``/``, empty segments (``a//b``,
    trailing ``/``), so a key joined to a run prefix stays under that prefix.
    """
    if not isinstance(key, str) or not key:
        raise ValueError(f"storage key must be a non-empty string, got {key!r}")
    if ".." in key:
        raise ValueError(f"storage key {key!r} contains '..'")
    if key.startswith("/"):
        raise ValueError(f"storage key {key!r} starts with '/'")
    if "" in key.split("/"):
        raise ValueError(f"storage key {key!r} has an empty path segment")
    return key


class CountsApart:
    """Which counts a store's request goes to: `stats`, the run's requests, or `stats_apart`: requests
    on the `RESERVED_KEYS` (the lease: clock values in its body, a renewal every few seconds of wall
    time) and on keys under the prefixes given to `count_apart` (a run's wall-clock artifacts)."""

    run_prefix: str

    def _init_counts(self) -> None:
        self.stats = StorageStats()
        self.stats_apart = StorageStats()
        self._apart: tuple[str, ...] = tuple(sorted(RESERVED_KEYS))

    def count_apart(self, prefixes: Iterable[str]) -> None:
        """Count requests on keys starting with one of ``prefixes`` in `stats_apart`, not `stats`."""
        self._apart = tuple(dict.fromkeys((*self._apart, *prefixes)))

    def _stats_of(self, full_key: str) -> StorageStats:
        relative = full_key[len(self.run_prefix):] if full_key.startswith(self.run_prefix) else None
        return self.stats_apart if relative is not None and relative.startswith(self._apart) else self.stats


class ObjectStore(CountsApart):
    """One bucket, one run prefix: put / get / list / delete of keys under the prefix."""

    def __init__(self, config: StorageConfig, run_prefix: str, client: Any = None) -> None:
        self.config = config
        self.run_prefix = validate_key(run_prefix.rstrip("/")) + "/"
        self.client = client if client is not None else config.client()
        self._init_counts()

    @classmethod
    def for_run(cls, config: StorageConfig, run_id: str, client: Any = None) -> ObjectStore:
        """The store of run `run_id`, under ``<config.prefix>/<run_id>/``."""
        return cls(config, config.run_prefix(run_id), client=client)

    def full_key(self, key: str) -> str:
        """The bucket key of relative `key` (validated)."""
        return self.run_prefix + validate_key(key)

    def uri(self, key: str = "") -> str:
        """``s3://bucket/run-prefix/key`` for reports and logs."""
        suffix = self.full_key(key) if key else self.run_prefix
        return f"s3://{self.config.bucket}/{suffix}"

    def check_ready(self) -> None:
        """Fail fast if the endpoint or bucket is not usable; creates nothing."""
        check_bucket(self.config)

    def put(self, key: str, body: bytes) -> None:
        full = self.full_key(key)
        self._call("PutObject", full, self.client.put_object,
                   bytes_written=len(body), Bucket=self.config.bucket, Key=full, Body=body)

    def put_if_absent(self, key: str, body: bytes) -> bool:
        """Conditional PUT (``If-None-Match: *``): True if written, False if the key exists.

        Real S3 may answer 409 ConditionalRequestConflict to concurrent conditional PUTs
        of one key: not written either (False); the caller reads the key and decides.
        """
        return self.put_if_absent_etag(key, body) is not None

    def put_if_absent_etag(self, key: str, body: bytes) -> str | None:
        """`put_if_absent`, answering the new object's ETag, or None if the key exists."""
        return self._put_conditional(key, body, IfNoneMatch="*")

    def put_if_match(self, key: str, body: bytes, etag: str) -> str | None:
        """Conditional PUT (``If-Match: ETAG``): replace the object only if it is still the one
        with `etag`. The new ETag, or None if the object changed or is gone."""
        return self._put_conditional(key, body, IfMatch=etag)

    def _put_conditional(self, key: str, body: bytes, **condition: str) -> str | None:
        full = self.full_key(key)
        response = self._call_unless(_CONDITION_FAILED_CODES, "PutObject", full, self.client.put_object,
                                     bytes_written=len(body), Bucket=self.config.bucket, Key=full, Body=body,
                                     **condition)
        return None if response is None else str(response.get("ETag") or "")

    def get_with_etag(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, or None if there is none."""
        full = self.full_key(key)

        def get() -> tuple[bytes, str]:
            response = self.client.get_object(Bucket=self.config.bucket, Key=full)
            return response["Body"].read(), str(response.get("ETag") or "")

        found = self._call_unless(_MISSING_CODES, "GetObject", full, get)
        if found is not None:
            self._stats_of(full).add_bytes_read(len(found[0]))
        return found

    def delete_if_match(self, key: str, etag: str) -> bool:
        """Delete the object only if it is still the one with `etag` (``If-Match``); True if
        deleted, False if it changed or is gone."""
        full = self.full_key(key)
        response = self._call_unless(_CONDITION_FAILED_CODES | _MISSING_CODES, "DeleteObject", full,
                                     self.client.delete_object, Bucket=self.config.bucket, Key=full, IfMatch=etag)
        return response is not None

    def get(self, key: str) -> bytes:
        """The object's bytes; ObjectMissing if there is none."""
        body = self.get_or_none(key)
        if body is None:
            raise ObjectMissing(f"no object {self.uri(key)}")
        return body

    def get_or_none(self, key: str) -> bytes | None:
        full = self.full_key(key)

        def get_body() -> bytes:  # reading the stream inside _call translates its errors
            return self.client.get_object(Bucket=self.config.bucket, Key=full)["Body"].read()

        body = self._call_unless(_MISSING_CODES, "GetObject", full, get_body)
        if body is not None:
            self._stats_of(full).add_bytes_read(len(body))
        return body

    def exists(self, key: str) -> bool:
        full = self.full_key(key)
        head = self._call_unless(_MISSING_CODES, "HeadObject", full, self.client.head_object,
                                 Bucket=self.config.bucket, Key=full)
        return head is not None

    def list_keys(self, sub_prefix: str = "") -> list[str]:
        """Keys under ``run prefix + sub_prefix``, relative to the run prefix, sorted; without
        the store's own `RESERVED_KEYS` (the run-id lease)."""
        prefix = self.run_prefix
        if sub_prefix:
            trailing = "/" if sub_prefix.endswith("/") else ""
            prefix = self.full_key(sub_prefix.rstrip("/")) + trailing
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.config.bucket, Prefix=prefix
        )
        keys: list[str] = []
        try:
            for page in pages:  # one ListObjectsV2 request per page of <= 1000 keys
                self.stats.record("ListObjectsV2")
                keys.extend(item["Key"][len(self.run_prefix):] for item in page.get("Contents", []))
        except Exception as exc:
            self.stats.record("ListObjectsV2")  # the page request that failed
            raise _translate(exc, self.config, f"ListObjectsV2 {prefix}") from exc
        return sorted(key for key in keys if key not in RESERVED_KEYS)

    def delete_many(self, keys: Iterable[str]) -> int:
        """Delete `keys` in DeleteObjects batches of 1000; returns how many were asked.

        Deleting a key that holds no object is not an error (S3 semantics).
        """
        full_keys = [self.full_key(key) for key in keys]
        for start in range(0, len(full_keys), DELETE_BATCH_SIZE):
            batch = full_keys[start:start + DELETE_BATCH_SIZE]
            response = self._call(
                "DeleteObjects", f"{len(batch)} keys under {self.run_prefix}",
                self.client.delete_objects,
                Bucket=self.config.bucket,
                Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True},
            )
            errors = response.get("Errors", [])
            if errors:
                first = errors[0]
                raise StorageError(
                    f"DeleteObjects failed for {len(errors)} of {len(batch)} keys in "
                    f"bucket {self.config.bucket!r}, e.g. {first.get('Key')}: "
                    f"{first.get('Code')} {first.get('Message')}"
                )
        return len(full_keys)

    def put_many(self, items: Iterable[tuple[str, bytes]], threads: int = DEFAULT_THREADS) -> int:
        """PUT many objects with a thread pool; returns how many were written.

        All keys are validated before the first PUT. On the first failure the PUTs not
        yet started are cancelled and that failure is raised.
        """
        batch = [(validate_key(key), body) for key, body in items]
        self._run_parallel([lambda k=k, b=b: self.put(k, b) for k, b in batch], threads)
        return len(batch)

    def get_many(self, keys: Iterable[str], threads: int = DEFAULT_THREADS) -> dict[str, bytes]:
        """GET many objects with a thread pool; ObjectMissing if any is absent."""
        wanted = [validate_key(key) for key in keys]
        bodies = self._run_parallel([lambda k=k: self.get(k) for k in wanted], threads)
        return dict(zip(wanted, bodies))

    def _run_parallel(self, tasks: list[Callable[[], _T]], threads: int) -> list[_T]:
        return run_parallel(tasks, threads)

    def _call(self, op: str, target: str, fn: Callable[..., _T], *, bytes_written: int = 0,
              **kwargs: Any) -> _T:
        """Count one `op` request on `target` (a full key, or words for messages); translate its failures."""
        self._stats_of(target).record(op, bytes_written=bytes_written)
        try:
            return fn(**kwargs)
        except Exception as exc:
            raise _translate(exc, self.config, f"{op} {target}") from exc

    def _call_unless(self, answer_codes: frozenset[str], op: str, target: str, fn: Callable[..., _T], *,
                     bytes_written: int = 0, **kwargs: Any) -> _T | None:
        """`_call`, where a failure with an S3 error code in `answer_codes` is an answer: None
        (no such key, a condition that does not hold)."""
        try:
            return self._call(op, target, fn, bytes_written=bytes_written, **kwargs)
        except StorageError as exc:
            if _error_code(exc.__cause__) in answer_codes:
                return None
            raise


def run_parallel(tasks: list[Callable[[], _T]], threads: int) -> list[_T]:
    """Every task's result, in order, run on up to `threads` threads. On the first failure the
    tasks not yet started are cancelled and that failure is raised."""
    if not tasks:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(tasks)))) as pool:
        futures = [pool.submit(task) for task in tasks]
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        for future in pending:
            future.cancel()
        for future in futures:
            if future in done and future.exception() is not None:
                raise future.exception()
        return [future.result() for future in futures]


def _error_code(exc: BaseException | None) -> str | None:
    if isinstance(exc, botocore.exceptions.ClientError):
        return str(exc.response.get("Error", {}).get("Code"))
    return None


def _translate(exc: Exception, config: StorageConfig, what: str) -> StorageError:
    """A StorageError naming the endpoint/bucket/operation for a botocore failure."""
    endpoint = config.describe_endpoint()
    if isinstance(exc, botocore.exceptions.ReadTimeoutError):
        return StorageUnreachable(
            f"S3 endpoint {endpoint} did not answer {what} within {config.read_timeout_s:g} s "
            f"({config.max_attempts} attempts): it accepts connections but is not responding. "
            "Check --s3-endpoint / AWS_ENDPOINT_URL"
        )
    if isinstance(exc, botocore.exceptions.ConnectTimeoutError):
        return StorageUnreachable(
            f"S3 endpoint {endpoint} did not accept a connection for {what} within "
            f"{config.connect_timeout_s:g} s ({config.max_attempts} attempts). "
            "Check --s3-endpoint / AWS_ENDPOINT_URL"
        )
    if isinstance(exc, _UNREACHABLE_ERRORS):
        return StorageUnreachable(
            f"S3 endpoint {endpoint} is unreachable: {exc}. "
            "Check --s3-endpoint / AWS_ENDPOINT_URL"
        )
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return StorageError(
            f"no AWS credentials for S3 endpoint {endpoint}: set AWS_ACCESS_KEY_ID / "
            "AWS_SECRET_ACCESS_KEY or AWS_PROFILE"
        )
    code = _error_code(exc)
    if code in _NO_BUCKET_CODES:
        return BucketMissing(f"S3 bucket {config.bucket!r} does not exist at {endpoint}")
    if code in {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"}:
        return StorageError(
            f"access denied to bucket {config.bucket!r} at {endpoint} ({code}) during "
            f"{what}: check the credentials"
        )
    return StorageError(f"{what} failed at {endpoint}, bucket {config.bucket!r}: {exc}")
