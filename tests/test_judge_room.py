"""The judge room's boundaries, read from the source as ASTs (never run).

In:  the source files of regionchaos/, spark_jobs/, plugins/, dags/ and bench/.
Out: guards, each shown to fail on a synthetic source: `regionchaos.findings.outcome` and
     `meets_expectation` are called only in regionchaos/judge/ (every path takes a run's result from
     a `Judgement`); exit codes are chosen only by the outcome policy (`regionchaos.judge.policy`):
     no ``ExitCode.MEMBER`` elsewhere and no ``sys.exit`` of anything but a ``main()``; one `Judgement`
     type; no module cache of frames and no ``validate`` module; in regionchaos/, an import inside a
     function only defers a heavy library, and its module says why at its top.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODE_FOLDERS = ("regionchaos", "spark_jobs", "plugins", "dags", "bench")
JUDGE_ROOM = ROOT / "regionchaos" / "judge"
POLICY = JUDGE_ROOM / "policy.py"
EXIT_CODES = ROOT / "regionchaos" / "run" / "verdict.py"  # where the four codes are defined, with their meanings
HEAVY = ("pyspark", "great_expectations", "matplotlib", "airflow", "boto3", "botocore", "moto", "werkzeug")


def code_files(folders=CODE_FOLDERS) -> list[Path]:
    return [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py")) if ".venv" not in p.parts]


def _called(node) -> tuple[str | None, str | None]:
    """(the object's name, the function's name) of a call: ``findings.outcome(x)`` -> ("findings", "outcome")."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return (func.value.id if isinstance(func.value, ast.Name) else None), func.attr
    return None, func.id if isinstance(func, ast.Name) else None


def findings_calls(source: str) -> list[int]:
    """Lines calling `meets_expectation`, or `outcome` as the findings module's (an attribute of ``findings``,
    or the name imported from it)."""
    tree = ast.parse(source)
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").endswith("findings") for alias in node.names}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        owner, name = _called(node)
        if name == "meets_expectation" or name == "outcome" and (owner == "findings" or owner is None
                                                                and "outcome" in imported):
            out.append(node.lineno)
    return out


def exit_choices(source: str) -> list[int]:
    """Lines naming an exit code's member (``ExitCode.VALID``) or exiting with anything but ``main()``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ExitCode":
            out.append(node.lineno)
        if isinstance(node, ast.Call) and _called(node) == ("sys", "exit"):
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Call) and _called(arg)[1] == "main"):
                out.append(node.lineno)
    return out


def function_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import inside a function body."""
    out = []

    def visit(node, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, ast.Import):
                out.extend((child.lineno, alias.name) for alias in child.names)
            elif inside and isinstance(child, ast.ImportFrom):
                out.append((child.lineno, "." * child.level + (child.module or "")))
            visit(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(ast.parse(source), False)
    return out


def light_function_imports(source: str) -> list[str]:
    """Imports inside functions of anything but a heavy library (`HEAVY`)."""
    return [f"{line}: {module}" for line, module in function_imports(source) if not module.startswith(HEAVY)]


def unexplained_deferral(source: str) -> bool:
    """A module that defers an import without saying so at its top (its docstring names the library and
    that it is imported later: "imported inside", "imported lazily", "imported ... on first use")."""
    deferred = {module.split(".")[0] for _, module in function_imports(source)}
    doc = ast.get_docstring(ast.parse(source)) or ""
    said = re.search(r"\bimported\b[^.]*\b(inside|lazily|first use|here)\b", doc, re.S)
    names = {"great_expectations": "great expectations"}
    return bool(deferred) and not (said and all(names.get(m, m) in doc.lower() or m in doc for m in deferred))


SYNTHETIC = {
    findings_calls: ["from regionchaos import findings\nfindings.outcome(checks)",
                     "from regionchaos.findings import outcome\nshows = outcome(c)",
                     "ok, why = findings.meets_expectation(sc, 'invalid', [], [], failed_rules=[])"],
    exit_choices: ["return ExitCode.INVALID", "sys.exit(3)", "sys.exit(1 if bad else 0)"],
}


@pytest.mark.parametrize("guard, source", [(g, s) for g, sources in SYNTHETIC.items() for s in sources])
def test_each_guard_catches_its_kind(guard, source):
    assert guard(source)


def test_the_guards_pass_code_that_goes_through_the_judge():
    clean = ("from regionchaos.judge import run_outcome\nsys.exit(main())\n"
             "def f(summary):\n    outcome = run_outcome(summary)\n    return outcome.exit_code\n")
    assert findings_calls(clean) == [] and exit_choices(clean) == []
    assert light_function_imports("def f():\n    import pyspark\n    from great_expectations import x\n") == []
    assert light_function_imports("def f():\n    from .runner import run\n") == ["2: .runner"]
    assert unexplained_deferral('"""A module."""\ndef f():\n    import pyspark\n')
    assert not unexplained_deferral('"""A module.\n\npyspark is imported inside `f`: seconds."""\n'
                                    'def f():\n    import pyspark\n')


def test_findings_are_read_only_in_the_judge_room():
    files = [p for p in code_files() if JUDGE_ROOM not in p.parents]
    assert len(files) > 50
    found = [f"{p.relative_to(ROOT)}:{line}" for p in files for line in findings_calls(p.read_text())]
    assert found == []
    assert [f"{p.relative_to(ROOT)}" for p in code_files(("regionchaos",)) if JUDGE_ROOM in p.parents
            and findings_calls(p.read_text())] == ["regionchaos/judge/judgement.py"]


def test_only_the_policy_chooses_an_exit_code():
    files = [p for p in code_files(("regionchaos", "spark_jobs", "plugins", "dags")) if p not in (POLICY, EXIT_CODES)]
    found = [f"{p.relative_to(ROOT)}:{line}" for p in files for line in exit_choices(p.read_text())]
    assert found == []
    assert exit_choices(POLICY.read_text())  # the table itself names them


def test_one_judgement_type_no_frame_cache_no_validate_module():
    defined = [p.relative_to(ROOT).as_posix() for p in code_files() for node in ast.walk(ast.parse(p.read_text()))
               if isinstance(node, ast.ClassDef) and node.name == "Judgement"]
    assert defined == ["regionchaos/judge/judgement.py"]
    assert not (ROOT / "regionchaos" / "validate.py").exists() and not (ROOT / "regionchaos" / "tables" / "cache.py").exists()
    text = "\n".join(p.read_text() for p in code_files())
    assert "remember_frames" not in text and "cached_frames" not in text
    assert not re.search(r"from regionchaos import [^\n]*\bvalidate\b|regionchaos\.validate\b|from \.validate ", text)


def test_imports_inside_functions_only_defer_heavy_libraries_and_say_so():
    files = code_files(("regionchaos",))
    light = {p.relative_to(ROOT).as_posix(): light_function_imports(p.read_text()) for p in files}
    assert {k: v for k, v in light.items() if v} == {}
    assert [p.relative_to(ROOT).as_posix() for p in files if unexplained_deferral(p.read_text())] == []
