"""An object store in memory: the same `ObjectStore`, a dict instead of an S3 server.

In:  nothing but a run id (and optionally the `StorageConfig` whose bucket and prefix
     the keys should look like).
Out: `MemoryStore`, an `ObjectStore` whose client is `MemoryClient`: a dict-backed
     stand-in for the few boto3 S3 calls `ObjectStore` and `regionchaos.tables` make
     (``put_object`` with ``IfNoneMatch``, ``get_object``, ``head_object``,
     ``delete_objects``, the ``list_objects_v2`` paginator), answering missing keys and
     failed conditions with the same ``ClientError`` codes S3 does.

Why a client and not a second store: every line above the client stays the code a deep
run executes (key validation, request counts, `FaultyObjectStore`'s planned faults, which
subclass `ObjectStore` and reach the client through ``super().put``; `read_run`'s LIST
through ``store.client``), so a run emulated into memory leaves the artifacts, and hence
the table rows, of the same run on S3. The swarm's fast path (`regionchaos.swarm`)
emulates each seed into one of these inside a Spark task.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator

import botocore.exceptions

from regionchaos.storage.s3 import ObjectStore, StorageConfig

PAGE_SIZE = 1000  # keys per ListObjectsV2 page, as S3


def _client_error(code: str, operation: str, message: str) -> botocore.exceptions.ClientError:
    return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": message}}, operation)


class _Body:
    """The ``Body`` of a ``get_object`` answer (``read()`` only)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self) -> bytes:
        return self._data


class _ListPaginator:
    def __init__(self, client: MemoryClient) -> None:
        self._client = client

    def paginate(self, *, Bucket: str, Prefix: str = "") -> Iterator[dict]:  # noqa: N803 - boto3's names
        """Pages of <= `PAGE_SIZE` keys under ``Prefix``, in key order (a snapshot)."""
        objects = self._client.bucket(Bucket)
        with self._client.lock:
            keys = sorted(k for k in objects if k.startswith(Prefix))
            sizes = [len(objects[k]) for k in keys]
        if not keys:
            yield {"KeyCount": 0}
            return
        for start in range(0, len(keys), PAGE_SIZE):
            yield {"Contents": [{"Key": k, "Size": s} for k, s in
                                zip(keys[start:start + PAGE_SIZE], sizes[start:start + PAGE_SIZE])]}


class MemoryClient:
    """The S3 calls of `ObjectStore`, on dicts (bucket -> key -> bytes). Thread-safe."""

    in_memory = True  # `FaultyObjectStore` records a slow PUT here without sleeping

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.buckets: dict[str, dict[str, bytes]] = {}

    def bucket(self, name: str) -> dict[str, bytes]:
        with self.lock:
            return self.buckets.setdefault(name, {})

    def put_object(self, *, Bucket: str, Key: str, Body: bytes, IfNoneMatch: str | None = None) -> dict:  # noqa: N803
        objects = self.bucket(Bucket)
        with self.lock:
            if IfNoneMatch == "*" and Key in objects:
                raise _client_error("PreconditionFailed", "PutObject", "At least one of the pre-conditions "
                                    "you specified did not hold")
            objects[Key] = bytes(Body)
        return {}

    def get_object(self, *, Bucket: str, Key: str) -> dict:  # noqa: N803
        with self.lock:
            data = self.bucket_or_none(Bucket, Key)
        if data is None:
            raise _client_error("NoSuchKey", "GetObject", "The specified key does not exist.")
        return {"Body": _Body(data), "ContentLength": len(data)}

    def head_object(self, *, Bucket: str, Key: str) -> dict:  # noqa: N803
        with self.lock:
            data = self.bucket_or_none(Bucket, Key)
        if data is None:
            raise _client_error("404", "HeadObject", "Not Found")
        return {"ContentLength": len(data)}

    def bucket_or_none(self, bucket: str, key: str) -> bytes | None:
        return self.buckets.get(bucket, {}).get(key)

    def delete_objects(self, *, Bucket: str, Delete: dict) -> dict:  # noqa: N803
        objects = self.bucket(Bucket)
        with self.lock:
            for item in Delete.get("Objects", []):
                objects.pop(item["Key"], None)
        return {}

    def get_paginator(self, name: str) -> _ListPaginator:
        if name != "list_objects_v2":
            raise NotImplementedError(f"MemoryClient has no paginator {name!r}")
        return _ListPaginator(self)


class MemoryStore(ObjectStore):
    """An `ObjectStore` of one run held in this process (`MemoryClient`)."""

    def __init__(self, config: StorageConfig, run_prefix: str, client: Any = None) -> None:
        super().__init__(config, run_prefix, client=client if client is not None else MemoryClient())

    @classmethod
    def for_run(cls, config: StorageConfig | None, run_id: str, client: Any = None) -> MemoryStore:
        """The in-memory store of run `run_id`, keyed as ``<config.prefix>/<run_id>/`` would be."""
        config = config or StorageConfig(endpoint_url="memory://")
        return cls(config, config.run_prefix(run_id), client=client)

    def check_ready(self) -> None:
        """Always ready: there is no endpoint."""

    def _run_parallel(self, tasks, threads: int) -> list:
        """`get_many` / `put_many` one after the other: a dict gains nothing from threads."""
        return [task() for task in tasks]

    def size_bytes(self) -> int:
        """Bytes held under this run's prefix."""
        objects = self.client.bucket(self.config.bucket)
        with self.client.lock:
            return sum(len(v) for k, v in objects.items() if k.startswith(self.run_prefix))
