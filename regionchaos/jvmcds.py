"""Class-data sharing for the Spark driver JVM: load Spark's classes from an archive, not from jars.

In:  the virtualenv's pyspark and the `java` on PATH.
Out: `java_options()`: the JVM options that make a driver map the archive (none when there is no
     archive), used by `regionchaos.spark.spark_conf`; `in_use()`: the archive they name, or None
     (bench/run.py and bench/swarm.py record it); `build()`: the archive, written by the JVM of
     one `smoke` run (``-XX:ArchiveClassesAtExit``), so it holds every class a run loads (Spark's
     session, Arrow conversion, the SQL planner and executor, the suites' expressions).

Why: a Spark driver loads some 20,000 classes before it answers, and a run's first GX pass loads
thousands more; with the archive they are mapped in at start. Measured (`bench/results/judge_profile/`):
a session starts in 3.2-3.8 s instead of 6.8-7.2 s (4.1-4.7 instead of 8.0-8.6 CPU seconds), and a
deep run's cold phases (tables, first pass) cost ~3 CPU seconds less. Worth building where many
drivers start (a host running many deep runs); the test suite does not build it: it starts about
nine drivers of its own, and the build (one smoke run, ~79 s) would cost more than it saves.

A JVM that cannot use the archive (another Java build, another classpath, e.g. a standalone cluster's
daemons) ignores it; the options silence the JVM's warning about that, which would otherwise go to
stdout. Build it with ``python -m regionchaos.jvmcds`` (``--if-missing``: only when absent).

pyspark is imported inside the functions that need its version: `regionchaos.spark` imports this module, and
importing it must stay cheap.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .judge.policy import done, infrastructure

ARCHIVE_ENV = "REGIONCHAOS_SPARK_CDS"  # a path to use instead of the default, or "off"
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def archive_path() -> Path:
    """``$REGIONCHAOS_SPARK_CDS``, else ``<venv>/share/regionchaos/spark-<pyspark version>.jsa``."""
    env = os.environ.get(ARCHIVE_ENV)
    if env and env != "off":
        return Path(env)
    import pyspark

    return Path(sys.prefix) / "share" / "regionchaos" / f"spark-{pyspark.__version__}.jsa"


def java_options() -> list[str]:
    """The options that map the archive into a driver JVM, or [] when there is none (or it is off)."""
    if os.environ.get(ARCHIVE_ENV) == "off":
        return []
    path = archive_path()
    return [f"-XX:SharedArchiveFile={path}", *QUIET] if path.is_file() else []


def in_use() -> Path | None:
    """The archive a driver started now would map (`java_options`), or None: what a benchmark records."""
    return archive_path() if java_options() else None


def build(*, if_missing: bool = False, say=print) -> Path | None:
    """Write the archive: one `smoke` run (embedded S3, local Spark) whose driver JVM dumps the classes
    it loaded when it exits. Written under a temporary name and renamed, so a failed build leaves no
    archive. Returns the archive's path, or None when the run failed (the reason is printed)."""
    target = archive_path()
    if if_missing and target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    env = {**os.environ, ARCHIVE_ENV: "off"}  # the run must not map an older archive while it dumps a new one
    env["JAVA_TOOL_OPTIONS"] = f"{env.get('JAVA_TOOL_OPTIONS', '')} -XX:ArchiveClassesAtExit={partial}".strip()
    started = time.perf_counter()
    say(f"building the Spark class archive {target} (one smoke run)")
    with tempfile.TemporaryDirectory(prefix="regionchaos-cds-") as local:
        proc = subprocess.run([sys.executable, "-m", "regionchaos.cli", "run", "--scenario", "smoke", "--seed", "1",
                               "--run-id", "class-archive", "--local-dir", local, "--json"],
                              env=env, cwd=local, capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not partial.is_file():
        partial.unlink(missing_ok=True)
        say(f"no class archive: the run exited {proc.returncode}: {(proc.stderr or proc.stdout)[-500:]}")
        return None
    os.replace(partial, target)
    say(f"class archive built in {time.perf_counter() - started:.0f} s ({target.stat().st_size / 2**20:.0f} MiB)")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m regionchaos.jvmcds",
                                     description="Build the Spark driver's class-data-sharing archive (one smoke run).")
    parser.add_argument("--if-missing", action="store_true", help="do nothing when the archive exists")
    args = parser.parse_args(argv)
    # a failed build is an infrastructure error (3), not a judged run's "invariant violated" (1)
    built = build(if_missing=args.if_missing)
    return (done(f"class archive {built}") if built else infrastructure("no class archive built")).exit_code


if __name__ == "__main__":
    sys.exit(main())
