"""bench/'s layout (issue 30): scripts in bench/, what each one produced in bench/results/<script>/,
and every bench/ path the documentation mentions exists. Pure file checks, no Spark.

In:  the repository's tree (or a tree built in a temporary directory, to show each check fails).
Out: the checks return the offending names; the tests assert there are none.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# bench/results/ folders not named after a script: hand measurements with no script behind them.
NOT_A_SCRIPT = {"probes"}
# bench/ paths the documentation names that a clone does not have: virtualenvs the benchmarks make on
# their first run (git-ignored).
MADE_ON_FIRST_RUN = {"bench/.flink-venv", "bench/.mutmut-venv"}
# A bench/ path in running text: not part of a longer path, URL or git object (/tmp/clone/bench/...,
# COMMIT:bench/...), ends before
# a space, quote or bracket; <placeholder> stands for any one name.
BENCH_PATH = re.compile(r"(?<![\w./:-])bench/[\w.<>*/-]*")


def stray_in_bench(root: Path) -> list[str]:
    """Entries directly in bench/ other than scripts, README.md and results/ (hidden entries and
    __pycache__ are local and skipped)."""
    out = []
    for entry in sorted((root / "bench").iterdir()):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            if entry.name != "results":
                out.append(entry.name + "/")
        elif entry.suffix != ".py" and entry.name != "README.md":
            out.append(entry.name)
    return out


def unowned_result_folders(root: Path) -> list[str]:
    """Folders under bench/results/ (and files directly in it) not named after a script of bench/."""
    scripts = {p.stem for p in (root / "bench").glob("*.py")}
    results = root / "bench" / "results"
    if not results.is_dir():
        return []
    return [e.name + ("/" if e.is_dir() else "") for e in sorted(results.iterdir())
            if not e.is_dir() or (e.name not in scripts and e.name not in NOT_A_SCRIPT)]


def documents(root: Path) -> list[Path]:
    """The documents whose bench/ paths must exist: the READMEs, FINDINGS.md, docs/, expectations'
    README and every write-up under bench/results/."""
    named = [root / "README.md", root / "bench" / "README.md", root / "FINDINGS.md",
             root / "expectations" / "README.md"]
    return ([p for p in named if p.is_file()] + sorted((root / "docs").glob("*.md"))
            + sorted((root / "bench" / "results").rglob("*.md")))


def missing_paths(root: Path) -> list[str]:
    """'document: path' for each bench/ path a document mentions that matches nothing in the tree."""
    out = []
    for doc in documents(root):
        for mention in sorted(set(BENCH_PATH.findall(doc.read_text(errors="replace")))):
            path = mention.rstrip(".,:;")
            if path.rstrip("/") in MADE_ON_FIRST_RUN:
                continue
            pattern = re.sub(r"<[^<>/]*>", "*", path.rstrip("/"))
            found = any(root.glob(pattern)) if "*" in pattern else (root / pattern).exists()
            if not found:
                out.append(f"{doc.relative_to(root)}: {path}")
    return out


def test_bench_holds_only_scripts_and_its_readme():
    assert stray_in_bench(ROOT) == [], "move results to bench/results/<script>/ (bench/README.md: Layout)"


def test_every_result_folder_is_named_after_a_script():
    assert unowned_result_folders(ROOT) == [], "bench/results/<script>/ must name a bench/<script>.py"


def test_every_bench_path_the_documentation_mentions_exists():
    assert missing_paths(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_checks_find_a_result_beside_the_scripts_an_orphan_folder_and_a_dead_path(tmp_path):
    root = _tree(tmp_path, {
        "bench/README.md": "See `bench/results/swarm/README.md`, `bench/results/swarm/<name>.json`, "
                           "`bench/.flink-venv` and bench/swarm_old.md.\n",
        "bench/swarm.py": "", "bench/swarm.json": "{}", "bench/study/index.html": "",
        "bench/results/swarm/README.md": "Made by `bench/swarm.py`; page: `bench/results/study/x.html`.\n",
        "bench/results/swarm/a.json": "{}",
        "bench/results/gone/README.md": "", "bench/results/probes/README.md": "", "bench/results/loose.md": "",
        "docs/X.md": "PYTHONPATH=/tmp/clone/bench/nothing.py is not a bench path; bench/swarm.py is.\n",
    })
    assert stray_in_bench(root) == ["study/", "swarm.json"]
    assert unowned_result_folders(root) == ["gone/", "loose.md"]
    assert missing_paths(root) == ["bench/README.md: bench/swarm_old.md",
                                   "bench/results/swarm/README.md: bench/results/study/x.html"]
