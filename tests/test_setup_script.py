"""scripts/setup.sh on machines unlike this one, with stub commands (no apt, no network).

In:  a copy of the script in a temporary project (its pyproject.toml and requirements.lock),
     a PATH of stubs: ``java`` printing a given ``-version``, ``id`` saying root, ``apt-get``
     recording what it was asked to install, a ``python3.11`` whose venv module can be missing
     until ``apt-get install python3.11-venv`` ran, and whose ``-m venv`` makes a stub venv
     (its ``pip`` and the ``uv`` it installs record the install instead of downloading anything).
Out: the Java check reads 1.8 / 11 / 17 / 21 correctly and installs or refuses below 17; a
     Python without venv gets python3.11-venv installed; the pinned set goes in through uv, or
     pip where uv cannot be installed; a half-made ``.venv`` is made again; a healthy one is
     left alone; the Flink distribution goes into its own folder by default, once (not with
     --no-flink); uv installs from its cache alone first and from the index only when that fails;
     after installing with uv, uv's cache is pruned (a failed prune is a warning).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

JAVA_VERSIONS = {  # what `java -version` prints (on stderr) -> major
    'openjdk version "17.0.9" 2023-10-17': 17,
    'openjdk version "21" 2023-09-19': 21,
    'java version "1.8.0_392"': 8,
    'openjdk version "11.0.21" 2023-10-17': 11,
}

VENV_PYTHON = """#!/bin/bash
# stub of .venv/bin/python: pip records its arguments; installing uv makes a stub uv that
# records its own (or fails, when the index has no uv: $STATE/no-uv; its `cache prune` fails given
# $STATE/prune-fails; its --offline installs fail given $STATE/cold-cache, as on a machine whose uv cache
# lacks the set). Both, given --target DIR (the
# Flink distribution), make DIR/pyflink/bin/flink, as the wheel has it (or fail: $STATE/no-flink).
TARGET='for ((i = 1; i < $#; i++)); do if [ "${!i}" = --target ]; then [ -e "$STATE/no-flink" ] && exit 1; j=$((i + 1)); mkdir -p "${!j}/pyflink/bin" && touch "${!j}/pyflink/bin/flink" && chmod +x "${!j}/pyflink/bin/flink"; fi; done'
case "$1" in
  --version) echo "Python 3.11.7" ;;
  -c) exit 0 ;;
  -m)
    echo "pip $*" >> "$LOG"
    if [ "${@: -1}" = uv ]; then
      [ -e "$STATE/no-uv" ] && exit 1
      { echo '#!/bin/bash'; echo 'echo "uv $*" >> "$LOG"'
        echo '[ "$1" = cache ] && [ -e "$STATE/prune-fails" ] && exit 1'
        echo 'case " $* " in *" --offline "*) [ -e "$STATE/cold-cache" ] && exit 1 ;; esac'; echo "$TARGET"; } > "$(dirname "$0")/uv"
      chmod +x "$(dirname "$0")/uv"
    fi
    eval "$TARGET" ;;
esac
"""

PYTHON = """#!/bin/bash
# stub of python3.11: its venv module exists once apt-get installed python3.11-venv
case "$1" in
  -c)
    if [[ "$2" == *ensurepip* ]] && [ ! -e "$STATE/venv-installed" ]; then exit 1; fi
    exit 0 ;;
  -m)
    if [ "$2" = venv ]; then
      [ -e "$STATE/venv-installed" ] || exit 1
      echo "venv $3" >> "$LOG"
      mkdir -p "$3/bin" && cp "$STATE/venv-python" "$3/bin/python" && chmod +x "$3/bin/python"
    fi ;;
esac
"""

APT_GET = """#!/bin/bash
echo "apt-get $*" >> "$LOG"
for pkg in "$@"; do
  [ "$pkg" = python3.11-venv ] && touch "$STATE/venv-installed"
  [ "$pkg" = openjdk-17-jre-headless ] && cp "$STATE/java17" "$STATE/bin/java"
done
exit 0
"""


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def machine(tmp_path):
    """A project copy and a stub PATH; returns a runner of setup.sh -> (CompletedProcess, log)."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    for name in ("pyproject.toml", "requirements.lock"):
        shutil.copy(ROOT / name, project / name)
    shutil.copy(ROOT / "scripts" / "setup.sh", project / "scripts" / "setup.sh")
    state = tmp_path / "state"
    stubs = state / "bin"
    stubs.mkdir(parents=True)
    _write(state / "venv-python", VENV_PYTHON)
    _write(state / "java17", "#!/bin/bash\necho 'openjdk version \"17.0.9\" 2023-10-17' >&2\n")
    _write(stubs / "python3.11", PYTHON)
    _write(stubs / "apt-get", APT_GET)
    _write(stubs / "id", "#!/bin/bash\necho 0\n")
    log = tmp_path / "log"
    log.write_text("")
    # the system's commands without its java (this machine has one; the stubs decide)
    system = tmp_path / "system"
    system.mkdir()
    for directory in ("/bin", "/usr/bin"):
        for tool in Path(directory).iterdir():
            if tool.name != "java" and not (system / tool.name).exists():
                (system / tool.name).symlink_to(tool)

    def java(version_line: str | None) -> None:
        target = stubs / "java"
        if version_line is None:
            target.unlink(missing_ok=True)
        else:
            _write(target, f"#!/bin/bash\necho '{version_line}' >&2\n")

    def run(*, venv: bool = True, root: bool = True, args: tuple[str, ...] = ()):
        if venv:
            (state / "venv-installed").touch()
        if not root:
            _write(stubs / "id", "#!/bin/bash\necho 1000\n")
        env = {"PATH": f"{stubs}:{system}", "LOG": str(log), "STATE": str(state), "HOME": str(tmp_path),
               "PYTHON": str(stubs / "python3.11")}
        done = subprocess.run(["bash", str(project / "scripts" / "setup.sh"), *args], env=env, capture_output=True,
                              text=True, timeout=60)
        return done, log.read_text()

    java('openjdk version "17.0.9" 2023-10-17')
    run.java = java
    run.project = project
    return run


@pytest.mark.parametrize("line,major", JAVA_VERSIONS.items(), ids=[str(m) for m in JAVA_VERSIONS.values()])
def test_java_major_reads_every_version_format(tmp_path, line, major):
    _write(tmp_path / "java", f"#!/bin/bash\necho '{line}' >&2\n")
    done = subprocess.run(["bash", "-c", f"SETUP_LIB_ONLY=1 source {ROOT / 'scripts' / 'setup.sh'}; java_major"],
                          env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, capture_output=True, text=True)
    assert done.stdout.strip() == str(major), done.stderr


def test_a_fresh_machine_gets_java_17_installed(machine):
    machine.java(None)
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert "apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless" in log


def test_java_11_is_replaced_when_root(machine):
    machine.java('openjdk version "11.0.21" 2023-10-17')
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert "openjdk-17-jre-headless" in log and "found Java 11" in done.stdout


def test_java_8_without_root_is_a_clear_error_naming_the_version(machine):
    machine.java('java version "1.8.0_392"')
    done, log = machine(root=False)
    assert done.returncode == 1
    assert "Java 17 or newer" in done.stderr and "Java 8" in done.stderr
    assert "apt-get" not in log and not (machine.project / ".venv").exists()


def test_java_17_and_a_python_with_venv_install_nothing_with_apt(machine):
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert "apt-get" not in log
    assert "venv .venv" in log and "pip -m pip install -q -c requirements.lock uv" in log
    # from uv's cache alone: it had the whole set, so the index was not asked
    assert INSTALL_OFFLINE in log and INSTALL_ONLINE not in log
    assert "pip -m pip install -q -c requirements.lock -e .[dev]" not in log
    # uv's cache is pruned after the installs (an install from the index leaves a 1.9 GB pyspark revision behind)
    assert log.index("uv cache prune -q") > log.index(INSTALL_OFFLINE)
    assert log.index("uv cache prune -q") > log.index("--target .flink/2.3.0.partial")


INSTALL = "--compile-bytecode --python .venv/bin/python -c requirements.lock -e .[dev]"
INSTALL_OFFLINE, INSTALL_ONLINE = f"uv pip install -q --offline {INSTALL}", f"uv pip install -q {INSTALL}"


def test_with_a_cold_uv_cache_the_set_comes_from_the_index(machine, tmp_path):
    (tmp_path / "state" / "cold-cache").touch()
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert log.index(INSTALL_OFFLINE) < log.index(INSTALL_ONLINE)  # the cache first, then the index
    assert FLINK_INSTALL in log and FLINK_INSTALL.replace(" --offline", "") in log
    assert (machine.project / ".flink" / "2.3.0" / "pyflink" / "bin" / "flink").exists()


def test_a_failed_prune_of_uvs_cache_is_a_warning(machine, tmp_path):
    (tmp_path / "state" / "prune-fails").touch()
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert "uv cache prune -q" in log and "`uv cache prune` failed; the set-up itself is done" in done.stderr
    assert "ready:" in done.stdout


def test_without_uv_pip_installs_the_pinned_set(machine, tmp_path):
    (tmp_path / "state" / "no-uv").touch()
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert "uv could not be installed; installing with pip" in done.stdout
    assert "pip -m pip install -q -c requirements.lock -e .[dev]" in log and "uv " not in log


def test_a_python_without_venv_gets_python311_venv(machine):
    done, log = machine(venv=False)
    assert done.returncode == 0, done.stderr
    assert "apt-get install -y -qq --no-install-recommends python3.11-venv" in log
    assert log.index("python3.11-venv") < log.index("venv .venv")  # installed before the venv is made
    assert (machine.project / ".venv" / "bin" / "python").exists()


@pytest.mark.parametrize("damage", ["no python", "broken python"])
def test_a_half_made_venv_is_made_again(machine, damage):
    bin_dir = machine.project / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    if damage == "broken python":
        _write(bin_dir / "python", "#!/bin/bash\nexit 1\n")
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert "removing a half-made .venv" in done.stdout and "venv .venv" in log
    assert (bin_dir / "python").read_text() == VENV_PYTHON


def test_a_healthy_venv_is_left_alone_and_a_second_run_does_nothing(machine):
    first, _ = machine()
    assert first.returncode == 0, first.stderr
    marker = machine.project / ".venv" / "keep"
    marker.touch()
    second, log = machine()
    assert second.returncode == 0, second.stderr
    assert marker.exists() and log.count("venv .venv") == 1 and log.count(INSTALL_OFFLINE) == 1
    assert log.count("uv cache prune") == 1  # nothing installed the second time, nothing to prune


FLINK_INSTALL = ("uv pip install -q --offline --no-deps --python .venv/bin/python --target .flink/2.3.0.partial "
                 "apache-flink==2.3.0 apache-flink-libraries==2.3.0")


def test_flink_is_installed_into_its_own_folder_by_default_once_and_not_with_no_flink(machine):
    done, log = machine(args=("--no-flink",))
    assert done.returncode == 0, done.stderr
    assert "--target" not in log and not (machine.project / ".flink").exists()
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert FLINK_INSTALL in log
    assert (machine.project / ".flink" / "2.3.0" / "pyflink" / "bin" / "flink").is_file()
    assert not (machine.project / ".flink" / "2.3.0.partial").exists()
    again, log = machine(args=("--flink",))
    assert again.returncode == 0, again.stderr
    assert log.count(FLINK_INSTALL) == 1



def test_a_failed_flink_install_warns_and_goes_on_by_default_and_fails_when_asked_for(machine, tmp_path):
    (tmp_path / "state" / "no-flink").touch()  # the index cannot give the wheel (network, mirror)
    done, log = machine()
    assert done.returncode == 0, done.stderr
    assert FLINK_INSTALL in log and "could not be installed" in done.stderr and "going on without it" in done.stderr
    assert not (machine.project / ".flink" / "2.3.0").exists() and not (machine.project / ".flink" / "2.3.0.partial").exists()
    asked, _ = machine(args=("--flink",))
    assert asked.returncode == 1 and "could not be installed" in asked.stderr

def test_an_unknown_option_is_refused_by_name(machine):
    done, log = machine(args=("--flnik",))
    assert done.returncode == 2 and "--flnik" in done.stderr
    assert log == ""
