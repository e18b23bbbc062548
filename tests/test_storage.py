"""Tests of regionchaos.storage against a real moto server over HTTP (no mocks).

In:  the `s3_server` / `object_store` fixtures of tests/conftest_storage.py.
Out: pass/fail of the store's contract: round trips, listing past one page, conditional
     PUT, batched deletes, key confinement, error messages, planned faults, counters.
"""

from __future__ import annotations

import os
import pickle
import time
import uuid

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
    ObjectMissing,
    ObjectStore,
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
    assert store.injected == [{"kind": "put_failed", "key": "s/1"}]
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
    assert store.injected == [{"kind": "crash_before_put", "key": "chk-5/_metadata"}]

    assert store.put_if_absent("chk-5/_metadata", b"meta") is True  # the crash fired once


def test_slow_put_waits_and_is_recorded(s3_server: EmbeddedS3) -> None:
    store = _faulty(s3_server, FaultPlan(slow_put_ms={"slow": 150}))
    started = time.monotonic()
    store.put("slow", b"x")
    assert time.monotonic() - started >= 0.15
    assert store.get("slow") == b"x"
    assert store.injected == [{"kind": "put_slow", "key": "slow", "delay_ms": 150}]


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


def test_ensure_storage_starts_and_stops_embedded_server() -> None:
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
