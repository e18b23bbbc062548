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

import os
import shutil
from pathlib import Path

from regionchaos.flink.dist import REPO_ROOT, FlinkDist
from regionchaos.javabuild import BuildFailed, compile_jar, sources_digest  # noqa: F401  (job_jar raises BuildFailed)

SOURCES = REPO_ROOT / "flink" / "java"
JOB_CLASS = "regionchaos.flink.CounterJob"
DUMP_CLASS = "regionchaos.flink.MetadataDump"
JAR_NAME = "regionchaos-flink.jar"
JAVA_RELEASE = "11"  # the oldest Java Flink 2.x runs on


def cache_root() -> Path:
    return Path(os.environ.get("REGIONCHAOS_FLINK_CACHE") or REPO_ROOT / ".flink" / "cache")


def sources_hash(version: str, root: Path = SOURCES) -> str:
    """A digest of every source's relative path and bytes, and the Flink version compiled against."""
    return sources_digest(root, version)


def job_jar(dist: FlinkDist, root: Path = SOURCES) -> Path:
    """The cached jar for these sources and this distribution, compiled now if missing (`BuildFailed`: javac's
    message; nothing half-built stays in the cache)."""
    target = cache_root() / f"{dist.version}-{sources_hash(dist.version, root)}" / JAR_NAME
    if target.is_file():
        return target
    return compile_jar(target, javac=dist.javac, jar=dist.jar, root=root, classpath=dist.classpath(),
                       release=JAVA_RELEASE)


def clear_cache() -> None:
    """Remove every cached build (the next job_jar compiles again)."""
    shutil.rmtree(cache_root(), ignore_errors=True)
