"""Find the Flink distribution to run, and check that Java can run it.

In:  the environment (``FLINK_HOME``: a distribution's folder, holding ``bin/`` and ``lib/``), else the
     pinned distribution ``scripts/setup.sh`` installs under ``.flink/VERSION/pyflink``; the
     ``java``, ``javac`` and ``jar`` on PATH (or under ``JAVA_HOME/bin``).
Out: a `FlinkDist` (home, version read from ``lib/flink-dist-VERSION.jar``, the Java tools), or
     `FlinkNotInstalled` naming what is missing and how to install it; `regional_checkpoints(home)`:
     does the distribution have FLIP-600's regional checkpoints (its ``RegionalCheckpointHandler``, or a
     configuration class that knows ``execution.checkpointing.region.enabled``)?
"""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from regionchaos.javabuild import find_tool

PINNED_VERSION = "2.3.0"  # scripts/setup.sh installs this one (FLINK_VERSION there)
MIN_JAVA = 11  # Flink 2.x runs on Java 11, 17, 21
REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_HINT = "run `scripts/setup.sh` (it installs the pinned one) or set FLINK_HOME to a Flink distribution"


class FlinkNotInstalled(RuntimeError):
    """No usable Flink distribution or Java: the message says what is missing."""


@dataclass(frozen=True)
class FlinkDist:
    """A Flink distribution and the Java tools to run it and compile against it."""

    home: Path
    version: str
    java: str
    javac: str
    jar: str

    @property
    def lib(self) -> Path:
        return self.home / "lib"

    def bin(self, name: str) -> Path:
        return self.home / "bin" / name

    def classpath(self) -> str:
        """Every jar of lib/, as javac and java take it."""
        return str(self.lib / "*")


def pinned_home() -> Path:
    return REPO_ROOT / ".flink" / PINNED_VERSION / "pyflink"


def flink_home(env: Mapping[str, str] = os.environ) -> Path:
    """FLINK_HOME when set, else the pinned install's folder (which may not exist)."""
    return Path(env["FLINK_HOME"]) if env.get("FLINK_HOME") else pinned_home()


def dist_version(home: Path) -> str:
    """The version in lib/flink-dist-VERSION.jar (FlinkNotInstalled when there is none)."""
    for jar in sorted((home / "lib").glob("flink-dist*.jar")):
        match = re.fullmatch(r"flink-dist(?:_[0-9.]+)?-(.+)\.jar", jar.name)
        if match:
            return match.group(1)
    raise FlinkNotInstalled(f"no lib/flink-dist-VERSION.jar under {home}: {INSTALL_HINT}")


# FLIP-600's implementation: apache/flink flink-runtime/src/main/java/org/apache/flink/runtime/checkpoint/
# RegionalCheckpointHandler.java (class RegionalCheckpointHandler, read at 4e12013748c0af9c17eeafb5b6c28d1806f51973)
REGIONAL_HANDLER = "org/apache/flink/runtime/checkpoint/RegionalCheckpointHandler.class"
REGIONAL_KEY = b"execution.checkpointing.region.enabled"  # the FLIP's switch (seeds/, PROTOCOL.md)
OPTIONS_CLASS = "org/apache/flink/configuration/CheckpointingOptions.class"


def regional_checkpoints(home: Path) -> bool:
    """Does the distribution under ``home`` have FLIP-600's regional checkpoints? Its ``flink-dist`` jar holds
    the handler class, or its checkpointing options know the FLIP's switch. Released Flink (2.3.0): no."""
    for jar in sorted((home / "lib").glob("flink-dist*.jar")):
        try:
            with zipfile.ZipFile(jar) as archive:
                names = set(archive.namelist())
                if REGIONAL_HANDLER in names:
                    return True
                if OPTIONS_CLASS in names and REGIONAL_KEY in archive.read(OPTIONS_CLASS):
                    return True
        except (OSError, zipfile.BadZipFile):
            continue
    return False


def java_tool(name: str, env: Mapping[str, str] = os.environ) -> str:
    """JAVA_HOME/bin/NAME when JAVA_HOME is set and has it, else NAME on PATH (`javabuild.find_tool`)."""
    found = find_tool(name, env)
    if not found:
        raise FlinkNotInstalled(f"`{name}` not found on PATH (a JDK {MIN_JAVA}+ is needed: javac and jar "
                                "compile the job, java runs the cluster)")
    return found


def java_major(java: str) -> int:
    """The major version `java -version` reports (1.8 -> 8, 17.0.9 -> 17)."""
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    match = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    if not match:
        return 0
    parts = match.group(1).split(".")
    major = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
    digits = re.match(r"\d+", major)
    return int(digits.group(0)) if digits else 0


def find_dist(env: Mapping[str, str] = os.environ) -> FlinkDist:
    """The distribution to run (FLINK_HOME, else the pinned install), checked; FlinkNotInstalled if not usable."""
    home = flink_home(env)
    if not (home / "bin" / "flink").is_file() or not (home / "lib").is_dir():
        where = "FLINK_HOME" if env.get("FLINK_HOME") else "the pinned install"
        raise FlinkNotInstalled(f"{where} {home} has no bin/flink and lib/: {INSTALL_HINT}")
    version = dist_version(home)
    java = java_tool("java", env)
    major = java_major(java)
    if major < MIN_JAVA:
        raise FlinkNotInstalled(f"Flink {version} needs Java {MIN_JAVA}+, {java} is Java {major}")
    return FlinkDist(home=home.resolve(), version=version, java=java,
                     javac=java_tool("javac", env), jar=java_tool("jar", env))
