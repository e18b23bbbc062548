"""Pytest fixtures for storage: one embedded S3 server per test session, a store per test.

Load with ``-p tests.conftest_storage`` or ``pytest_plugins`` in tests/conftest.py.
In:  nothing (the server picks a free port on 127.0.0.1).
Out: `s3_server` (a running S3 endpoint, bucket created: ``.config``, ``.endpoint_url``) and
     `object_store` (an ObjectStore under a fresh ``runs/test-<uuid>/`` prefix in that bucket).

With pytest-xdist (``-n N``, as scripts/test.sh runs the suite) the test session is the
controller and its workers: the controller starts the one server and hands its config to
every worker (``workerinput``), so all workers share it, as all tests of a plain run do.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from regionchaos.storage import EmbeddedS3, ObjectStore, StorageConfig

_SHARED = "regionchaos_s3_config"


@dataclass
class SharedS3:
    """The controller's server, as a worker sees it."""

    endpoint_url: str
    config: StorageConfig


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", None))


def pytest_configure(config: pytest.Config) -> None:
    if _is_controller(config):
        server = EmbeddedS3()
        server.start()
        config._regionchaos_s3 = server  # stopped in pytest_unconfigure


def pytest_unconfigure(config: pytest.Config) -> None:
    server = getattr(config, "_regionchaos_s3", None)
    if server is not None:
        server.stop()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # xdist: runs in the controller, once per worker
    server = getattr(node.config, "_regionchaos_s3", None)
    if server is not None:
        node.workerinput[_SHARED] = server.config.model_dump()


@pytest.fixture(scope="session")
def s3_server(request: pytest.FixtureRequest) -> Iterator[EmbeddedS3 | SharedS3]:
    shared = getattr(request.config, "workerinput", {}).get(_SHARED)
    if shared is None:
        with EmbeddedS3() as server:
            yield server
        return
    # the dummy credentials EmbeddedS3 put into the controller's environment came with the worker's
    config = StorageConfig(**shared)
    yield SharedS3(config.endpoint_url, config)


@pytest.fixture
def object_store(s3_server) -> ObjectStore:
    assert s3_server.config is not None
    return ObjectStore.for_run(s3_server.config, f"test-{uuid.uuid4().hex[:12]}")
