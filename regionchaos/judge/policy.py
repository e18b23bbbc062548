"""The outcome policy: one table from a run's judgement to its exit code and its DAG run's colour.

In:  a `Judgement` (`regionchaos.judge.judgement`), or a stored ``summary.json`` / swarm seed record (read back
     by `Judgement.from_summary`); for a swarm, its seeds' records (or its summary), its mutant and how many
     seeds it was asked for.
Out: `run_outcome(...)` / `swarm_outcome(...)` -> `RunOutcome`: ``kind`` (a row of `TABLE`), ``exit_code``,
     ``green`` (the DAG run stays green), ``sentence`` (one line: the verdict, the failed invariants, the
     recorded findings that explain them, for a mutant whether it was caught), and ``problems`` (the lines
     that make it red); `bad_input` and `infrastructure` for a command that judged nothing; `table_markdown`,
     the table as the README shows it.

Every command, Spark job and DAG takes its exit code and colour from here:

| run | exit | DAG run |
|---|---|---|
| valid | 0 | green |
| a declared finding shows where its scenario allows it (like pytest's xfail) | 0 | green, the finding in the note |
| a finding's scenario that no longer fails (like a strict xpass) | 1 | red |
| an invariant violated that no finding explains, a caught mutant included | 1 | red |
| a mutant the checks did not catch (in a swarm: no seed caught it) | 1 | red |
| unknown, infrastructure | 3 | red |
| bad input | 2 | no run |

A mutant run exits 1 either way: caught, it is a run the correct protocol would not give; not caught, the
checks failed to tell it from the correct protocol. The sentence and the JSON say which. A mutant is caught
when its run stands as a violation or a finding gone for the correct protocol's settings (a failure a
recorded finding explains is no catch). A swarm's outcome is the worst of its seeds', merged as checks are
(false > unknown > true); with a mutant, caught if any seed caught it, else not caught (unknown only when no
seed was judged).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..run import ExitCode, Verdict
from .judgement import FINDING, FINDING_GONE, UNKNOWN, VALID, VIOLATION, Judgement

MUTANT_NOT_CAUGHT = "mutant-not-caught"
BAD_INPUT = "bad-input"
MAX_PROBLEMS = 50  # problem lines a swarm's outcome lists (each names a seed and its replay line)


@dataclass(frozen=True)
class Row:
    """One row of the policy table."""

    kind: str
    run: str
    exit_code: ExitCode
    dag_run: str


TABLE = (
    Row(VALID, "valid", ExitCode.VALID, "green"),
    Row(FINDING, "a declared finding shows where its scenario allows it (like pytest's xfail)", ExitCode.VALID,
        "green, the finding in the note"),
    Row(FINDING_GONE, "a finding's scenario that no longer fails (like a strict xpass)", ExitCode.INVALID, "red"),
    Row(VIOLATION, "an invariant violated that no finding explains, a caught mutant included", ExitCode.INVALID,
        "red"),
    Row(MUTANT_NOT_CAUGHT, "a mutant the checks did not catch (in a swarm: no seed caught it)", ExitCode.INVALID,
        "red"),
    Row(UNKNOWN, "unknown, infrastructure", ExitCode.UNKNOWN, "red"),
    Row(BAD_INPUT, "bad input", ExitCode.BAD_INPUT, "no run"),
)
EXIT_OF = {row.kind: row.exit_code for row in TABLE}
# worst last: false > unknown > true, as a run's checks merge
RANK = {VALID: 0, FINDING: 1, BAD_INPUT: 2, UNKNOWN: 2, FINDING_GONE: 3, VIOLATION: 4, MUTANT_NOT_CAUGHT: 4}


def table_markdown() -> str:
    """`TABLE` as the README's Markdown table."""
    lines = ["| run | exit | DAG run |", "|---|---|---|"]
    return "\n".join(lines + [f"| {row.run} | {int(row.exit_code)} | {row.dag_run} |" for row in TABLE])


@dataclass(frozen=True)
class RunOutcome:
    """What a run (or a swarm) ends as. ``caught``: for a mutant, whether the checks caught it (None without
    one); ``findings``: the ids of the recorded findings that showed; ``problems``: why it is red, a line each."""

    kind: str
    sentence: str
    verdict: str = UNKNOWN
    mutant: str | None = None
    caught: bool | None = None
    failed: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        return int(EXIT_OF[self.kind])

    @property
    def green(self) -> bool:
        return self.exit_code == ExitCode.VALID

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "failed": list(self.failed), "findings": list(self.findings),
                "problems": list(self.problems), "exit_code": self.exit_code, "green": self.green}


def _names(items) -> str:
    return ", ".join(items) or "none recorded"


def _shown(judgement: Judgement) -> str:
    return ", ".join(f"{f['id']} ({f['title']})" for f in judgement.findings_shown)


def run_outcome(judged: Judgement | dict) -> RunOutcome:
    """The outcome of one run: a `Judgement`, or a stored summary or seed record (`Judgement.from_summary`)."""
    j = judged if isinstance(judged, Judgement) else Judgement.from_summary(judged)
    base = {"verdict": j.verdict, "mutant": j.mutant, "failed": tuple(j.failed),
            "findings": tuple(f["id"] for f in j.findings_shown)}
    if j.standing == UNKNOWN:
        sentence = j.why if j.why.startswith("unknown") else f"unknown: {j.why or j.error or 'no verdict'}"
        return RunOutcome(UNKNOWN, sentence, problems=(sentence,), **base)
    if j.mutant:
        caught = j.standing in (VIOLATION, FINDING_GONE)
        if caught:
            what = f"failed invariants: {_names(j.failed)}" if j.failed else j.why
            sentence = f"{j.verdict}: the checks caught mutant {j.mutant}; {what}"
            return RunOutcome(VIOLATION, sentence, caught=True, problems=(sentence,), **base)
        why = (f"it failed only where recorded finding {_shown(j)} allows the correct protocol to fail "
               f"({_names(j.failed)})" if j.failed else "every invariant held")
        sentence = f"{j.verdict}: the checks did not catch mutant {j.mutant}: {why}"
        return RunOutcome(MUTANT_NOT_CAUGHT, sentence, caught=False, problems=(sentence,), **base)
    if j.standing == VALID:
        return RunOutcome(VALID, "valid: every invariant holds", **base)
    if j.standing == FINDING:
        if not j.findings_shown:  # a real-Flink negative control: it must fail its one invariant, and did
            sentence = f"invalid as expected: a negative control; failed invariants: {_names(j.failed)}"
        else:
            sentence = (f"invalid as expected: the run shows finding {_shown(j)}, recorded in FINDINGS.md; "
                        f"failed invariants: {_names(j.failed)}")
        return RunOutcome(FINDING, sentence, **base)
    if j.standing == FINDING_GONE:
        sentence = f"{j.verdict}, not as its scenario expects: {j.why}"
        return RunOutcome(FINDING_GONE, sentence, problems=(sentence,), **base)
    explains = f"; finding {_shown(j)} explains the rest" if j.findings_shown else ""
    sentence = f"invalid: failed invariants: {_names(j.failed)} ({j.why}){explains}"
    return RunOutcome(VIOLATION, sentence, problems=(sentence,), **base)


def swarm_outcome(judged: dict | list, *, mutant: str | None = None, seeds: int | None = None) -> RunOutcome:
    """The outcome of a swarm: its summary (``runs``, ``mutant``, ``seeds``), or its seeds' records with the
    ``mutant`` they ran and the ``seeds`` asked for (a seed without a record is unknown)."""
    if isinstance(judged, dict):
        runs = judged.get("runs") or []
        mutant = judged.get("mutant") if mutant is None else mutant
        seeds = judged.get("seeds") if seeds is None else seeds
    else:
        runs = list(judged)
    outcomes = [(run, run_outcome({**run, "mutant": mutant})) for run in runs]
    missing = max(0, (seeds if seeds is not None else len(runs)) - len(runs))
    by_kind: dict[str, list] = {}
    for run, outcome in outcomes:
        by_kind.setdefault(outcome.kind, []).append(run)
    counts = ", ".join(f"{len(by_kind[kind])} {kind}" for kind in sorted(by_kind, key=RANK.get))
    what = f"swarm of {len(runs) + missing} seed(s)" + (f" with mutant {mutant}" if mutant else "")
    problems = [f"seed {run.get('seed')}: {outcome.sentence}; replay: {run.get('replay')}"
                for run, outcome in outcomes if not outcome.green and not (mutant and outcome.kind != UNKNOWN)]
    if missing:
        problems.append(f"{missing} of {len(runs) + missing} seeds have no result (a batch failed)")
    shown = tuple(sorted({f for _, outcome in outcomes for f in outcome.findings}))
    failed = tuple(dict.fromkeys(name for _, outcome in outcomes if not outcome.green for name in outcome.failed))
    if mutant:
        caught = [run.get("seed") for run, outcome in outcomes if outcome.caught]
        judged_seeds = [run for run, outcome in outcomes if outcome.kind != UNKNOWN]
        if caught:
            kind, sentence = VIOLATION, (f"{what}: the checks caught mutant {mutant} on {len(caught)} of "
                                         f"{len(runs) + missing} seeds (seeds {', '.join(map(str, caught[:10]))}"
                                         f"{', ...' if len(caught) > 10 else ''}); {counts}")
        elif judged_seeds:
            kind, sentence = MUTANT_NOT_CAUGHT, (f"{what}: no seed caught mutant {mutant}: the checks did not "
                                                 f"tell it from the correct protocol; {counts}")
        else:
            kind, sentence = UNKNOWN, f"{what}: unknown: no seed was judged; {counts}"
        problems.insert(0, sentence)
        return RunOutcome(kind, sentence, verdict=_verdict(outcomes), mutant=mutant, caught=bool(caught),
                          failed=failed, findings=shown, problems=tuple(problems[:MAX_PROBLEMS]))
    kinds = [outcome.kind for _, outcome in outcomes] + ([UNKNOWN] if missing else [])
    kind = max(kinds, key=RANK.get) if kinds else UNKNOWN
    sentence = f"{what}: {counts or 'nothing judged'}" + (f"; {missing} without a result" if missing else "")
    if kind == FINDING:
        sentence += f"; every invalid seed shows a recorded finding ({', '.join(shown)})"
    return RunOutcome(kind, sentence, verdict=_verdict(outcomes), failed=failed, findings=shown,
                      problems=tuple(problems[:MAX_PROBLEMS]))


def _verdict(outcomes: list) -> str:
    return Verdict.merge(outcome.verdict for _, outcome in outcomes)


def worst_of(outcomes: list[RunOutcome]) -> RunOutcome:
    """The worst of several runs' outcomes (`RANK`; the first of equals), as a swarm's seeds merge."""
    return max(outcomes, key=lambda outcome: RANK[outcome.kind]) if outcomes else infrastructure("no run")


def bad_input(reason: str) -> RunOutcome:
    """A command refused before it ran anything (nothing written)."""
    return RunOutcome(BAD_INPUT, f"bad input: {reason}", problems=(reason,))


def infrastructure(reason: str) -> RunOutcome:
    """A command that could not run or judge: storage, Spark, a tool that could not be built."""
    return RunOutcome(UNKNOWN, f"unknown: {reason}", problems=(reason,))


def done(sentence: str) -> RunOutcome:
    """A command that judges no run and did what it was asked (a file written, a study measured)."""
    return RunOutcome(VALID, sentence, verdict=VALID)
