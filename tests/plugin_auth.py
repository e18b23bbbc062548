"""Airflow's auth switched on for the plugin's tests: SimpleAuthManager with the given users, a
fixed JWT secret, Airflow's cached app purged before and after (tests/test_plugin.py,
tests/test_datadocs.py)."""

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
