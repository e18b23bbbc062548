"""Java sources into a cached jar: the one build of the real-Flink job (`regionchaos.flink.build`) and of the
judge's Spark plan rule (`regionchaos.sparkrules`).

In:  ``.java`` sources, a class path, ``javac`` and ``jar`` (`find_tool`: ``JAVA_HOME/bin``, else PATH).
Out: `sources_digest` (names a build by its sources and what they compile against), `compile_jar` (the jar at
     its target, written under a temporary name in the target's folder and renamed, so concurrent builders
     leave one whole jar and a failed one leaves none), `BuildFailed` (javac or jar failed: their output).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path


class BuildFailed(RuntimeError):
    """javac or jar failed: the message carries their output."""


def find_tool(name: str, env: Mapping[str, str] = os.environ) -> str | None:
    """JAVA_HOME/bin/NAME when JAVA_HOME is set and has it, else NAME on PATH, else None."""
    if env.get("JAVA_HOME"):
        candidate = Path(env["JAVA_HOME"]) / "bin" / name
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


def java_sources(root: Path) -> list[Path]:
    return sorted(root.rglob("*.java"))


def sources_digest(root: Path, against: str) -> str:
    """A digest of every source's path under ``root`` and bytes, and of ``against`` (the version compiled against)."""
    digest = hashlib.sha256(against.encode())
    for source in java_sources(root):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def compile_jar(target: Path, *, javac: str, jar: str, root: Path, classpath: str, release: str,
                timeout: float = 300) -> Path:
    """Compile every source under ``root`` for Java ``release`` against ``classpath`` into the jar ``target``.
    Raises `BuildFailed` (javac or jar failed), OSError (the folder cannot be written) or
    subprocess.TimeoutExpired."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
        classes, built = Path(work) / "classes", Path(work) / target.name
        _run([javac, "--release", release, "-nowarn", "-d", str(classes), "-cp", classpath,
              *map(str, java_sources(root))], "javac", timeout)
        _run([jar, "cf", str(built), "-C", str(classes), "."], "jar", timeout)
        os.replace(built, target)  # atomic: a concurrent build just replaces an equal jar
    return target


def _run(argv: list[str], what: str, timeout: float) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise BuildFailed(f"{what} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()}")
