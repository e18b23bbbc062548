"""Airflow settings for tests that import Airflow in-process (tests/test_dags.py,
tests/test_plugin.py). Airflow reads its home at import, so import this module first:
a scratch home (one per test session), SQLite, this repo's dags/ and plugins/."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "REGIONCHAOS_TEST_AIRFLOW_HOME" not in os.environ:  # the process that makes the scratch home removes it
    os.environ["REGIONCHAOS_TEST_AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="regionchaos-airflow-")
    atexit.register(shutil.rmtree, os.environ["REGIONCHAOS_TEST_AIRFLOW_HOME"], ignore_errors=True)
HOME = os.environ["REGIONCHAOS_TEST_AIRFLOW_HOME"]
os.environ.update({
    "AIRFLOW_HOME": HOME,
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{HOME}/airflow.db",
    "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
    "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
})
if str(ROOT / "plugins") not in sys.path:
    sys.path.insert(0, str(ROOT / "plugins"))
