"""Compile the Java sources of ``flink/java`` into one jar, cached by the sources' hash and Flink's version.

In:  a `FlinkDist` (its ``lib/*.jar`` is the classpath; its javac and jar), the sources under
     ``flink/java`` of the repository, the cache folder (env ``REGIONCHAOS_FLINK_CACHE``, else
     ``.flink/cache``, git-ignored).
Out: the path of ``CACHE/VERSION-HASH/regionchaos-flink.jar`` holding `JOB_CLASS` (the workload) and
     `DUMP_CLASS` (the metadata dumper), built on first use (plain javac + jar, no Maven) and reused
     while neither the sources nor the distribution's version change. A failed compile raises
     `BuildFailed` with javac's message; nothing half-built stays in the cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from regionchaos.flink.dist import REPO_ROOT, FlinkDist

SOURCES = REPO_ROOT / "flink" / "java"
JOB_CLASS = "regionchaos.flink.CounterJob"
DUMP_CLASS = "regionchaos.flink.MetadataDump"
JAR_NAME = "regionchaos-flink.jar"
JAVA_RELEASE = "11"  # the oldest Java Flink 2.x runs on


class BuildFailed(RuntimeError):
    """javac or jar failed: the message carries their output."""


def cache_root() -> Path:
    return Path(os.environ.get("REGIONCHAOS_FLINK_CACHE") or REPO_ROOT / ".flink" / "cache")


def java_sources(root: Path = SOURCES) -> list[Path]:
    return sorted(root.rglob("*.java"))


def sources_hash(version: str, root: Path = SOURCES) -> str:
    """A digest of every source's relative path and bytes, and the Flink version compiled against."""
    digest = hashlib.sha256(version.encode())
    for source in java_sources(root):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def job_jar(dist: FlinkDist, root: Path = SOURCES) -> Path:
    """The cached jar for these sources and this distribution, compiled now if missing."""
    target = cache_root() / f"{dist.version}-{sources_hash(dist.version, root)}" / JAR_NAME
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        classes = Path(work) / "classes"
        _run([dist.javac, "--release", JAVA_RELEASE, "-nowarn", "-d", str(classes),
              "-cp", dist.classpath(), *map(str, java_sources(root))], "javac")
        built = Path(work) / JAR_NAME
        _run([dist.jar, "cf", str(built), "-C", str(classes), "."], "jar")
        os.replace(built, target)  # atomic: a concurrent build just replaces an equal jar
    return target


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise BuildFailed(f"{what} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()}")


def clear_cache() -> None:
    """Remove every cached build (the next job_jar compiles again)."""
    shutil.rmtree(cache_root(), ignore_errors=True)
