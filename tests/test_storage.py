"""Tests of regionchaos.storage against a real moto server over HTTP (no mocks).

In:  the `s3_server` / `object_store` fixtures of tests/conftest_storage.py.
Out: pass/fail of the store's contract: round trips, listing past one page, conditional
     PUT, batched deletes, key confinement, error messages, planned faults, counters; the
     run-id lease (refusal, expiry takeover, release, one winner among concurrent takers);
     a frozen endpoint (a local TCP server that accepts and never answers) is StorageUnreachable.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pydantic
import pytest

from regionchaos.storage import (
    FAIL_ALWAYS,
    BucketMissing,
    EmbeddedS3,
    FaultPlan,
    FaultyObjectStore,
    InjectedCrash,
    InjectedPutFailure,
    LeaseLost,
    ObjectMissing,
    ObjectStore,
    RunIdBusy,
    RunLease,
    StorageConfig,
    StorageError,
    StorageUnreachable,
    ensure_storage,
)

UNREACHABLE = "http://127.0.0.1:1"


def _bucket_names(config: StorageConfig) -> set[str]:
    return {b["Name"] for b in config.client().list_buckets()["Buckets"]}


def _raw_keys(store: ObjectStore) -> list[str]:
    """Full keys in the whole bucket under the run prefix, read around the store."""
    response = store.client.list_objects_v2(Bucket=store.config.bucket, Prefix=store.run_prefix)
    return [item["Key"] for item in response.get("Contents", [])]


# --- round trips -------------------------------------------------------------------------


def test_put_get_exists_round_trip(object_store: ObjectStore) -> None:
    object_store.put("chk-1/state-0", b"\x00state\xff")

    assert object_store.get("chk-1/state-0") == b"\x00state\xff"
    assert object_store.exists("chk-1/state-0")
    assert not object_store.exists("chk-1/state-1")
    assert object_store.get_or_none("chk-1/state-1") is None
    with pytest.raises(ObjectMissing, match="chk-1/state-1"):
        object_store.get("chk-1/state-1")
    assert _raw_keys(object_store) == [object_store.run_prefix + "chk-1/state-0"]


def test_put_overwrites(object_store: ObjectStore) -> None:
    object_store.put("k", b"one")
    object_store.put("k", b"two")
    assert object_store.get("k") == b"two"


@pytest.mark.slow
def test_list_and_delete_past_one_page(object_store: ObjectStore) -> None:
    keys = [f"many/{i:05d}" for i in range(1005)]  # > 1000: two list pages, two batches
    assert object_store.put_many((key, key.encode()) for key in keys) == len(keys)
    object_store.put("other/a", b"x")

    lists_before = object_store.stats.requests_by_op.get("ListObjectsV2", 0)
    assert object_store.list_keys("many/") == keys
    assert object_store.stats.requests_by_op["ListObjectsV2"] - lists_before == 2
    assert object_store.list_keys() == keys + ["other/a"]
    assert object_store.get_many(keys[1000:1002]) == {k: k.encode() for k in keys[1000:1002]}

    before = object_store.stats.as_dict()["requests_by_op"]
    assert object_store.delete_many(keys) == len(keys)
    after = object_store.stats.as_dict()["requests_by_op"]
    assert after["DeleteObjects"] - before.get("DeleteObjects", 0) == 2
    assert object_store.list_keys() == ["other/a"]


def test_runs_are_isolated_even_with_sibling_prefixes(s3_server: EmbeddedS3) -> None:
    run_id = f"iso-{uuid.uuid4().hex[:8]}"
    store = ObjectStore.for_run(s3_server.config, run_id)
    sibling = ObjectStore.for_run(s3_server.config, run_id + "x")  # runs/<id>x/ vs runs/<id>/
    store.put("a", b"1")
    sibling.put("b", b"2")

    assert store.run_prefix == f"runs/{run_id}/"
    assert store.list_keys() == ["a"]
    assert sibling.list_keys() == ["b"]
    assert store.get_or_none("b") is None


def test_put_if_absent_does_not_overwrite(object_store: ObjectStore) -> None:
    assert object_store.put_if_absent("chk-3/_metadata", b"first") is True
    assert object_store.put_if_absent("chk-3/_metadata", b"second") is False
    assert object_store.get("chk-3/_metadata") == b"first"


def test_delete_many_leaves_other_keys(object_store: ObjectStore) -> None:
    object_store.put_many([(f"d/{i}", b"x") for i in range(5)])
    object_store.delete_many(["d/0", "d/2", "d/4", "d/missing"])
    assert object_store.list_keys() == ["d/1", "d/3"]
    assert object_store.delete_many([]) == 0


# --- keys stay under the run prefix ------------------------------------------------------


@pytest.mark.parametrize("bad_key", ["../x", "/x", "a//b", "a/../b", "a/", "", ".."])
def test_bad_keys_are_rejected_before_any_request(object_store: ObjectStore, bad_key: str) -> None:
    for call in (
        lambda: object_store.put(bad_key, b"x"),
        lambda: object_store.put_if_absent(bad_key, b"x"),
        lambda: object_store.get(bad_key),
        lambda: object_store.exists(bad_key),
        lambda: object_store.delete_many(["ok", bad_key]),
        lambda: object_store.put_many([("ok", b"x"), (bad_key, b"x")]),
    ):
        with pytest.raises(ValueError):
            call()
    assert object_store.stats.as_dict()["requests"] == 0
    assert _raw_keys(object_store) == []


@pytest.mark.parametrize("bad_prefix", ["../runs/x", "/runs/x", "runs//x", ""])
def test_bad_run_prefix_is_rejected(s3_server: EmbeddedS3, bad_prefix: str) -> None:
    with pytest.raises(ValueError):
        ObjectStore(s3_server.config, bad_prefix)


# --- errors name what is wrong -----------------------------------------------------------


def test_unreachable_endpoint_fails_fast_and_names_it() -> None:
    store = ObjectStore(StorageConfig(endpoint_url=UNREACHABLE), "runs/r/")
    started = time.monotonic()
    with pytest.raises(StorageUnreachable) as info:
        store.check_ready()
    assert time.monotonic() - started < 5
    assert UNREACHABLE in str(info.value)
    assert "AWS_ENDPOINT_URL" in str(info.value)


def test_unreachable_endpoint_on_put_is_storage_unreachable() -> None:
    store = ObjectStore(StorageConfig(endpoint_url=UNREACHABLE), "runs/r/")
    started = time.monotonic()
    with pytest.raises(StorageUnreachable, match="127.0.0.1:1"):
        store.put("k", b"x")
    assert time.monotonic() - started < 10  # three attempts with backoff


def test_missing_bucket_is_named_and_not_created(s3_server: EmbeddedS3) -> None:
    bucket = f"absent-{uuid.uuid4().hex[:8]}"
    config = s3_server.config.model_copy(update={"bucket": bucket})
    store = ObjectStore.for_run(config, "r")

    with pytest.raises(BucketMissing, match=bucket):
        store.check_ready()
    with pytest.raises(BucketMissing, match=bucket):
        store.put("k", b"x")
    assert bucket not in _bucket_names(config)
    assert s3_server.config.bucket in _bucket_names(config)


def test_check_ready_passes_on_existing_bucket(object_store: ObjectStore) -> None:
    object_store.check_ready()
    assert _raw_keys(object_store) == []  # probing wrote nothing


# --- planned faults ----------------------------------------------------------------------


def _faulty(s3_server: EmbeddedS3, plan: FaultPlan) -> FaultyObjectStore:
    return FaultyObjectStore(s3_server.config, f"runs/f-{uuid.uuid4().hex[:8]}/", plan)


def test_failed_put_raises_once_then_succeeds(s3_server: EmbeddedS3) -> None:
    store = _faulty(s3_server, FaultPlan(failed_put_keys={"s/1"}))
    with pytest.raises(InjectedPutFailure, match="s/1"):
        store.put("s/1", b"x")
    assert not store.exists("s/1")

    store.put("s/1", b"x")
    assert store.get("s/1") == b"x"
    assert store.injected == [{"kind": "put_failure", "key": "s/1"}]
    assert store.stats.requests_by_op["PutObject"] == 1  # the faulted PUT sent nothing


def test_failed_put_counts_and_always(s3_server: EmbeddedS3) -> None:
    store = _faulty(s3_server, FaultPlan(failed_put_keys={"twice": 2, "never": FAIL_ALWAYS}))
    for _ in range(2):
        with pytest.raises(InjectedPutFailure):
            store.put("twice", b"x")
    store.put("twice", b"x")
    for _ in range(5):
        with pytest.raises(InjectedPutFailure):
            store.put_if_absent("never", b"x")
    assert store.list_keys() == ["twice"]
    assert [f["key"] for f in store.injected] == ["twice"] * 2 + ["never"] * 5


def test_failed_put_inside_put_many_propagates(s3_server: EmbeddedS3) -> None:
    store = _faulty(s3_server, FaultPlan(failed_put_keys={"b/7": FAIL_ALWAYS}))
    with pytest.raises(InjectedPutFailure):
        store.put_many((f"b/{i}", b"x") for i in range(10))
    assert "b/7" not in store.list_keys()


def test_crash_before_metadata_commit(s3_server: EmbeddedS3) -> None:
    store = _faulty(s3_server, FaultPlan(crash_before_key="chk-5/_metadata"))
    store.put("chk-5/state", b"state")  # state upload goes through
    with pytest.raises(InjectedCrash, match="chk-5/_metadata") as info:
        store.put_if_absent("chk-5/_metadata", b"meta")
    assert not isinstance(info.value, StorageError)  # storage retries must not eat a crash
    assert store.list_keys() == ["chk-5/state"]
    assert store.injected == [{"kind": "crash_before_metadata", "key": "chk-5/_metadata"}]

    assert store.put_if_absent("chk-5/_metadata", b"meta") is True  # the crash fired once


def test_slow_put_waits_and_is_recorded(s3_server: EmbeddedS3) -> None:
    store = _faulty(s3_server, FaultPlan(slow_put_ms={"slow": 150}))
    started = time.monotonic()
    store.put("slow", b"x")
    assert time.monotonic() - started >= 0.15
    assert store.get("slow") == b"x"
    assert store.injected == [{"kind": "slow_put", "key": "slow", "delay_ms": 150}]


def test_fault_plan_is_validated() -> None:
    plan = FaultPlan(failed_put_keys={"a", "b"}, slow_put_ms={"c": 5}, crash_before_key="m")
    assert plan.failed_put_keys == {"a": 1, "b": 1}
    assert pickle.loads(pickle.dumps(plan)) == plan
    with pytest.raises(pydantic.ValidationError):
        FaultPlan(failed_put_keys={"k": 0})
    with pytest.raises(pydantic.ValidationError):
        FaultPlan(slow_put_ms={"k": -1})
    with pytest.raises(pydantic.ValidationError):
        FaultPlan(unknown_fault=True)


# --- counters ----------------------------------------------------------------------------


def test_stats_count_requests_and_bytes(object_store: ObjectStore) -> None:
    object_store.put("a", b"12345")
    object_store.get("a")
    object_store.exists("missing")
    object_store.put_many([(f"m/{i}", b"xy") for i in range(40)], threads=8)

    stats = object_store.stats.as_dict()
    assert stats["requests_by_op"] == {"GetObject": 1, "HeadObject": 1, "PutObject": 41}
    assert stats["requests"] == 43
    assert stats["bytes_written"] == 5 + 40 * 2
    assert stats["bytes_read"] == 5

    object_store.stats.merge(stats)
    assert object_store.stats.as_dict()["requests_by_op"]["PutObject"] == 82
    assert object_store.stats.as_dict()["bytes_read"] == 10


# --- config and embedded server ----------------------------------------------------------


def test_config_is_picklable_frozen_and_strict() -> None:
    config = StorageConfig(endpoint_url="http://127.0.0.1:9000", bucket="b")
    assert pickle.loads(pickle.dumps(config)) == config
    with pytest.raises(pydantic.ValidationError):
        config.bucket = "other"
    with pytest.raises(pydantic.ValidationError):
        StorageConfig(aws_secret_access_key="x")
    assert config.run_prefix("r1") == "runs/r1/"


def test_embedded_server_is_loopback_and_has_the_bucket(s3_server: EmbeddedS3) -> None:
    assert s3_server.endpoint_url.startswith("http://127.0.0.1:")
    assert s3_server.config.endpoint_url == s3_server.endpoint_url
    assert s3_server.config.bucket in _bucket_names(s3_server.config)


def test_ensure_storage_starts_and_stops_embedded_server(monkeypatch: pytest.MonkeyPatch) -> None:
    # the probe after the stop signs its request: without credentials (this test run alone, no session server to
    # have set the dummy ones) botocore would refuse before connecting, not find the server gone
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    requested = StorageConfig(bucket="ensure-test", prefix="other")
    with ensure_storage(requested) as config:
        assert config.endpoint_url is not None
        assert config.endpoint_url.startswith("http://127.0.0.1:")
        assert (config.bucket, config.prefix) == ("ensure-test", "other")
        ObjectStore.for_run(config, "r").check_ready()
    with pytest.raises(StorageUnreachable):
        ObjectStore.for_run(config, "r").check_ready()


def test_ensure_storage_uses_given_endpoint_without_a_server(s3_server: EmbeddedS3) -> None:
    with ensure_storage(s3_server.config) as config:
        assert config == s3_server.config
    missing = s3_server.config.model_copy(update={"bucket": f"absent-{uuid.uuid4().hex[:8]}"})
    with pytest.raises(BucketMissing):
        with ensure_storage(missing):
            pytest.fail("must not yield for a missing bucket")
    with pytest.raises(StorageUnreachable):
        with ensure_storage(StorageConfig(endpoint_url=UNREACHABLE)):
            pytest.fail("must not yield for an unreachable endpoint")


def test_embedded_server_restores_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    with EmbeddedS3(bucket="env-test", region_name="eu-west-1") as server:
        assert os.environ["AWS_ACCESS_KEY_ID"] == "testing"
        assert os.environ["AWS_DEFAULT_REGION"] == "eu-west-1"
        ObjectStore.for_run(server.config, "r").check_ready()
    assert "AWS_ACCESS_KEY_ID" not in os.environ
    assert "AWS_DEFAULT_REGION" not in os.environ


def test_a_busy_port_is_a_storage_error_and_leaves_the_environment_as_it_was(
    s3_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    port = int(s3_server.config.endpoint_url.rsplit(":", 1)[1])
    with pytest.raises(StorageError, match=f"cannot start the embedded S3 server on 127.0.0.1:{port}"):
        EmbeddedS3(port=port).start()
    assert "AWS_ACCESS_KEY_ID" not in os.environ and "AWS_DEFAULT_REGION" not in os.environ
    monkeypatch.undo()
    ObjectStore.for_run(s3_server.config, "still-up").check_ready()  # the server on that port is untouched


def test_the_embedded_server_round_trips_objects_and_is_gone_once_stopped() -> None:
    with EmbeddedS3(bucket="alone") as server:
        store = ObjectStore.for_run(server.config, "r")
        store.put_many((f"k/{i}", bytes([i])) for i in range(30))
        assert store.get_many([f"k/{i}" for i in range(30)]) == {f"k/{i}": bytes([i]) for i in range(30)}
        endpoint = server.endpoint_url
    with pytest.raises(StorageUnreachable):
        ObjectStore.for_run(StorageConfig(endpoint_url=endpoint, bucket="alone"), "r").check_ready()


def test_the_embedded_server_serves_from_a_child_in_its_own_session_that_ends_with_this_process(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server is a child process (moto's Python off the run's interpreter lock), out of the terminal's process
    group (a Ctrl-C is the run's to handle, and the run still writes its verdict afterwards), and it ends when the
    process that started it dies without stopping it: nothing is left listening."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")  # this test's own client signs too
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    script = tmp_path / "owner.py"
    script.write_text(
        "import os, sys, time\n"
        "from regionchaos.storage import EmbeddedS3, ObjectStore\n"
        "server = EmbeddedS3(bucket='orphan')\n"
        "config = server.start()\n"
        "ObjectStore.for_run(config, 'r').put('k', b'v')\n"
        "print(server._server._process.pid, config.endpoint_url, flush=True)\n"
        "time.sleep(120)\n")
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child_pid, endpoint = owner.stdout.readline().split()
        child = int(child_pid)
        assert child != owner.pid and os.getsid(child) != os.getsid(owner.pid)
        config = StorageConfig(endpoint_url=endpoint, bucket="orphan")
        assert ObjectStore.for_run(config, "r").get("k") == b"v"  # served by the child, for anyone
        os.kill(child, signal.SIGINT)  # a terminal's Ctrl-C, were it sent to the child too: ignored
        assert ObjectStore.for_run(config, "r").get("k") == b"v"
    finally:
        owner.kill()  # no stop, no clean-up: the owner just dies
        owner.wait()
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the embedded S3 server outlived the process that started it"
    with pytest.raises(StorageUnreachable):
        ObjectStore.for_run(config, "r").check_ready()


@pytest.mark.parametrize("child, timeout, reason", [
    ("import sys; sys.exit(3)", 60.0, "it exited with code 3"),
    ("import time; time.sleep(30)", 1.0, "it did not serve within 1 s"),
])
def test_a_server_child_that_does_not_serve_is_a_storage_error_and_nothing_is_left(
    tmp_path, monkeypatch: pytest.MonkeyPatch, child: str, timeout: float, reason: str
) -> None:
    """`EmbeddedS3.start` returns only once its child serves: a child that dies, or does not serve in time, is a
    `StorageError` naming why, and neither the child nor the port is left behind."""
    from regionchaos.storage import embedded, s3serve

    script = tmp_path / "child.py"
    script.write_text(child + "\n")
    monkeypatch.setattr(s3serve, "__file__", str(script))
    monkeypatch.setattr(embedded, "CHILD_START_TIMEOUT_S", timeout)
    server = EmbeddedS3(bucket="never")
    with pytest.raises(StorageError, match=f"cannot start the embedded S3 server on 127.0.0.1:[0-9]+: {reason}"):
        server.start()
    assert server.endpoint_url is None
    assert not _running_with(str(script))


def _running_with(argument: str) -> list[int]:
    """Live processes whose command line holds ``argument``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                if argument.encode() in cmdline.read() and _alive(int(name)):
                    found.append(int(name))
        except OSError:  # gone meanwhile
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie (exited, not yet reaped) is gone
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # reaped meanwhile
        return False


def test_the_in_process_server_serves_and_refuses_a_busy_port(s3_server) -> None:
    """``in_process=True`` (scripts/local_s3.py, which mirrors moto's backend of its own process) serves on a thread
    of this process, with the same refusals."""
    with EmbeddedS3(bucket="here", in_process=True) as server:
        store = ObjectStore.for_run(server.config, "r")
        store.put("k", b"v")
        assert store.get("k") == b"v"
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        assert "here" in s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets  # the backend of this very process
        endpoint = server.endpoint_url
    with pytest.raises(StorageUnreachable):
        ObjectStore.for_run(StorageConfig(endpoint_url=endpoint, bucket="here"), "r").check_ready()
    port = int(s3_server.config.endpoint_url.rsplit(":", 1)[1])
    with pytest.raises(StorageError, match=f"cannot start the embedded S3 server on 127.0.0.1:{port}"):
        EmbeddedS3(port=port, in_process=True).start()


def test_a_client_made_after_the_credentials_change_uses_the_new_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clients come from a kept boto3 session (per process and AWS_* environment): a change of the
    environment between two clients must still reach the second one."""
    config = StorageConfig(endpoint_url=UNREACHABLE)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "first-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "first-secret")
    first, again = config.client(), config.client()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "second-key")
    second = config.client()
    signed_with = [c._request_signer._credentials.access_key for c in (first, again, second)]  # botocore's signer
    assert signed_with == ["first-key", "first-key", "second-key"]


# --- frozen endpoint, timeouts, advice -----------------------------------------------------


@pytest.fixture
def frozen_endpoint() -> Iterator[str]:
    """An endpoint on 127.0.0.1 that accepts connections and never answers (a frozen server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])  # kept open, never read from or written to
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.mark.slow
def test_a_frozen_endpoint_is_storage_unreachable_naming_the_timeout(frozen_endpoint: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", os.environ.get("AWS_ACCESS_KEY_ID", "testing"))  # requests are signed
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"))
    config = StorageConfig(endpoint_url=frozen_endpoint, connect_timeout_s=1, read_timeout_s=1, max_attempts=2)
    store = ObjectStore.for_run(config, "r")
    with pytest.raises(StorageUnreachable) as info:
        store.put("k", b"x")
    message = str(info.value)
    assert frozen_endpoint in message and "did not answer" in message
    assert "within 1 s (2 attempts)" in message and "PutObject runs/r/k" in message
    with pytest.raises(StorageUnreachable, match="did not answer ListObjectsV2"):
        store.list_keys("")
    with pytest.raises(StorageUnreachable, match="did not answer HeadBucket"):
        store.check_ready()


def test_every_client_of_a_config_carries_its_timeouts_and_retries() -> None:
    config = StorageConfig(endpoint_url=UNREACHABLE, connect_timeout_s=3, read_timeout_s=7, max_attempts=4)
    shipped = pickle.loads(pickle.dumps(config))  # as a Spark task gets it
    client = shipped.client()
    assert (client.meta.config.connect_timeout, client.meta.config.read_timeout) == (3, 7)
    assert client.meta.config.retries == {"mode": "standard", "total_max_attempts": 4}
    client.close()


def test_by_default_one_call_to_a_frozen_endpoint_gives_up_within_about_a_minute() -> None:
    config = StorageConfig()
    # every attempt waits out the read timeout, plus botocore's backoff between attempts
    assert config.max_attempts * config.read_timeout_s < config.call_budget_s() <= 60


def test_missing_bucket_advice_names_the_cli_flag_that_exists(s3_server: EmbeddedS3) -> None:
    from regionchaos.cli import build_parser

    config = s3_server.config.model_copy(update={"bucket": f"absent-{uuid.uuid4().hex[:8]}"})
    with pytest.raises(BucketMissing) as info:
        ObjectStore.for_run(config, "r").check_ready()
    flags = [word.rstrip(".,:;") for word in str(info.value).split() if word.startswith("--")]
    assert flags == ["--bucket"]
    args = build_parser().parse_args(["run", "--scenario", "smoke", *flags, "b"])
    assert args.bucket == "b"


# --- the run-id lease -----------------------------------------------------------------------


def _lease_doc(store: ObjectStore) -> dict:
    return json.loads(store.get_with_etag("_lease.json")[0])


def test_a_held_run_id_is_refused_naming_the_holder_and_until_when(object_store: ObjectStore) -> None:
    first = RunLease(object_store, "r").acquire()
    before = _raw_keys(object_store)
    with pytest.raises(RunIdBusy) as info:
        RunLease(object_store, "r").acquire()
    message = str(info.value)
    assert "run id r is held by another run" in message and "--run-id" in message
    assert f"pid {os.getpid()}" in message and f"until {_lease_doc(object_store)['expires_at']}" in message
    assert _raw_keys(object_store) == before  # the refused one wrote and deleted nothing
    assert _lease_doc(object_store)["owner"] == first.token


def test_the_lease_is_not_an_artifact_and_survives_clearing_the_prefix(object_store: ObjectStore) -> None:
    lease = RunLease(object_store, "r").acquire()
    object_store.put("a/b", b"x")
    assert object_store.list_keys("") == ["a/b"]
    object_store.delete_many(object_store.list_keys(""))  # what runner.prepare_run does for a re-run
    assert _raw_keys(object_store) == [object_store.run_prefix + "_lease.json"]
    lease.check()


def test_a_released_run_id_can_be_taken_again(object_store: ObjectStore) -> None:
    with RunLease(object_store, "r") as first:
        assert _lease_doc(object_store)["owner"] == first.token
    assert _raw_keys(object_store) == []  # released on exit
    with pytest.raises(RuntimeError, match="boom"):
        with RunLease(object_store, "r"):
            raise RuntimeError("boom")
    assert _raw_keys(object_store) == []  # released when the block raised, too
    again = RunLease(object_store, "r").acquire()  # a re-run of the run id after the first finished
    assert _lease_doc(object_store)["owner"] == again.token


def test_an_expired_lease_is_taken_over_and_its_old_holder_learns_it_lost(object_store: ObjectStore) -> None:
    crashed = RunLease(object_store, "r", ttl_s=60).acquire()
    with pytest.raises(RunIdBusy):
        RunLease(object_store, "r", clock=lambda: crashed.expires_at - 1).acquire()
    taker = RunLease(object_store, "r", clock=lambda: crashed.expires_at + 1).acquire()
    assert _lease_doc(object_store)["owner"] == taker.token
    with pytest.raises(LeaseLost, match="taken over"):
        crashed.renew()
    with pytest.raises(LeaseLost):
        crashed.check()
    assert crashed.release() is False  # never deletes the new holder's lease
    assert _lease_doc(object_store)["owner"] == taker.token
    taker.renew()
    assert taker.release() is True


def test_an_unreadable_lease_is_taken_over(object_store: ObjectStore) -> None:
    object_store.put("_lease.json", b"not json")
    lease = RunLease(object_store, "r").acquire()
    assert _lease_doc(object_store)["owner"] == lease.token


def test_renewal_pushes_the_expiry(object_store: ObjectStore) -> None:
    now = [1000.0]
    lease = RunLease(object_store, "r", ttl_s=60, clock=lambda: now[0]).acquire()
    now[0] = 1050.0
    lease.renew()
    assert _lease_doc(object_store)["expires_at_epoch_s"] == 1110.0
    with pytest.raises(RunIdBusy):  # 1100 would have been past the first expiry
        RunLease(object_store, "r", clock=lambda: 1100.0).acquire()


def test_of_many_runs_taking_one_run_id_at_once_exactly_one_wins(s3_server: EmbeddedS3) -> None:
    for round_no in range(5):
        store = ObjectStore.for_run(s3_server.config, f"lease-race-{uuid.uuid4().hex[:8]}")
        start = threading.Barrier(6)
        won: list[RunLease] = []
        refused: list[RunIdBusy] = []

        def take() -> None:
            lease = RunLease(ObjectStore(store.config, store.run_prefix), "r")
            start.wait()
            try:
                won.append(lease.acquire())
            except RunIdBusy as exc:
                refused.append(exc)

        threads = [threading.Thread(target=take) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert (len(won), len(refused)) == (1, 5), f"round {round_no}"
        assert _lease_doc(store)["owner"] == won[0].token
