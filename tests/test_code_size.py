"""The size limits: no class over 200 lines, no function over 80, in the code that runs.

In:  the Python files under regionchaos/, plugins/, spark_jobs/ and dags/ (parsed with `ast`,
     never imported); for the checker's own tests, small sources written to tmp_path.
Out: a failure naming every class over 200 lines and every function (sync or async, nested or
     a method) over 80 lines, as ``file:line kind name: N lines``. A definition's length is
     ``end_lineno - lineno + 1``: from its ``def`` / ``class`` line (its decorators not
     counted) to its last line, docstring and comments inside included.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("regionchaos", "plugins", "spark_jobs", "dags")
MAX_CLASS_LINES = 200
MAX_FUNCTION_LINES = 80
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def oversized(source: str, filename: str) -> list[str]:
    """Every definition in ``source`` over its limit, as ``filename:line kind name: N lines``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.ClassDef):
            kind, limit = "class", MAX_CLASS_LINES
        elif isinstance(node, _FUNCTIONS):
            kind, limit = "function", MAX_FUNCTION_LINES
        else:
            continue
        length = node.end_lineno - node.lineno + 1
        if length > limit:
            found.append((node.lineno, f"{filename}:{node.lineno} {kind} {node.name}: {length} lines"))
    return [text for _, text in sorted(found)]


def oversized_in(root: Path, folders: tuple[str, ...] = FOLDERS) -> list[str]:
    """Every definition over its limit in the ``*.py`` files under ``root/folder``."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            found += oversized(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
    return found


def test_no_class_or_function_over_the_limits():
    files = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]
    assert len(files) > 20, f"expected the project's sources under {FOLDERS}, found {len(files)} files"
    over = oversized_in(ROOT)
    assert not over, "over the limits (class 200, function 80 lines):\n" + "\n".join(over)


# -- the checker itself, on synthetic sources -------------------------------------------------


def _function(name: str, lines: int, indent: str = "", keyword: str = "def") -> str:
    """A function of exactly ``lines`` lines: its def line and ``lines - 1`` body lines."""
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))
    return f"{indent}{keyword} {name}():\n{body}"


def _class(name: str, lines: int) -> str:
    """A class of exactly ``lines`` lines: its class line and ``lines - 1`` attribute lines."""
    return f"class {name}:\n" + "".join(f"    a{i} = {i}\n" for i in range(lines - 1))


def _write(tmp_path: Path, folder: str, name: str, source: str) -> None:
    (tmp_path / folder).mkdir(exist_ok=True)
    (tmp_path / folder / name).write_text(source)


def test_checker_reports_81_line_function_and_201_line_class(tmp_path):
    _write(tmp_path, "regionchaos", "big.py", _function("too_long", 81) + "\n" + _class("TooBig", 201))
    assert oversized_in(tmp_path) == [
        "regionchaos/big.py:1 function too_long: 81 lines",
        "regionchaos/big.py:83 class TooBig: 201 lines",
    ]


def test_checker_accepts_exactly_80_and_200(tmp_path):
    _write(tmp_path, "regionchaos", "edge.py", _function("just_fits", 80) + "\n" + _class("JustFits", 200))
    assert oversized_in(tmp_path) == []


def test_checker_finds_nested_async_and_methods_and_ignores_decorators(tmp_path):
    nested = "def outer():\n" + _function("inner", 81, indent="    ") + "    return inner\n"
    method = "class Small:\n    @staticmethod\n" + _function("method", 81, indent="    ")
    decorated = "@decorator\n@another\n" + _function("decorated", 80)
    _write(tmp_path, "dags", "nested.py", nested)
    _write(tmp_path, "plugins", "methods.py", method)
    _write(tmp_path, "spark_jobs", "coro.py", _function("coro", 81, keyword="async def"))
    _write(tmp_path, "spark_jobs", "decorated.py", decorated)
    assert oversized_in(tmp_path) == [
        "plugins/methods.py:3 function method: 81 lines",
        "spark_jobs/coro.py:1 function coro: 81 lines",
        "dags/nested.py:1 function outer: 83 lines",
        "dags/nested.py:2 function inner: 81 lines",
    ]


def test_checker_reads_only_the_four_folders(tmp_path):
    _write(tmp_path, "tests", "long_test.py", _function("long_test", 200))
    _write(tmp_path, "regionchaos", "fine.py", _function("short", 3))
    assert oversized_in(tmp_path) == []
