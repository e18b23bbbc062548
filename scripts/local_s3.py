"""A local S3 server whose objects survive restarts: the project's embedded S3 (moto's S3
service, `regionchaos.storage.embedded`) in a process of its own, every write mirrored to disk.

    python scripts/local_s3.py --dir .runs/s3 --port 9010 [--bucket regionchaos]

In:  a folder (created if missing) holding what earlier runs of this server stored; a port.
Out: an S3 endpoint on http://127.0.0.1:PORT with the bucket created and every object of the
     folder loaded; until it is stopped (SIGTERM / SIGINT), each object written is stored as
     DIR/<bucket>/<sha256 of the key>.data (its bytes) and .json (its key), each deleted one
     removed. Prints one line, "local S3: http://127.0.0.1:PORT (objects under DIR)", once ready.

moto keeps objects in memory only and has no persistence of its own; all writes reach its S3
backend through `put_object` (PUT, copy, multipart completion) and all deletes through
`delete_object`, so those two (and bucket creation and deletion) are wrapped, in this process
only, to write through to the folder. Objects are loaded into memory at start: the folder's
size is what the server holds (a smoke run is about a megabyte). Versioning, ACLs, tags and
user metadata are not kept (regionchaos uses none of them). scripts/ui.sh runs it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REGION = "us-east-1"


class FolderMirror:
    """Objects of moto's S3 backend as files: ``<dir>/<bucket>/<sha256(key)>.{data,json}``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.loading = False

    def _paths(self, bucket: str, key: str) -> tuple[Path, Path]:
        stem = self.folder / bucket / hashlib.sha256(key.encode()).hexdigest()
        return stem.with_suffix(".data"), stem.with_suffix(".json")

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # a reader never sees half an object

    def bucket_created(self, bucket: str) -> None:
        (self.folder / bucket).mkdir(parents=True, exist_ok=True)

    def bucket_deleted(self, bucket: str) -> None:
        folder = self.folder / bucket
        if folder.is_dir():
            for path in folder.iterdir():
                path.unlink()
            folder.rmdir()

    def stored(self, bucket: str, key: str, value: bytes) -> None:
        if self.loading:
            return
        data, meta = self._paths(bucket, key)
        data.parent.mkdir(parents=True, exist_ok=True)
        self._write(data, value)
        self._write(meta, json.dumps({"key": key}).encode())  # last: the object exists once this does

    def deleted(self, bucket: str, key: str) -> None:
        data, meta = self._paths(bucket, key)
        meta.unlink(missing_ok=True)
        data.unlink(missing_ok=True)

    def objects(self):
        """(bucket, key, bytes) of every object kept in the folder."""
        for bucket in sorted(p for p in self.folder.iterdir() if p.is_dir()):
            for meta in sorted(bucket.glob("*.json")):
                data = meta.with_suffix(".data")
                if data.exists():
                    yield bucket.name, json.loads(meta.read_text())["key"], data.read_bytes()

    def buckets(self) -> list[str]:
        return sorted(p.name for p in self.folder.iterdir() if p.is_dir())


def write_through(mirror: FolderMirror) -> None:
    """Wrap moto's S3 backend (this process only) so writes and deletes reach ``mirror``."""
    from moto.s3.models import FakeKey, S3Backend

    put, delete = S3Backend.put_object, S3Backend.delete_object
    create, drop = S3Backend.create_bucket, S3Backend.delete_bucket

    def put_object(self, bucket_name, key_name, value, *args, **kwargs):
        key = put(self, bucket_name, key_name, value, *args, **kwargs)
        if isinstance(key, FakeKey):
            mirror.stored(bucket_name, key_name, bytes(key.value))
        return key

    def delete_object(self, bucket_name, key_name, *args, **kwargs):
        result = delete(self, bucket_name, key_name, *args, **kwargs)
        mirror.deleted(bucket_name, key_name)
        return result

    def create_bucket(self, bucket_name, *args, **kwargs):
        bucket = create(self, bucket_name, *args, **kwargs)
        mirror.bucket_created(bucket_name)
        return bucket

    def delete_bucket(self, bucket_name, *args, **kwargs):
        bucket = drop(self, bucket_name, *args, **kwargs)
        mirror.bucket_deleted(bucket_name)
        return bucket

    S3Backend.put_object, S3Backend.delete_object = put_object, delete_object
    S3Backend.create_bucket, S3Backend.delete_bucket = create_bucket, delete_bucket


def load(mirror: FolderMirror) -> int:
    """Put the folder's buckets and objects into moto's backend; returns the object count."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    mirror.loading = True
    try:
        for bucket in mirror.buckets():
            if bucket not in backend.buckets:
                backend.create_bucket(bucket, REGION)
        count = 0
        for bucket, key, value in mirror.objects():
            backend.put_object(bucket, key, value)
            count += 1
    finally:
        mirror.loading = False
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=ROOT / ".runs" / "s3", help="where the objects are kept")
    parser.add_argument("--port", type=int, default=9010, help="port on 127.0.0.1")
    parser.add_argument("--bucket", default="regionchaos", help="bucket created at start")
    args = parser.parse_args(argv)

    from regionchaos.storage.embedded import EmbeddedS3

    args.dir.mkdir(parents=True, exist_ok=True)
    mirror = FolderMirror(args.dir.resolve())
    write_through(mirror)
    count = load(mirror)
    server = EmbeddedS3(args.bucket, REGION, port=args.port, in_process=True)  # the mirror wraps this process's backend
    server.start()  # creates the bucket when the folder had none
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"local S3: {server.endpoint_url} (objects under {mirror.folder}, {count} loaded)", flush=True)
    while not stop.wait(1.0):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
