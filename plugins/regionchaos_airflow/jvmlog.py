"""The JVM's output in a task's log at WARNING, not as the errors Airflow makes of a task's stderr.

Airflow's supervisor logs every line a task process writes to its stderr at ERROR (logger
``task.stderr``). A Spark driver's JVM inherits that stderr and writes its start-up notices there
(``WARNING: Using incubator modules: jdk.incubator.vector``, ``Picked up JAVA_TOOL_OPTIONS: ...``),
and `regionchaos.spark.get_spark` sends the JVM's stdout there too: a valid run's log then showed
ERROR lines though nothing failed.

In:  a block that may start a JVM (the runner's first Spark session).
Out: `jvm_output_as_warnings()`: inside the block, file descriptor 2 is a pipe; each line that
     arrives on it (from the JVM started meanwhile, for the JVM's whole life, and from this process
     during the block) is logged at WARNING by the logger ``regionchaos.jvm``. Descriptor 2 is the
     task's own stderr again after the block.

Only under Airflow's supervisor, which hands a task its stderr as a socket and takes the task's log
lines on another one. Anywhere else (``airflow dags test`` runs tasks in its own process, its log
lines going to its stderr) the block changes nothing: logging the pipe's lines would write them
back into the pipe.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOGGER = "regionchaos.jvm"
log = logging.getLogger(LOGGER)


def _forward(read_fd: int) -> None:
    """Log each line read from ``read_fd`` at WARNING until every writer has closed it."""
    with os.fdopen(read_fd, "rb") as pipe:
        for raw in pipe:
            line = raw.decode("utf-8", errors="replace").rstrip()
            if line and LOGGER not in line:  # never a line of this logger's own, come back
                try:
                    log.warning("%s", line)
                except Exception:  # noqa: BLE001 - a log line lost must never block the JVM's writes
                    pass


def supervised_stderr() -> bool:
    """Whether this process's stderr is the socket Airflow's supervisor reads it from."""
    try:
        return stat.S_ISSOCK(os.fstat(2).st_mode)
    except OSError:
        return False


@contextmanager
def jvm_output_as_warnings() -> Iterator[None]:
    """Descriptor 2 into a pipe logged at WARNING for this block (see the module docstring)."""
    if not supervised_stderr():
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    read_fd, write_fd = os.pipe()
    threading.Thread(target=_forward, args=(read_fd,), name="jvm-output", daemon=True).start()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 2)  # the pipe's last writer is now the JVM (and its children): EOF when it ends
        os.close(saved)
