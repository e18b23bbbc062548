"""The suites as files: the registry of invariants and the suites that judge them.

In:  ``expectations/`` (``$REGIONCHAOS_EXPECTATIONS`` overrides it): ``suites/NN_<name>.yaml`` lists the rules
     of a suite, ``sql/<name>/<rule>.sql`` holds each rule's query, ``custom.py`` the GX expectation.
Out: `load_suites` (the suites in protocol order, checked against the registry `EXPECTED_INVARIANTS`: a
     suite or rule file missing is a `SuiteError`, never a smaller "valid"), `load_custom` (``custom.py``
     as a module, loaded once), `Suite` / `Rule`, `strip_comments`, `gx_suite_name` and the backends a
     suite's ``applies_to`` may name.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..scenario import BACKENDS as SCENARIO_BACKENDS
from ..scenario import INVARIANTS

# The registry: the twelve invariants of PROTOCOL.md section 9, in order, each judged by the suite of
# that name (scenario.INVARIANTS). A verdict is valid only if every one of them has a check and every
# rule its suite file names has a result; a suite or rule file that is missing is unknown, never a
# smaller "valid" (load_suites, merge_verdict).
EXPECTED_INVARIANTS = INVARIANTS
EXPECTATIONS_ENV = "REGIONCHAOS_EXPECTATIONS"
CUSTOM_MODULE = "regionchaos_expectations_custom"
EVALUABLE = "_evaluable"
# Where a run's artifacts come from; a suite's ``applies_to`` (suite YAML) maps each backend it applies to onto
# ``all`` or the list of its rules that apply there; a suite without the key applies to the emulation only.
BACKENDS = SCENARIO_BACKENDS  # regionchaos.scenario.BACKENDS: a scenario's `backend`
DEFAULT_BACKEND = "emulation"
ALL_RULES = "all"


def expectations_dir() -> Path:
    """``$REGIONCHAOS_EXPECTATIONS``, else ``expectations/`` next to the package (the repo root)."""
    env = os.environ.get(EXPECTATIONS_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "expectations"


@dataclass(frozen=True)
class Rule:
    name: str
    sql: str
    description: str


@dataclass(frozen=True)
class Suite:
    name: str
    invariant: int
    title: str
    claim: str
    mutants: tuple[str, ...]
    findings: tuple[str, ...]
    rules: tuple[Rule, ...]
    evaluable: Rule
    applies_to: tuple[tuple[str, tuple[str, ...] | None], ...] = ((DEFAULT_BACKEND, None),)  # None: every rule

    @property
    def rule_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in (self.evaluable, *self.rules))

    def rules_for(self, backend: str) -> tuple[Rule, ...] | None:
        """The rules that judge a run of ``backend`` (None: the suite does not apply to it)."""
        mapping = dict(self.applies_to)
        if backend not in mapping:
            return None
        names = mapping[backend]
        return self.rules if names is None else tuple(r for r in self.rules if r.name in names)

    def rule_parts(self) -> dict[str, str]:
        """Per rule (and the evaluability probe), its query with the common columns, tagged with ``rule``."""
        cols = ", ".join(
            ["run_id", "CAST(checkpoint_id AS BIGINT) AS checkpoint_id", "CAST(region AS INT) AS region",
             "CAST(subtask AS INT) AS subtask", "CAST(operator AS STRING) AS operator",
             "CAST(split AS INT) AS split", "CAST(detail AS STRING) AS detail"])
        return {rule.name: f"SELECT '{rule.name}' AS rule, {cols} FROM (\n{strip_comments(rule.sql)}\n) "
                           f"{rule.name.strip('_')}_rows" for rule in (self.evaluable, *self.rules)}

    def combined_sql(self) -> str:
        """Every rule (and the evaluability probe) in one query, tagged with ``rule``."""
        return "\nUNION ALL\n".join(self.rule_parts().values())


def strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--")).strip().rstrip(";")


def _description(sql: str) -> str:
    lines = []
    for line in sql.splitlines():
        if not line.lstrip().startswith("--"):
            break
        lines.append(line.lstrip()[2:].strip())
    return " ".join(lines)


def _rule(directory: Path, suite: str, name: str) -> Rule:
    path = directory / "sql" / suite / f"{name}.sql"
    sql = path.read_text()
    return Rule(name, sql, _description(sql))


class SuiteError(Exception):
    """The suites on disk do not cover the registry (`EXPECTED_INVARIANTS`): a suite missing, a
    suite without rules, a rule without its SQL. Validation cannot give a verdict: unknown."""


def _applies_to(doc: object, rule_names: list, where: str) -> tuple[tuple[str, tuple[str, ...] | None], ...]:
    """A suite's ``applies_to`` (backend -> ``all`` or a list of its rules), checked; absent: the emulation only.
    SuiteError names an unknown backend, an unknown rule, an empty list, or an emulation not judged in full."""
    if doc is None:
        return ((DEFAULT_BACKEND, None),)
    if not isinstance(doc, dict) or not doc:
        raise SuiteError(f"{where}: applies_to must map backends {list(BACKENDS)} to '{ALL_RULES}' or rule lists")
    out = []
    for backend, names in doc.items():
        if backend not in BACKENDS:
            raise SuiteError(f"{where}: applies_to names unknown backend {backend!r} (known: {list(BACKENDS)})")
        if names == ALL_RULES:
            out.append((backend, None))
            continue
        if not isinstance(names, list) or not names or set(map(str, names)) - set(map(str, rule_names)):
            raise SuiteError(f"{where}: applies_to.{backend} must be '{ALL_RULES}' or a non-empty list of its rules")
        out.append((backend, tuple(map(str, names))))
    if dict(out).get(DEFAULT_BACKEND, ()) is not None:  # the emulation's verdicts count every rule
        raise SuiteError(f"{where}: applies_to.{DEFAULT_BACKEND} must be '{ALL_RULES}'")
    return tuple(out)


def load_suites(directory: Path | None = None) -> list[Suite]:
    """The suites in file order (``suites/01_...yaml`` .. ``12_...``), checked against the registry:
    exactly one suite per invariant of `EXPECTED_INVARIANTS`, numbered as there, each with at least
    one rule, every rule (and ``_evaluable``) with its SQL file. Anything else raises SuiteError
    naming every problem: a deleted suite or rule file must never shrink what "valid" means."""
    directory = directory or expectations_dir()
    suites, problems = [], []
    for path in sorted((directory / "suites").glob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text())
            name = str(doc["name"])
            broken = doc.get("broken_by") or {}
            rule_names = doc.get("rules") or []
            if not isinstance(rule_names, list) or not rule_names:
                problems.append(f"{path.name}: suite {name} has no rules")
                continue
            if len(set(rule_names)) != len(rule_names):
                problems.append(f"{path.name}: suite {name} names a rule twice")
                continue
            suites.append(Suite(
                name=name, invariant=int(doc["invariant"]), title=doc["title"], claim=" ".join(doc["claim"].split()),
                mutants=tuple(broken.get("mutants") or ()), findings=tuple(broken.get("findings") or ()),
                rules=tuple(_rule(directory, name, str(r)) for r in rule_names),
                evaluable=_rule(directory, name, EVALUABLE),
                applies_to=_applies_to(doc.get("applies_to"), rule_names, f"{path.name}: suite {name}"),
            ))
        except FileNotFoundError as exc:
            problems.append(f"{path.name}: a rule's SQL is missing: {exc.filename}")
        except SuiteError as exc:
            problems.append(str(exc))
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(f"{path.name}: unreadable ({type(exc).__name__}: {exc})")
    by_name = {s.name: s for s in suites}
    for number, invariant in enumerate(EXPECTED_INVARIANTS, start=1):
        suite = by_name.get(invariant)
        if suite is None:
            if not any(p.startswith(f"{number:02d}_") or f"suite {invariant} " in p for p in problems):
                problems.append(f"no suite for invariant {number} ({invariant})")
        elif suite.invariant != number:
            problems.append(f"suite {invariant} says invariant {suite.invariant}, the registry {number}")
    for suite in suites:
        if suite.name not in EXPECTED_INVARIANTS:
            problems.append(f"suite {suite.name} is not an invariant of the registry")
    if len(by_name) != len(suites):
        problems.append("two suite files have the same name")
    if problems:
        raise SuiteError(f"the suites in {directory} do not cover every invariant and rule: " + "; ".join(problems))
    return sorted(suites, key=lambda s: s.invariant)


def load_custom(directory: Path | None = None):
    """``expectations/custom.py`` as a module (loaded once: GX registers its classes on import)."""
    if CUSTOM_MODULE in sys.modules:
        return sys.modules[CUSTOM_MODULE]
    path = (directory or expectations_dir()) / "custom.py"
    spec = importlib.util.spec_from_file_location(CUSTOM_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[CUSTOM_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[CUSTOM_MODULE]
        raise
    return module


def gx_suite_name(suite: str, backend: str) -> str:
    """GX's name of ``suite`` judging ``backend``: the suite's own for the emulation, else SUITE.BACKEND."""
    return suite if backend == DEFAULT_BACKEND else f"{suite}.{backend}"

