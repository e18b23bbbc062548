"""bench/'s layout: scripts in bench/, what each one produced in bench/results/<script>/, every bench/ path the
documentation mentions exists and every record is mentioned, no record named after a commit, a short README, and
scripts that import nothing from tests/ and leave sys.path alone. Pure file checks, no Spark.

In:  the repository's tree (or a tree built in a temporary directory, to show each check fails).
Out: the checks return the offending names; the tests assert there are none.
"""

from __future__ import annotations

import ast
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


README_MAX_LINES = 150
# A commit in a file name: 7 to 40 hex digits between separators, with a digit and a letter among them.
COMMIT_IN_NAME = re.compile(r"(?<![0-9a-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9a-z])")
# Records whose name may carry commits: those that compare commits (none today).
COMPARES_COMMITS: set[str] = set()


def records(root: Path) -> list[Path]:
    """Every file under bench/results/ but the write-ups (README.md)."""
    results = root / "bench" / "results"
    return sorted(p for p in results.rglob("*") if p.is_file() and p.name != "README.md") if results.is_dir() else []


def commits_in_names(root: Path) -> list[str]:
    """Records (and folders) under bench/results/ named after a commit."""
    results = root / "bench" / "results"
    if not results.is_dir():
        return []
    return [p.relative_to(root).as_posix() for p in sorted(results.rglob("*"))
            if COMMIT_IN_NAME.search(p.name) and p.relative_to(root).as_posix() not in COMPARES_COMMITS]


def unmentioned_records(root: Path) -> list[str]:
    """Records that no document, write-up, other record or bench script names (by path, by name, or by a
    <placeholder> pattern): a record nobody quotes is superseded, and git keeps it."""
    sources = documents(root) + sorted((root / "bench").glob("*.py"))
    sources += [p for p in records(root) if p.suffix in (".md", ".txt")]
    texts = {p: p.read_text(errors="replace") for p in sources}
    patterns = [re.sub(r"<[^<>/]*>", "*", m.rstrip(".,:;")) for text in texts.values()
                for m in BENCH_PATH.findall(text) if "<" in m]
    out = []
    for record in records(root):
        rel = record.relative_to(root).as_posix()
        named = any(record.name in text for source, text in texts.items() if source != record)
        if not named and not any(Path(rel).match(pattern) for pattern in patterns):
            out.append(rel)
    return out


def scripts_reaching_outside(root: Path) -> list[str]:
    """'script: what' for each bench script that imports from tests/ or touches sys.path."""
    out = []
    for path in sorted((root / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names) \
                    or isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests":
                out.append(f"{path.name}: imports from tests/ (line {node.lineno})")
            elif isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                    and node.value.id == "sys":
                out.append(f"{path.name}: sys.path (line {node.lineno})")
    return out


def test_bench_holds_only_scripts_and_its_readme():
    assert stray_in_bench(ROOT) == [], "move results to bench/results/<script>/ (bench/README.md: Layout)"


def test_every_result_folder_is_named_after_a_script():
    assert unowned_result_folders(ROOT) == [], "bench/results/<script>/ must name a bench/<script>.py"


def test_every_bench_path_the_documentation_mentions_exists():
    assert missing_paths(ROOT) == []


def test_every_record_is_quoted_and_none_is_named_after_a_commit():
    assert unmentioned_records(ROOT) == [], "delete a superseded record (git keeps it) or quote it in a write-up"
    assert commits_in_names(ROOT) == [], "name a record after its script or options, not a commit"


def test_the_readme_is_short_and_the_scripts_keep_to_bench():
    lines = (ROOT / "bench" / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"bench/README.md has {lines} lines"
    assert scripts_reaching_outside(ROOT) == []


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


def test_the_checks_find_an_unquoted_record_a_commit_in_a_name_and_a_script_reaching_outside(tmp_path):
    root = _tree(tmp_path, {
        "bench/README.md": "Latest: `bench/results/swarm/swarm.json`; each mutant: `bench/results/shrink/<m>.yaml`.\n",
        "bench/swarm.py": "import sys\nsys.path.insert(0, 'x')\n",
        "bench/shrink.py": "from tests.test_mutants import CASES\nimport tests.judge_pool\n",
        "bench/run.py": "from bench.swarm import x\npath = 'sys.path'\n",
        "bench/results/swarm/swarm.json": "[]", "bench/results/swarm/swarm_9e7e510.json": "[]",
        "bench/results/swarm/old.json": "[]", "bench/results/swarm/README.md": "",
        "bench/results/shrink/a.yaml": "", "bench/results/shrink/probe.md": "quotes `quoted.txt`",
        "bench/results/shrink/quoted.txt": "", "bench/results/run/run_smoke.json": "{}",
        "bench/results/run/README.md": "`run_smoke.json`; not a commit: deadline_2026, cafe, 1234567",
    })
    assert unmentioned_records(root) == ["bench/results/shrink/probe.md", "bench/results/swarm/old.json",
                                         "bench/results/swarm/swarm_9e7e510.json"]
    assert commits_in_names(root) == ["bench/results/swarm/swarm_9e7e510.json"]
    assert scripts_reaching_outside(root) == ["shrink.py: imports from tests/ (line 1)",
                                              "shrink.py: imports from tests/ (line 2)", "swarm.py: sys.path (line 2)"]
