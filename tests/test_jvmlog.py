"""The JVM's output in an Airflow task's log at WARNING (plugins/regionchaos_airflow/jvmlog.py).

In:  a Python process whose stderr is a socket, as Airflow's supervisor hands a task its stderr,
     and one whose stderr is a pipe (as under ``airflow dags test``); in each, a child process
     (standing in for the Spark driver's JVM, which inherits the stderr of the process starting it)
     writes two lines to its stderr inside `jvm_output_as_warnings`, and one more after the block.
Out: under the socket, the child's lines arrive as WARNING records of the logger
     ``regionchaos.jvm`` and none on the socket (what Airflow logs at ERROR), the child's line
     written after the block too; the process's own stderr is the socket again after the block.
     Under a pipe the block changes nothing: the lines stay on stderr.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import logging, os, subprocess, sys, time
sys.path.insert(0, {plugins!r})
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(levelname)s %(name)s %(message)s")
from regionchaos_airflow.jvmlog import jvm_output_as_warnings
with jvm_output_as_warnings():
    jvm = subprocess.Popen([sys.executable, "-c",
        "import sys, time; err = sys.stderr;"
        "print('WARNING: Using incubator modules: jdk.incubator.vector', file=err, flush=True);"
        "print('Picked up JAVA_TOOL_OPTIONS: -Xss4m', file=err, flush=True); time.sleep(0.5);"
        "print('later: from the JVM', file=err, flush=True)"])
print("the task's own stderr again", file=sys.stderr, flush=True)
jvm.wait()
time.sleep(0.3)
"""


def run_child(stderr) -> tuple[str, str]:
    """Run `CHILD` with ``stderr`` (a socket or subprocess.PIPE); its stdout and what reached its stderr."""
    code = CHILD.format(plugins=str(ROOT / "plugins"))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=stderr, text=True)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (out, err)
    return out, err or ""


def test_under_the_supervisor_the_jvm_s_lines_are_warnings_not_stderr():
    theirs, ours = socket.socketpair()
    try:
        out, _ = run_child(theirs)
        theirs.close()
        ours.settimeout(5)
        stderr = b""
        while chunk := ours.recv(65536):
            stderr += chunk
    finally:
        ours.close()
    assert "WARNING regionchaos.jvm WARNING: Using incubator modules: jdk.incubator.vector" in out, out
    assert "WARNING regionchaos.jvm Picked up JAVA_TOOL_OPTIONS: -Xss4m" in out, out
    assert "WARNING regionchaos.jvm later: from the JVM" in out, out  # the JVM keeps the pipe after the block
    assert stderr.decode() == "the task's own stderr again\n"  # nothing of the JVM's for Airflow to call an error


def test_elsewhere_stderr_is_left_alone():
    out, err = run_child(subprocess.PIPE)
    assert "regionchaos.jvm" not in out
    assert "WARNING: Using incubator modules" in err and "later: from the JVM" in err
