"""What the plugin's tests (tests/test_plugin.py, tests/test_datadocs.py) set up alike: the plugin
pointed at a bucket and prefix of the shared S3 server (its storage cache cleared before and
after), and Airflow's auth switched on (SimpleAuthManager with the given users, a fixed JWT
secret, Airflow's cached app purged before and after)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def simple_auth(monkeypatch, tmp_path, users: str) -> Iterator[object]:
    """``users``: Airflow's ``name:role,...``. Yields the auth manager (``generate_jwt``)."""
    from airflow.api_fastapi import app as airflow_app

    monkeypatch.setenv("AIRFLOW__CORE__AUTH_MANAGER",
                       "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager")
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False")
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", users)
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE", str(tmp_path / "passwords.json"))
    monkeypatch.setenv("AIRFLOW__API_AUTH__JWT_SECRET", "regionchaos-test-" + "0123456789abcdef" * 4)
    airflow_app.purge_cached_app()
    try:
        yield airflow_app.init_auth_manager()
    finally:
        airflow_app.purge_cached_app()


@contextmanager
def plugin_storage(monkeypatch, config, prefix: str) -> Iterator[object]:
    """The plugin reads runs from ``config``'s endpoint and bucket under ``prefix``; yields ``config``."""
    from regionchaos_airflow import app as plugin

    monkeypatch.setenv("REGIONCHAOS_S3_ENDPOINT", config.endpoint_url)
    monkeypatch.setenv("REGIONCHAOS_BUCKET", config.bucket)
    monkeypatch.setenv("REGIONCHAOS_PREFIX", prefix)
    plugin._storage_cache.clear()
    try:
        yield config
    finally:
        plugin._storage_cache.clear()
