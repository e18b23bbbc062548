"""A local Spark driver's JVM prints nothing on this process's stdout (regionchaos/spark.py
`_children_print_to_stderr`): a JVM writes its warnings there by default, and ``--json`` output must stay JSON.
A fresh process (a JVM is started once per process), the JVM made to warn at start: no large pages are
configured here, so ``-XX:+UseLargePages`` makes it print ``[...][warning][pagesize] ...``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.spark
def test_the_jvms_warnings_go_to_stderr_not_stdout():
    code = "from regionchaos.spark import get_spark; get_spark(); print('ONLY THIS')"
    env = {**os.environ, "JAVA_TOOL_OPTIONS": "-XX:+UseLargePages"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    if "[warning]" not in done.stdout + done.stderr:
        pytest.skip("this machine's JVM did not warn about large pages: nothing to route")
    assert done.stdout == "ONLY THIS\n"
    assert "[warning][pagesize]" in done.stderr
