"""A short exploration, judged by the GX suites: F1 found by exploration, keep-forcing proved at a fixpoint.

In:  `forced-global-tier2` at parallelism 3 with declines (FLIP tier 2: reset-counter), and the same with
     keep-forcing, each explored up to 5 and 4 checkpoint attempts (`regionchaos.explore.search`); every representative
     schedule (`regionchaos.explore.judging.representatives`: here each state's first path and each predicate's
     first violation; the kinds of step `regionchaos explore` adds are judged in bench/explore.py, to keep this
     module's cost down) run as a deep run into the session's S3 server and
     judged in the session's one pooled GX pass (tests/judge_pool.py), as `regionchaos explore` judges them in its
     own pass.
     Each finding the explorer finds: the shortest schedule bench/explore.py found for it, reached again by the
     search of its small configuration (`regionchaos.explore.cases`), deep-run and judged in the same pooled pass.
     The mutant of bounded jobs' final checkpoint (``regional-final-checkpoint``) and the correct protocol on its
     bounded configuration (2 splits of 10 records, up to 2 attempts: 9 runs), the same way.
Out: pass/fail: under tier 2 the suites fail flip_bounds, and the shortest counterexample is F1's 5-checkpoint
     schedule (GLOBAL | REGIONAL | REGIONAL | forced ABORTED | REGIONAL), explained by F1's mechanism, nothing else
     failing (exit 0: only a declared finding); under keep-forcing every representative is valid and flip_bounds
     is proved for every N (the abstraction closed); every representative's deep run took the decisions the model
     predicted; each finding shows on its shortest schedule; the mutant of the final checkpoint is caught on the
     2-checkpoint schedule where the final checkpoint completes REGIONAL, and the correct protocol is valid there.
"""

from __future__ import annotations

import json

import pytest

from regionchaos import runner
from regionchaos.explore.cases import FINDING_CASES, MUTANT_CASES, SHORTEST
from regionchaos.explore.judging import checked, collect, representatives
from regionchaos.explore.search import search
from regionchaos.explore.summary import summarize
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests.judge_pool import pooled

pytestmark = pytest.mark.spark

# case -> (overrides, N): F1 needs 5 attempts; keep-forcing closes after 4
CASES = {"tier2": ({"topology.parallelism": 3}, 5),
         "keep-forcing": ({"topology.parallelism": 3,
                           "execution.checkpointing.region.forced-global-failure": "keep-forcing"}, 4)}
EXPLORED: dict[str, tuple] = {}  # case -> (scenario, graph, representatives, drift, interleavings)
SHOWN: dict[str, tuple] = {}  # finding -> (its shortest representative, drift)
FINAL_MUTANT = "regional-final-checkpoint"  # its case: a bounded job whose attempt 1 is the final checkpoint
FINAL: dict[str | None, tuple] = {}  # mutant or None -> (scenario, graph, representatives, drift, interleavings)


def _build(config, spark) -> list[ObjectStore]:
    stores: dict[str, ObjectStore] = {}

    def deep_run(rep, drift, interleavings, mutant=None) -> None:
        if rep.run_id not in stores:
            stores[rep.run_id] = ObjectStore.for_run(config, rep.run_id)
            result, _ = runner.start(stores[rep.run_id], rep.scenario, run_id=rep.run_id, mutant=mutant, replay="-")
            checked(rep, result, drift, interleavings)

    for case, (overrides, n) in CASES.items():
        scenario = load("forced-global-tier2", overrides=overrides)
        graph = search(scenario, None, n, kinds=0)  # each state's path and each predicate's first violation
        reps = representatives(graph, scenario)
        drift, interleavings = [], {}
        for rep in reps:
            deep_run(rep, drift, interleavings)
        EXPLORED[case] = (scenario, graph, reps, drift, interleavings)
    for finding, (checkpoints, schedule) in SHORTEST.items():
        case = FINDING_CASES[finding]
        scenario = load(case.scenario, overrides=case.overrides)
        reps = [r for r in representatives(search(scenario, None, case.max_checkpoints), scenario)
                if r.checkpoints == checkpoints and r.schedule == schedule]
        drift: list[str] = []
        for rep in reps:
            deep_run(rep, drift, {})
        SHOWN[finding] = (reps[0] if reps else None, drift)
    case = MUTANT_CASES[FINAL_MUTANT]
    scenario = load(case.scenario, overrides=case.overrides)
    for mutant in (None, FINAL_MUTANT):
        graph = search(scenario, mutant, case.max_checkpoints, kinds=0)
        reps = representatives(graph, scenario)
        drift, interleavings = [], {}
        for rep in reps:
            rep.run_id = runner.default_run_id(rep.scenario, mutant)
            deep_run(rep, drift, interleavings, mutant)
        FINAL[mutant] = (scenario, graph, reps, drift, interleavings)
    return list(stores.values())


pooled(__name__, _build)


@pytest.fixture(scope="module")
def summaries(judge_pool) -> dict[str, dict]:
    judged = judge_pool.results(__name__)
    out = {}
    for case, (scenario, graph, reps, drift, interleavings) in EXPLORED.items():
        overrides, n = CASES[case]
        out[case] = summarize("forced-global-tier2", overrides, scenario, None, n, graph,
                              collect(reps, judged, drift, interleavings, None))
    case = MUTANT_CASES[FINAL_MUTANT]
    for mutant, (scenario, graph, reps, drift, interleavings) in FINAL.items():
        out[f"final {mutant}"] = summarize(case.scenario, case.overrides, scenario, mutant, case.max_checkpoints, graph,
                                           collect(reps, judged, drift, interleavings, mutant))
    return out


def test_tier2_fails_flip_bounds_first_on_f1s_five_checkpoint_schedule(summaries):
    s = summaries["tier2"]
    assert {"states", "schedules", "verdicts", "counterexamples", "proof"} <= set(s)
    assert s["conformance"]["drift"] == []
    assert s["verdicts"]["flip_bounds"] == "invalid"
    assert {inv for inv, v in s["verdicts"].items() if v != "valid"} == {"flip_bounds"}
    cx = s["counterexamples"]["flip_bounds"]
    assert cx["checkpoints"] == 5 and cx["findings"] == ["F1"] and cx["declared"]
    assert set(cx["rules"]) == {"flip_bounds.consecutive_regional_within_bound", "flip_bounds.ref_chain_depth_within_bound"}
    declines = [e for e in cx["schedule"] if e["kind"] == "decline"]
    assert [e["checkpoint"] for e in declines] == [1, 2, 3, 4] and len({e["subtask"] for e in declines}) == 1
    assert "--set checkpoints=5" in cx["replay"] and "faults.schedule=" in cx["replay"]
    assert s["exit_code"] == 0  # only a declared finding
    assert s["proof"]["flip_bounds"] == "counterexample"


def test_keep_forcing_holds_flip_bounds_for_every_n(summaries):
    s = summaries["keep-forcing"]
    assert s["conformance"]["drift"] == []
    assert set(s["verdicts"].values()) == {"valid"}
    assert s["fixpoint"] is not None and s["fixpoint"] <= CASES["keep-forcing"][1]
    assert s["proof"]["flip_bounds"] == "every N"
    assert "holds for every N" in s["proof_statement"]
    assert s["exit_code"] == 0 and s["representatives"]["judged"] >= s["states"] - 1


def test_exploring_a_bounded_job_catches_the_mutant_of_the_final_checkpoint(summaries):
    """`MUTANT_CASES["regional-final-checkpoint"]` at N = 2: with the mutant, the suites fail final_checkpoint on the
    schedule where a region declines the final checkpoint (attempt 1), which completes REGIONAL; the correct
    protocol is valid on every representative of the same configuration."""
    mutant, correct = summaries[f"final {FINAL_MUTANT}"], summaries["final None"]
    assert mutant["conformance"]["drift"] == [] and correct["conformance"]["drift"] == []
    assert mutant["outcome"]["caught"] and mutant["exit_code"] == 1
    cx = mutant["counterexamples"]["final_checkpoint"]
    assert cx["checkpoints"] == 2 and "final_checkpoint.no_regional_final" in cx["rules"] and not cx["declared"]
    assert [(e["checkpoint"], e["kind"]) for e in cx["schedule"]] == [(1, "decline")]
    assert f"--mutant {FINAL_MUTANT}" in cx["replay"]
    assert set(correct["verdicts"].values()) == {"valid"} and correct["exit_code"] == 0


@pytest.mark.parametrize("finding", sorted(SHORTEST, key=lambda f: int(f[1:])))
def test_exploring_a_findings_scenario_reaches_its_shortest_schedule_and_the_suites_show_it(finding, judge_pool):
    """Each finding found by exploration: its small configuration's search still yields the shortest schedule
    bench/explore.py found for it as a representative, and the pooled GX pass shows the finding on it."""
    judged = judge_pool.results(__name__)
    rep, drift = SHOWN[finding]
    assert rep is not None, f"the search of {FINDING_CASES[finding]} no longer yields the schedule {SHORTEST[finding]}"
    assert drift == []
    assert finding in [f["id"] for f in judged[rep.run_id].findings_shown], judged[rep.run_id].why


def test_the_report_and_the_stored_summary_show_the_exploration_like_a_swarm(summaries, s3_server, tmp_path):
    """The HTML report carries the outcome, the proof statement and each invariant's shortest counterexample; the
    summary and the report are kept under swarms/ (where the runs view lists them) and mirrored locally."""
    from regionchaos.explore.report import build_explore_report, store_exploration
    from regionchaos.storage import ObjectStore as Store

    page = build_explore_report(summaries["tier2"])
    assert summaries["tier2"]["proof_statement"] in page.replace("&#39;", "'")
    assert summaries["tier2"]["counterexamples"]["flip_bounds"]["describe"] in page
    kept = store_exploration(summaries["keep-forcing"], s3_server.config, str(tmp_path))
    store = Store(s3_server.config, f"swarms/{kept['explore_id']}")
    assert json.loads(store.get("summary.json"))["proof_statement"] == summaries["keep-forcing"]["proof_statement"]
    assert "holds for every N" in store.get("report/index.html").decode()
    assert (tmp_path / "swarms" / kept["explore_id"] / "report" / "index.html").is_file()
