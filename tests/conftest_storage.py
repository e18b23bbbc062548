"""Pytest fixtures for storage: one embedded S3 server per session, a store per test.

Load with ``-p tests.conftest_storage`` or ``pytest_plugins`` in tests/conftest.py.
In:  nothing (the server picks a free port on 127.0.0.1).
Out: `s3_server` (a running EmbeddedS3, bucket created) and `object_store` (an
     ObjectStore under a fresh ``runs/test-<uuid>/`` prefix in that bucket).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from regionchaos.storage import EmbeddedS3, ObjectStore


@pytest.fixture(scope="session")
def s3_server() -> Iterator[EmbeddedS3]:
    with EmbeddedS3() as server:
        yield server


@pytest.fixture
def object_store(s3_server: EmbeddedS3) -> ObjectStore:
    assert s3_server.config is not None
    return ObjectStore.for_run(s3_server.config, f"test-{uuid.uuid4().hex[:12]}")
