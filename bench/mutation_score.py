"""Mutation score of the whole pipeline over ``regionchaos/protocol/``.

    .venv/bin/python -m bench.mutation_score [--seeds 2] [--jobs 2] [--files coordinator.py,...]
        [--limit N] [--json bench/results/mutation_score/mutation_score.json]
        [--md bench/results/mutation_score/README.md]
    .venv/bin/python -m bench.mutation_score --render    # rewrite the .md from the .json and the hand triage,
        # bench/results/mutation_score/mutation_triage.json

The mutants are mutmut's (2.5.1, its mutation engine: operators, numbers, strings, keywords,
arguments...), enumerated in a virtualenv of its own (``bench/.mutmut-venv``, made on the first
run). The test command is the swarm: a fixed budget of seeds over the catalogue (every scenario
but ``large``, seeds 1..``--seeds``, each seed with the swarm's own fault mix, except a scenario
that pins its fault schedule, which runs as written), emulated with the
mutated code and judged by the same GX suites, one seed a failure when its verdict is not what
the scenario expects (`regionchaos.judge.judgement`: its standing, as the swarm decides "failing").
A mutant is **killed** when the swarm fails on it: a seed raises (unknown), runs past the time
limit, or fails a rule no finding declares for its settings. The unmutated code must pass
the same swarm, or the score means nothing (exit 3).

How it runs in minutes rather than hours (mutmut's own runner would start Spark and GX per
mutant, ~25 s each even warm):
- each mutant is emulated in a forked child that imports the package from an overlay copy with
  the one mutated file (third-party imports are done once, before forking); ``--jobs`` at once;
- a seed whose every table row equals the unmutated run's rows gets the unmutated run's verdict
  without being judged again: the judge is a function of the rows (the checks read nothing else);
- every other seed of every mutant is judged in a few GX passes over one set of tables, the
  run id of each row prefixed by its mutant (``m<index>-``).

Exit codes: 0 measured, 2 set-up failed (mutmut's venv), 3 the unmutated code fails the swarm.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import hashlib
import importlib.util
import json
import multiprocessing
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "mutation_score"
PACKAGE = ROOT / "regionchaos"
TARGET = PACKAGE / "protocol"
VENV = ROOT / "bench" / ".mutmut-venv"
MUTMUT = "mutmut==2.5.1"
SKIP_SCENARIOS = ("large",)  # 1,024 regions: minutes a seed, not a small budget
ROWS_PER_PASS = 4_000_000  # judged rows per GX pass (memory of one pass on this machine)

# Listing the mutants runs in mutmut's venv: file -> [(line_number, index, line, mutated source)].
_LIST_MUTANTS = r"""
import json, sys, mutmut
out = {}
for path in sys.argv[1:]:
    src = open(path).read()
    found = []
    for mid in mutmut.list_mutations(mutmut.Context(source=src, filename=path)):
        new, n = mutmut.mutate(mutmut.Context(source=src, filename=path, mutation_id=mid))
        if n == 1 and new != src:
            found.append([mid.line_number, mid.index, mid.line, new])
    out[path] = found
json.dump(out, sys.stdout)
"""


def mutmut_python() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"making {VENV} with {MUTMUT} (first run only)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", MUTMUT], check=True)
    return python


def list_mutants(files: list[Path]) -> list[dict]:
    """Every mutant of ``files``: index, file (relative), line_number (1-based), index on the line,
    the diff, the mutated source."""
    proc = subprocess.run([str(mutmut_python()), "-c", _LIST_MUTANTS, *map(str, files)],
                          check=True, capture_output=True, text=True)
    found = json.loads(proc.stdout)
    mutants = []
    for path in files:
        src = path.read_text()
        for line_number, index, line, new in found[str(path)]:
            diff = [d for d in difflib.unified_diff(src.splitlines(), new.splitlines(), n=0, lineterm="")
                    if d[:1] in "+-" and not d.startswith(("+++", "---"))]
            mutants.append({"index": len(mutants), "file": str(path.relative_to(ROOT)), "line_number": line_number + 1,
                            "function": enclosing_function(path, line_number + 1),
                            "on_line": index, "line": line.strip(), "diff": diff, "source": new})
    return mutants


# -- emulation (forked children) ----------------------------------------------------------------


def _preload() -> None:
    """Third-party imports every child needs, done once before forking (the package is not
    imported here: each child imports it from its own overlay)."""
    import boto3  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import pydantic  # noqa: F401
    import yaml  # noqa: F401


def _budget_runs(seeds: int) -> list[tuple[str, int]]:
    from regionchaos.scenario import catalogue

    names = sorted(n for n in catalogue("emulation") if n not in SKIP_SCENARIOS)  # the swarm emulates
    return [(name, seed) for name in names for seed in range(1, seeds + 1)]


def _digest(rows: dict) -> str:
    return hashlib.sha256(pickle.dumps(sorted(rows.items()), protocol=5)).hexdigest()


def _emulate_budget(runs: list[tuple[str, int]]):
    """Each run of the budget as a swarm task emulates it (`swarm.emulate_seed_tables`: rows
    that do not fit the schema make the seed unknown): yields (scenario, seed, record, rows)."""
    import yaml

    from regionchaos import swarm
    from regionchaos.storage.s3 import StorageConfig

    config = StorageConfig(endpoint_url="http://127.0.0.1:9")  # never contacted: every store is in memory
    contexts: dict[str, object] = {}
    for name, seed in runs:
        if name not in contexts:
            data = yaml.safe_load((PACKAGE / "catalogue" / f"{name}.yaml").read_text())
            contexts[name] = swarm.SwarmContext(name, data, budget_overrides(name), None, config, "m")
        record, rows, _ = swarm.emulate_seed_tables(contexts[name], seed)
        yield name, seed, record, rows


def _child(overlay: str, mutant: dict | None, runs: list[tuple[str, int]], baseline: dict, out_path: str) -> None:
    """Emulate the budget with the package of ``overlay`` (``mutant``'s file written over it):
    for each run, its record and either its rows (they differ from ``baseline``'s digest) or
    None (identical). Written to ``out_path`` as a pickle."""
    shutil.copytree(PACKAGE, os.path.join(overlay, "regionchaos"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if mutant is not None:
        Path(overlay, mutant["file"]).write_text(mutant["source"])
    sys.dont_write_bytecode = True
    package = os.path.join(overlay, "regionchaos")  # the overlay's package, its submodules found through its path
    spec = importlib.util.spec_from_file_location("regionchaos", os.path.join(package, "__init__.py"),
                                                  submodule_search_locations=[package])
    sys.modules["regionchaos"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["regionchaos"])
    from regionchaos import swarm

    assert swarm.__file__.startswith(overlay), swarm.__file__
    out = []
    for name, seed, record, rows in _emulate_budget(runs):
        digest = None if rows is None else _digest(rows)
        same = digest is not None and baseline.get((name, seed)) == digest
        out.append({"scenario": name, "seed": seed, "run_id": record.get("run_id"), "error": record.get("error"),
                    "digest": digest, "rows": None if same else rows, "seconds": record["emulate_seconds"]})
    with open(out_path, "wb") as fh:
        pickle.dump(out, fh, protocol=5)


def emulate_all(mutants: list[dict | None], runs: list, baseline: dict, jobs: int, timeout: float,
                work: str, progress) -> dict[int, dict]:
    """Each mutant's runs (index -> {"runs": [...]} or {"timeout": True} / {"crash": exit code}).
    The unmutated code has index -1."""
    ctx = multiprocessing.get_context("fork")
    pending = list(mutants)
    running: dict[int, tuple] = {}
    results: dict[int, dict] = {}
    while pending or running:
        while pending and len(running) < jobs:
            mutant = pending.pop(0)
            index = -1 if mutant is None else mutant["index"]
            overlay = os.path.join(work, f"overlay-{index}")
            out_path = os.path.join(work, f"runs-{index}.pickle")
            proc = ctx.Process(target=_child, args=(overlay, mutant, runs, baseline, out_path), daemon=True)
            proc.start()
            running[index] = (proc, time.monotonic(), out_path, overlay)
        time.sleep(0.05)
        for index, (proc, started, out_path, overlay) in list(running.items()):
            if proc.is_alive() and time.monotonic() - started < timeout:
                continue
            if proc.is_alive():
                proc.kill()
                proc.join()
                results[index] = {"timeout": True, "seconds": round(time.monotonic() - started, 1)}
            elif proc.exitcode != 0 or not os.path.exists(out_path):
                results[index] = {"crash": proc.exitcode, "seconds": round(time.monotonic() - started, 1)}
            else:
                with open(out_path, "rb") as fh:
                    results[index] = {"runs": pickle.load(fh), "seconds": round(time.monotonic() - started, 1)}
                os.remove(out_path)
            shutil.rmtree(overlay, ignore_errors=True)
            del running[index]
            progress(index, results[index])
    return results


# -- judging (this process: Spark and the GX suites) ---------------------------------------------


def judge_runs(to_judge: list[tuple[str, dict]]) -> dict[str, dict]:
    """``to_judge``: (judged run id, run) pairs with rows. One GX pass per ~ROWS_PER_PASS rows;
    judged run id -> {"verdict", "failed", "failed_rules", "unknown"}."""
    from regionchaos import tables as tables_mod
    from regionchaos.judge.runs import judge_rows
    from regionchaos.spark import get_spark

    spark = get_spark()
    out: dict[str, dict] = {}
    batches, batch, size = [], [], 0
    for item in to_judge:
        n = sum(len(r) for r in item[1]["rows"].values())
        if batch and size + n > ROWS_PER_PASS:
            batches.append(batch)
            batch, size = [], 0
        batch.append(item)
        size += n
    if batch:
        batches.append(batch)
    for number, batch in enumerate(batches, 1):
        started = time.perf_counter()
        tables: dict[str, list] = {name: [] for name in tables_mod.TABLES}
        for run_id, run in batch:
            for name, rows in run["rows"].items():
                tables[name].extend((run_id,) + tuple(row[1:]) for row in rows)
        total = sum(len(r) for r in tables.values())
        records = [{"seed": run["seed"], "run_id": run_id} for run_id, run in batch]
        try:
            judged = judge_rows(spark, tables, records, scenario_of=lambda record: None, mutant=None)
        except Exception as exc:  # noqa: BLE001 - these runs are not judged; they count for nothing
            print(f"GX pass {number} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            judged = None
        del tables
        for record in records:
            if judged is None:
                out[record["run_id"]] = {"verdict": "not judged", "failed": [], "failed_rules": [], "unknown": []}
                continue
            res = judged[record["run_id"]].fields()  # held to its scenario by `failing`
            out[record["run_id"]] = {k: res.get(k) for k in ("verdict", "failed", "failed_rules", "explained", "unknown")}
        print(f"GX pass {number}/{len(batches)}: {len(batch)} runs, {total:,} rows, "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return out


@functools.lru_cache(maxsize=None)
def budget_overrides(name: str) -> dict:
    """The swarm's fault mix for every catalogue scenario but those that pin their schedule (a
    finding's shortest schedule is the scenario: a drawn mix would replace it, and the scenario
    model refuses the two together)."""
    import yaml

    from regionchaos import swarm

    data = yaml.safe_load((PACKAGE / "catalogue" / f"{name}.yaml").read_text())
    return {} if (data.get("faults") or {}).get("schedule") else dict(swarm.SWARM_OVERRIDES)


@functools.lru_cache(maxsize=None)
def _scenario(name: str, seed: int):
    from regionchaos.scenario import load

    return load(name, overrides={**budget_overrides(name), "seed": seed})


def failing(scenario_name: str, seed: int, verdict: dict) -> str | None:
    """Why this run fails the swarm (not as its scenario expects), or None."""
    from regionchaos.judge.judgement import FINDING, VALID, judgement_of_record

    judged = judgement_of_record(verdict, scenario=_scenario(scenario_name, seed), must_show=False)
    return None if judged.standing in (VALID, FINDING) else judged.why


# -- triage --------------------------------------------------------------------------------------


def classify_survivor(m: dict, changed_runs: int) -> str:
    """A first reading of why a mutant survived (the notes in the .md say more)."""
    if "mutant" in m["line"]:
        return "mutant switch: the line names an injected bug; with no mutant named it behaves the same"
    if m["line"].startswith(("raise ", "msg", "f\"", "\"")) or "Error(" in m["line"]:
        return "error text or guard of bad input the emulator never passes"
    if "->" in m["line"] or m["line"].startswith("def ") or ": " in m["line"] and "=" not in m["line"]:
        return "annotation or signature default"
    if changed_runs == 0:
        return "no artifact changed on the budget (equivalent here, or a path the budget never takes)"
    return f"artifacts changed on {changed_runs} runs, every check passed"


def enclosing_function(path: Path, line_number: int) -> str:
    """The qualified name of the function (or class, or "module") holding ``line_number``."""
    import ast

    best, best_span = "module", None
    tree = ast.parse(path.read_text())

    def visit(node, prefix):
        nonlocal best, best_span
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                if start <= line_number <= child.end_lineno:
                    span = child.end_lineno - start
                    if best_span is None or span <= best_span:
                        best, best_span = name, span
                visit(child, name + ".")
    visit(tree, "")
    return best


def executed_statements(runs: list[tuple[str, int]]) -> dict[str, set[int]]:
    """First lines of the statements of ``regionchaos/protocol/`` that the unmutated budget runs
    (``sys.settrace`` in this process): file (relative) -> line numbers."""
    target = str(TARGET)
    seen: dict[str, set[int]] = {}

    def local(frame, event, arg):
        if event == "line":
            seen.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return local

    def enter(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(target) else None

    sys.settrace(enter)
    try:
        for _ in _emulate_budget(runs):
            pass
    finally:
        sys.settrace(None)
    return {str(Path(f).resolve().relative_to(ROOT)): lines for f, lines in seen.items()}


def statement_start(path: Path, line_number: int) -> int | None:
    """The first line of the innermost statement inside a function that holds ``line_number``
    (None outside functions: module and class bodies run at import, before any tracing)."""
    import ast

    best = None
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.stmt) and sub is not node and sub.lineno <= line_number <= sub.end_lineno:
                    if best is None or sub.lineno >= best.lineno:
                        best = sub
    return None if best is None else best.lineno


def triage_of(r: dict, notes: dict[str, str]) -> str:
    """A survivor's triage: a note for the mutant itself ("file:line:index"), else for its
    function ("file::function"), else the first reading."""
    short = r["file"].split("/")[-1]
    return notes.get(f"{short}:{r['line_number']}:{r['on_line']}") or notes.get(f"{short}::{r['function']}") \
        or r["triage"]


def render_md(result: dict, notes: dict[str, str] | None = None, executed: dict[str, set[int]] | None = None) -> str:
    """The report: score, how mutants were killed, every survivor with its diff and triage
    (``notes``: "file:line:on_line" or "file::function" -> a hand-written triage, replacing the
    first reading; ``executed``: `executed_statements`, to tell a survivor the budget never runs
    from one it runs without changing any artifact)."""
    notes = notes or {}
    res = result["results"]
    by_file: dict[str, Counter] = {}
    for r in res:
        by_file.setdefault(r["file"], Counter())[r["status"]] += 1
    how = Counter()
    for r in res:
        if r["status"] == "killed":
            why = r["by"]
            how["not Python (syntax error; not counted)" if why == "does not import" else
                "emulation raised (the seed is unknown)" if why.startswith("emulate failed") else
                "timeout" if why == "timeout" else "a rule no finding declares failed" if why.startswith("failed")
                else "unknown invariant" if why.startswith("unknown") else why] += 1
    lines = [
        "# Mutation score: the whole pipeline against mutmut's mutants of `regionchaos/protocol/`", "",
        f"Command: `.venv/bin/python {result['command']}`", "",
        f"Mutator: {result['mutator']} (its mutation engine, run in `bench/.mutmut-venv`). Test command: the swarm "
        f"over the catalogue, {result['budget']['runs']} runs ({len(result['budget']['scenarios'])} scenarios x "
        f"seeds 1-{result['budget']['seeds']}, each seed with the swarm's fault mix, a scenario that pins its schedule as written), judged by the GX suites; "
        "a mutant is killed when any run is not as its scenario expects (unknown, or a rule failed that "
        "no finding declares for its settings). The unmutated code passes the same swarm: "
        f"{'yes' if not result['baseline']['failing'] else 'NO: ' + json.dumps(result['baseline']['failing'])}.", "",
        f"**Score: {result['killed']} of {result['killed'] + result['survived']} mutants killed = "
        f"{100 * result['score']:.1f} %** ({result['survived']} survived). Of mutmut's {result['mutants']} mutants, "
        f"{result['stillborn']} are not Python (a syntax error: not counted) and {result['not_judged']} could not "
        "be judged (a GX pass failed: not counted). "
        f"Wall: emulation {result['walls']['emulate']} s, judging "
        f"{result['walls']['judge']} s ({result['judged_runs']} runs judged), total {result['walls']['total']} s.", "",
        "| file | mutants | killed | survived | score |", "|---|---|---|---|---|",
    ]
    for r in res:
        if r.get("by") == "does not import":
            by_file[r["file"]]["killed"] -= 1
    for f, c in sorted(by_file.items()):
        n = c["killed"] + c["survived"]
        lines.append(f"| `{f}` | {n} | {c['killed']} | {c['survived']} | {100 * c['killed'] / n:.0f} % |")
    lines += ["", "How the killed mutants were caught:", ""]
    lines += [f"- {why}: {n}" for why, n in how.most_common()]
    raised = how["emulation raised (the seed is unknown)"] + how["timeout"] + sum(n for k, n in how.items()
                                                                                   if k.startswith("child exit"))
    checks = how["a rule no finding declares failed"] + how["unknown invariant"]
    lines += ["", f"Reading it: {raised} of the {result['killed']} kills are the emulation raising or hanging. "
              "The swarm reports such a seed as unknown (exit 3), so the tool notices, but no check is tested by them. "
              f"The checks themselves (an invariant failed, or could not be judged) killed {checks}: {checks} of the {checks + result['survived']} mutants that "
              f"ran to the end ({100 * checks / max(1, checks + result['survived']):.1f} %)."]
    caught, by_rule = Counter(), Counter()
    for r in res:
        if r["status"] == "killed" and r["by"].startswith("failed "):
            # "failed A, B, which no finding declares" or "failed inv.rule, ..., a rule no finding declares (...)"
            names = re.split(r", (?:which|a rule) no finding declares", r["by"][len("failed "):])[0].split(", ")
            for inv in dict.fromkeys(n.split(".", 1)[0] for n in names):
                caught[inv] += 1
            by_rule.update(n for n in names if "." in n)
    if caught:
        lines += ["", "Invariants that killed mutants (first failing run of each):", ""]
        lines += [f"- `{inv}`: {n}" for inv, n in caught.most_common()]
    if by_rule:
        n_rule = sum(1 for r in res if r["status"] == "killed" and "a rule no finding declares" in (r["by"] or ""))
        lines += ["", f"Of those, {n_rule} mutants were killed through a rule of an invariant a finding allows (the "
                  "finding names other rules; before allowances were per rule these survived). Mutants per rule "
                  "(a mutant may fail several):", ""]
        lines += [f"- `{rule}`: {n}" for rule, n in by_rule.most_common()]
    surv = [r for r in res if r["status"] == "survived"]
    for r in surv:
        r.setdefault("function", enclosing_function(ROOT / r["file"], r["line_number"]))
        if executed is not None and r["triage"].startswith("no artifact changed"):
            start = statement_start(ROOT / r["file"], r["line_number"])
            if start is not None and start not in executed.get(r["file"], set()):
                r["triage"] = "never executed on the budget: a path no run of the budget takes"
            elif start is not None:
                r["triage"] = "executed on the budget, no artifact changed: equivalent there"
            else:
                r["triage"] = ("module or class level, no artifact changed on the budget: a constant, field default, "
                               "annotation or decorator the budget's runs do not depend on (runs at import, not traced)")
    kinds = Counter(triage_of(r, notes).split(":")[0] for r in surv)
    lines += ["", "## Survivors", "", "By triage (the text before the first colon):", ""]
    lines += [f"- {k}: {n}" for k, n in kinds.most_common()]
    lines += ["", "| file:line (function) | mutation | triage |", "|---|---|---|"]
    for r in surv:
        diff = " / ".join(f"`{d.strip()}`" for d in r["diff"]).replace("|", "\\|")
        lines.append(f"| `{r['file'].split('/')[-1]}:{r['line_number']}` ({r['function']}) | {diff} | "
                     f"{triage_of(r, notes)} |")
    return "\n".join(lines) + "\n"


def _imports(m: dict) -> bool:
    """Whether the mutated file still compiles (mutmut can make syntax Python rejects)."""
    try:
        compile(m["source"], m["file"], "exec")
    except SyntaxError:
        return False
    return True


# -- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=2, help="seeds 1..N of every catalogue scenario but large (default 2)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants emulated at once (default 2)")
    ap.add_argument("--files", default="", help="comma-separated files of regionchaos/protocol/ (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N mutants (a trial run)")
    ap.add_argument("--timeout-factor", type=float, default=10.0,
                    help="a mutant times out after this many times the unmutated emulation (default 10)")
    ap.add_argument("--json", default=str(RESULTS / "mutation_score.json"))
    ap.add_argument("--md", default=str(RESULTS / "README.md"))
    ap.add_argument("--notes", default=str(RESULTS / "mutation_triage.json"),
                    help="hand-written triage of survivors, {\"file:line:index\": text} (used if present)")
    ap.add_argument("--render", action="store_true", help="only write --md from an existing --json (and --notes)")
    args = ap.parse_args(argv)
    if args.render:
        notes = json.loads(Path(args.notes).read_text()) if Path(args.notes).exists() else {}
        result = json.loads(Path(args.json).read_text())
        executed = executed_statements(_budget_runs(result["budget"]["seeds"]))
        Path(args.md).write_text(render_md(result, notes, executed))
        return 0
    if args.seeds < 1 or args.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1")
    files = sorted(TARGET.glob("*.py")) if not args.files else [TARGET / f.strip() for f in args.files.split(",")]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        ap.error(f"--files: no such file: {', '.join(missing)}")
    started = time.perf_counter()
    try:
        mutants = list_mutants(files)
    except subprocess.CalledProcessError as exc:
        print(f"mutmut failed: {exc.stderr or exc}", file=sys.stderr)
        return 2
    if args.limit:
        mutants = mutants[: args.limit]
    runs = _budget_runs(args.seeds)
    print(f"{len(mutants)} mutants over {', '.join(f.name for f in files)}; budget {len(runs)} runs "
          f"({len(runs) // args.seeds} scenarios x {args.seeds} seeds)", file=sys.stderr, flush=True)
    _preload()
    work = tempfile.mkdtemp(prefix="mutation-")

    def progress(index, res):
        done = len(results_so_far) + 1
        results_so_far.append(index)
        state = "timeout" if res.get("timeout") else "crash" if "crash" in res else \
            f"{sum(r['rows'] is not None for r in res['runs'])} runs changed"
        if done % 10 == 0 or index == -1 or done == len(mutants):
            print(f"  emulated {done}/{len(mutants)} (mutant {index}: {state}, {res['seconds']} s) "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    results_so_far: list[int] = []
    base = emulate_all([None], runs, {}, 1, 3600, work, progress)[-1]
    if "runs" not in base:
        print(f"the unmutated code did not emulate: {base}", file=sys.stderr)
        return 3
    base_seconds = base["seconds"]
    baseline = {(r["scenario"], r["seed"]): r["digest"] for r in base["runs"]}
    results_so_far.clear()
    emulated = emulate_all(mutants, runs, baseline, args.jobs, max(60.0, args.timeout_factor * base_seconds),
                           work, progress)
    emulate_seconds = time.perf_counter() - started

    # judge: every unmutated run, and every mutant run whose rows differ from it
    to_judge = [(f"base-{r['run_id']}", r) for r in base["runs"] if r["error"] is None]
    for index, res in emulated.items():
        for r in res.get("runs", []):
            if r["error"] is None and r["rows"] is not None:
                to_judge.append((f"m{index}-{r['run_id']}", r))
    print(f"judging {len(to_judge)} runs", file=sys.stderr, flush=True)
    verdicts = judge_runs(to_judge)
    judge_seconds = time.perf_counter() - started - emulate_seconds

    base_fail = {}
    base_verdicts = {}
    for r in base["runs"]:
        v = {"verdict": "unknown", "failed": [], "failed_rules": [], "unknown": ["emulate"]} if r["error"] else verdicts[f"base-{r['run_id']}"]
        base_verdicts[(r["scenario"], r["seed"])] = v
        why = failing(r["scenario"], r["seed"], v)
        if why:
            base_fail[f"{r['scenario']} seed {r['seed']}"] = why
    rows = []
    for m in mutants:
        res = emulated[m["index"]]
        entry = {k: m[k] for k in ("index", "file", "line_number", "function", "on_line", "line", "diff")}
        entry["seconds"] = res["seconds"]
        if res.get("timeout"):
            entry.update(status="killed", by="timeout")
        elif "crash" in res:
            entry.update(status="killed", by="does not import" if not _imports(m) else f"child exit {res['crash']}")
        else:
            changed = [r for r in res["runs"] if r["rows"] is not None or r["error"]]
            entry["changed_runs"] = len(changed)
            killers = []
            for r in res["runs"]:
                if r["error"]:
                    killers.append({"run": f"{r['scenario']} seed {r['seed']}", "why": r["error"][:200]})
                    continue
                v = verdicts[f"m{m['index']}-{r['run_id']}"] if r["rows"] is not None \
                    else base_verdicts[(r["scenario"], r["seed"])]
                if v["verdict"] == "not judged":
                    entry["not_judged"] = entry.get("not_judged", 0) + 1
                    continue
                why = failing(r["scenario"], r["seed"], v)
                if why:
                    killers.append({"run": f"{r['scenario']} seed {r['seed']}", "why": why})
            if killers:
                by = Counter()
                for k in killers:
                    by[k["why"]] += 1
                entry.update(status="killed", by=by.most_common(1)[0][0], killing_runs=len(killers), first=killers[0])
            elif entry.get("not_judged"):
                entry.update(status="not judged")
            else:
                entry.update(status="survived", triage=classify_survivor(m, len(changed)))
        rows.append(entry)
    stillborn = sum(r.get("by") == "does not import" for r in rows)
    not_judged = sum(r["status"] == "not judged" for r in rows)
    killed = sum(r["status"] == "killed" for r in rows) - stillborn
    result = {
        "command": "bench/mutation_score.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "mutator": MUTMUT, "files": [str(f.relative_to(ROOT)) for f in files],
        "budget": {"scenarios": sorted({s for s, _ in runs}), "seeds": args.seeds, "runs": len(runs),
                   "overrides": {"faults.swarm": True},
                   "pinned_schedules": sorted({s for s, _ in runs if not budget_overrides(s)})},
        "baseline": {"emulate_seconds": base_seconds, "failing": base_fail},
        "mutants": len(rows), "stillborn": stillborn, "not_judged": not_judged, "killed": killed,
        "survived": sum(r["status"] == "survived" for r in rows),
        "score": round(killed / (len(rows) - stillborn - not_judged), 4) if len(rows) > stillborn + not_judged else None,
        "walls": {"emulate": round(emulate_seconds, 1), "judge": round(judge_seconds, 1),
                  "total": round(time.perf_counter() - started, 1)},
        "judged_runs": len(to_judge), "results": rows,
    }
    shutil.rmtree(work, ignore_errors=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    notes = json.loads(Path(args.notes).read_text()) if Path(args.notes).exists() else {}
    Path(args.md).write_text(render_md(result, notes, executed_statements(runs)))
    print(json.dumps({k: v for k, v in result.items() if k != "results"}, indent=1))
    if base_fail:
        print(f"the unmutated code fails the swarm on {len(base_fail)} runs: the score means nothing",
              file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
