"""The run's vocabulary has one home (`regionchaos.run`): verdict merge, exit codes, and the ``--set``
reader and writer.

In:  `regionchaos.run` (pure functions, no Spark or S3), the CLI's --help epilog, and the source
     files of regionchaos/, spark_jobs/, plugins/, dags/ and bench/ (read as ASTs, never run).
Out: the merge order on a table of cases, the exit codes --help names, format -> parse round trips
     (hypothesis), parse errors naming ``--set``, and a guard that no other module assigns the
     exit numbers, ranks verdicts for its own merge, writes out an unknown result by hand or formats
     ``--set`` arguments by hand (shown to fail on synthetic sources). Which exit code a run gets is
     the outcome policy's: tests/test_outcomes.py.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from regionchaos import cli
from regionchaos.run import ExitCode, Verdict, format_set, parse_set, set_args
from regionchaos.scenario import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
CODE_FOLDERS = ("regionchaos", "spark_jobs", "plugins", "dags", "bench")
HOME = ROOT / "regionchaos" / "run"  # the one place allowed to define the vocabulary

# -- merge and exit codes ------------------------------------------------------------------------

MERGE_CASES = [
    ([], "unknown"),  # nothing judged is never valid
    (["valid"], "valid"),
    (["invalid"], "invalid"),
    (["unknown"], "unknown"),
    (["valid", "valid", "valid"], "valid"),
    (["valid", "unknown"], "unknown"),
    (["valid", "invalid"], "invalid"),
    (["unknown", "invalid"], "invalid"),
    (["valid", "unknown", "invalid"], "invalid"),
    (["valid", "no verdict"], "unknown"),  # not a verdict: unknown
    (["valid", None], "unknown"),
    (["invalid", "no verdict"], "invalid"),
]


@pytest.mark.parametrize("verdicts, expected", MERGE_CASES)
def test_merge_is_false_over_unknown_over_true_in_any_order(verdicts, expected):
    for order in itertools.permutations(verdicts):
        merged = Verdict.merge(order)
        assert merged == expected, order
        assert type(merged) is str  # summaries keep plain strings (JSON, YAML, pydantic)


@pytest.mark.parametrize("success, expected", [(True, "valid"), (False, "invalid"), (None, "unknown")])
def test_a_checks_success_reads_as_a_verdict(success, expected):
    assert Verdict.of_success(success) == expected


def test_exit_codes_and_their_meanings_are_what_help_prints():
    assert [(c.name, int(c)) for c in ExitCode] == [("VALID", 0), ("INVALID", 1), ("BAD_INPUT", 2), ("UNKNOWN", 3)]
    assert cli.EPILOG == (
        "exit codes (the outcome table, README: Outcomes): 0 valid, or a declared finding where its scenario "
        "allows it; 1 an invariant violated that no finding explains, a finding's scenario that no longer fails, "
        "or a mutant (caught or not); 2 bad input; 3 unknown / infrastructure error")


# -- --set ----------------------------------------------------------------------------------------

KEYS = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,8}(\.[A-Za-z0-9_-]{1,8}){0,3}", fullmatch=True).filter(
    lambda k: k != "rescale")  # rescale reads AFTER:PARALLELISM plans: its own test below


def _yaml_text(s: str) -> bool:
    """Text YAML itself reads back as the same text (not a number, bool, null or mapping)."""
    try:
        return s == s.strip() and yaml.safe_load(s) == s
    except yaml.YAMLError:
        return False


TEXT = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 ._-/:"), min_size=1, max_size=12).filter(
    _yaml_text)
SCALARS = (st.integers(-(10**15), 10**15) | st.booleans() | st.none() | TEXT
           | st.floats(allow_nan=False, allow_infinity=False))
VALUES = SCALARS | st.lists(SCALARS, max_size=4)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_any_overrides_survive_format_then_parse(overrides):
    pairs = format_set(overrides)
    assert len(pairs) == len(overrides)
    assert parse_set(pairs) == overrides
    assert set_args(overrides) == [a for pair in pairs for a in ("--set", pair)]


def test_a_rescale_plan_survives_format_then_parse():
    plan = parse_set(["rescale=3:2,7:1"])
    assert plan["rescale"] == [{"after_checkpoint": 3, "parallelism": 2}, {"after_checkpoint": 7, "parallelism": 1}]
    assert parse_set(format_set(plan)) == plan


def test_format_writes_text_as_typed_and_the_rest_as_json():
    assert format_set({"a.b": "on", "c": 0.2, "d": [1, "x"], "e": True, "f": None}) == [
        "a.b=on", "c=0.2", 'd=[1, "x"]', "e=true", "f=null"]
    assert format_set({"faults.decline": 1e-05}) == ["faults.decline=1.0e-05"]  # YAML 1.1 reads 1e-05 as text


@pytest.mark.parametrize("pair, says", [
    ("novalue", "expected KEY=VALUE, got 'novalue'"),
    ("=1", "expected KEY=VALUE, got '=1'"),
    ("a b=1", "'a b' is not a field or Flink key (letters, digits, '.', '_' and '-')"),
])
def test_a_bad_pair_is_refused_naming_set(pair, says):
    with pytest.raises(ScenarioError) as caught:
        parse_set([pair])
    assert caught.value.errors == [("--set", says)]
    assert str(caught.value).startswith("invalid input:")


# -- one home: an AST guard over the code folders --------------------------------------------------

VERDICT_WORDS = {"valid", "invalid", "unknown"}


def _const(node) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _assigned_names(target) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _assigned_names(elt)]
    return []


def _exit_numbers(node) -> bool:
    """``EXIT_X = 2``, ``EXIT_A, EXIT_B = 0, 1`` or ``EXIT = {0: "valid", ...}``."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any(re.match(r"_?EXIT", name) for t in targets for name in _assigned_names(t)):
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    if isinstance(node.value, ast.Dict):
        values = node.value.keys
    return any(isinstance(_const(v), int) for v in values)


def _rank_table(node) -> bool:
    """A dict giving each verdict a number: the makings of another merge (or exit code table)."""
    if not isinstance(node, ast.Dict):
        return False
    pairs = {_const(k): v for k, v in zip(node.keys, node.values) if isinstance(_const(k), str)}
    return len(VERDICT_WORDS & set(pairs)) >= 2 and all(
        isinstance(_const(pairs[w]), int) or isinstance(pairs[w], ast.Name) and "EXIT" in pairs[w].id
        for w in VERDICT_WORDS & set(pairs))


def _returns_verdict_words(node) -> bool:
    """A function returning both "invalid" and "unknown" literals decides a merge itself."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    said = {_const(c) for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None
            for c in ast.walk(r.value)}
    return {"invalid", "unknown"} <= said


def _unknown_dict(node) -> bool:
    if not isinstance(node, ast.Dict):
        return False
    pairs = {_const(k): v for k, v in zip(node.keys, node.values)}
    return "checks" in pairs and _const(pairs.get("verdict")) == "unknown"


def _set_by_hand(node) -> bool:
    """``["--set", f"{k}={v}"]``: a --set argument written without `format_set`."""
    return isinstance(node, (ast.List, ast.Tuple)) and any(_const(e) == "--set" for e in node.elts)


RULES = {"assigns exit numbers": _exit_numbers, "ranks verdicts (its own merge)": _rank_table,
         "returns verdict words (its own merge)": _returns_verdict_words,
         "writes the unknown result": _unknown_dict, "formats --set by hand": _set_by_hand}


def vocabulary_violations(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    return [f"{where}:{node.lineno}: {what}" for node in ast.walk(tree)
            for what, rule in RULES.items() if rule(node)]


SYNTHETIC = {
    "assigns exit numbers": ["EXIT_VALID, EXIT_INVALID = 0, 1", "EXIT_INFRA = 3", "EXIT = {0: 'valid', 3: 'unknown'}",
                             "_EXIT_CODES: dict = {2: 'bad input'}"],
    "ranks verdicts (its own merge)": ["order = {'invalid': 2, 'unknown': 1, 'valid': 0}",
                                       "CODES = {'valid': EXIT_VALID, 'invalid': EXIT_INVALID}"],
    "returns verdict words (its own merge)": [
        "def m(values):\n    if False in values:\n        return 'invalid'\n    return 'unknown' if None in values else 'valid'"],
    "writes the unknown result": ["r = {'checks': [], 'verdict': 'unknown', 'error': e}"],
    "formats --set by hand": ["args += ['--set', f'{k}={v}']", "cmd = ('--set', 'a=1')"],
}


@pytest.mark.parametrize("what, source", [(w, s) for w, sources in SYNTHETIC.items() for s in sources])
def test_the_guard_catches_each_kind_of_duplicate(what, source):
    found = vocabulary_violations(source, "synthetic.py")
    assert any(f.endswith(what) for f in found), found


def test_the_guard_passes_code_that_uses_the_vocabulary():
    source = ("from regionchaos.run import ExitCode, Verdict, set_args, unknown_result\n"
              "code = ExitCode.BAD_INPUT\nverdict = Verdict.merge(['valid', 'unknown'])\n"
              "args = ['--seed', '1', *set_args({'a': 1})]\nresult = unknown_result('boom')\n"
              "counts = {v: 0 for v in ('valid', 'invalid', 'unknown')}\n"
              "p.add_argument('--set', dest='overrides', action='append')\n")
    assert vocabulary_violations(source, "clean.py") == []


@pytest.mark.slow
def test_no_module_outside_regionchaos_run_redefines_the_vocabulary():
    files = [p for folder in CODE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))
             if HOME not in p.parents and ".venv" not in p.parts]
    assert len(files) > 50  # the folders were found
    found = [v for p in files for v in vocabulary_violations(p.read_text(), str(p.relative_to(ROOT)))]
    assert found == []


# -- one lifecycle: one start, one judge, one summary builder -------------------------------------

# (callee, the one function allowed to call it): the start of a run is `runner.start`, the GX pass
# (its workers, its results read back) is reached only through `regionchaos.judge.engine.judge`, and a
# summary is built only by `build_summary`.
ONE_PATH = {"prepare_run": "start", "emulate": "start", "suite_workers": "judge", "rule_results_from_gx": "validate"}
SUMMARY_KEYS = {"run_id", "verdict", "checks", "stats", "replay"}


def _called(node) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def lifecycle_violations(source: str, where: str) -> list[str]:
    """Calls of a lifecycle step from anywhere but its one caller (the innermost function around the
    call), and summary dicts written out (a dict literal with a summary's keys)."""
    found: list[str] = []

    def visit(node, owner: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            owner = node.name
        callee = _called(node)
        if callee in ONE_PATH and ONE_PATH[callee] != owner:
            found.append(f"{where}:{node.lineno}: {callee} called from {owner}, not {ONE_PATH[callee]}")
        if isinstance(node, ast.Dict) and SUMMARY_KEYS <= {_const(k) for k in node.keys}:
            found.append(f"{where}:{node.lineno}: builds a run summary")
        for child in ast.iter_child_nodes(node):
            visit(child, owner)

    visit(ast.parse(source), "<module>")
    return found


def test_the_lifecycle_guard_catches_a_second_path():
    source = ("def run_many(store, sc):\n    runner.prepare_run(store, sc, run_id='r', mutant=None, replay='-')\n"
              "    runner.emulate(sc, store=store)\n"
              "def my_judge(spark, t):\n    return validator.validate(t['run'], workers=E.suite_workers(9))\n"
              "def summary_of(v):\n    return {'run_id': 'r', 'verdict': v['verdict'], 'checks': [], 'stats': {},"
              " 'replay': None}\n")
    found = lifecycle_violations(source, "synthetic.py")
    assert [f.split(": ", 1)[1] for f in found] == [
        "prepare_run called from run_many, not start", "emulate called from run_many, not start",
        "suite_workers called from my_judge, not judge", "builds a run summary"], found
    clean = ("def go(store, sc):\n    return runner.start(store, sc, run_id='r', mutant=None, replay='-')\n"
             "def check(spark, t):\n    return E.judge(spark, t, ['r'], total_rows=1)\n")
    assert lifecycle_violations(clean, "clean.py") == []


def test_a_run_starts_is_judged_and_is_summed_up_in_one_place_each():
    homes = {ROOT / "regionchaos" / "runner.py", ROOT / "regionchaos" / "judge" / "engine.py",
             ROOT / "regionchaos" / "run" / "summary.py"}
    files = [p for folder in CODE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))
             if ".venv" not in p.parts]
    found = [v for p in files for v in lifecycle_violations(p.read_text(), str(p.relative_to(ROOT)))
             if p not in homes or "builds a run summary" in v and p.name != "summary.py"]
    assert found == []
    # and in the homes, only the one caller
    for home in homes - {ROOT / "regionchaos" / "run" / "summary.py"}:
        assert [v for v in lifecycle_violations(home.read_text(), home.name) if "called from" in v] == []
