"""Allowances by mechanism: a finding excuses only the violations its mechanism explains.

In:  the findings registry (`regionchaos.findings`), the mechanism queries
     (``expectations/mechanisms/<finding>/*.sql``, read by ``expectations/custom.py``) and the suites.
Out: pure-logic checks (no Spark): every rule a finding declares has a mechanism query or a
     stated reason why none can be checked; each query explains only rules its finding declares;
     a run is as expected (`regionchaos.judge.judgement`, through `findings.meets_expectation`) only when every violating row is tagged with an
     applicable finding that declares the rule, and treats untagged rows, rows tagged by a finding
     that does not apply (or does not declare the rule) and runs with no record as not excused.
     The end-to-end cases (a deep ref chain without a tier-2 reset on `smoke`, not excused) are in
     tests/test_tamper.py; the findings' own scenarios passing through their mechanisms in
     tests/test_mutants.py (`test_finding_fails_for_its_stated_reason`).
"""

from __future__ import annotations

import pytest

from regionchaos import findings
from regionchaos.scenario import load
from regionchaos.judge.suites import load_custom, load_suites
from tests.expectation_helpers import meets, shows

CHAIN, STREAK = "flip_bounds.ref_chain_depth_within_bound", "flip_bounds.consecutive_regional_within_bound"
DUP = "exactly_once_output.no_duplicate_commit"
PR = {"execution.checkpointing.region.semantics": "pr"}


def _files():
    return load_custom().mechanism_files()


def test_every_declared_rule_has_a_mechanism_or_a_reason():
    """A finding's rule is either checked row by row (a mechanism query names it) or listed in
    `Finding.unchecked` with the reason; never both, never neither."""
    explained = {(finding, rule) for finding, rules, _, _ in _files() for rule in rules}
    for f in findings.FINDINGS:
        # every rule it may fail under some settings: its own and its extras (F2: unaligned)
        rules = set(f.rules) | set(f.extra(load("unaligned-recovery-7-2")))
        for rule in rules:
            has_query, has_reason = (f.id, rule) in explained, rule in f.unchecked
            assert has_query != has_reason, (f.id, rule, has_query, has_reason)
        assert all(len(why) > 40 for why in f.unchecked.values()), f.id


def test_each_mechanism_explains_only_rules_its_finding_declares():
    rules = {(s.name, r.name) for s in load_suites() for r in s.rules}
    by_id = {f.id: f for f in findings.FINDINGS}
    for finding, names, sql, path in _files():
        assert finding in by_id, path
        declared = set(by_id[finding].rules) | set(by_id[finding].extra(load("unaligned-recovery-7-2")))
        for name in names:
            assert name in declared, (path, name)
            assert tuple(name.split(".", 1)) in rules, (path, name)
        body = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
        assert body and sql.splitlines()[1].startswith("-- "), f"{path}: say how, after the explains line"


def test_suite_sql_tags_rows_with_the_mechanisms_of_its_rules():
    custom = load_custom()
    mech = custom.load_mechanisms()
    assert {f for f, *_ in mech["flip_bounds"]} >= {"F1", "F4", "F7"}
    sql = custom.with_mechanisms("SELECT 1", mech["flip_bounds"])
    assert "explained_by" in sql and "'F1' AS finding" in sql and "'ref_chain_depth_within_bound'" in sql
    assert custom.with_mechanisms("SELECT 1", []).endswith("'' AS explained_by FROM (SELECT 1) v")


def _judge(sc, rules: dict[str, dict[str, int]]):
    failed = sorted({r.split(".", 1)[0] for r in rules})
    return meets(sc, "invalid", failed, [], failed_rules=sorted(rules), explained=rules, must_show=False)


def test_rows_explained_by_an_applicable_finding_are_excused():
    sc = load("regional-basic")  # tier 2 (the default): F1 applies
    assert _judge(sc, {CHAIN: {"F1": 3}, STREAK: {"F1": 2}}) == (True, "")


def test_one_unexplained_row_is_not_excused():
    sc = load("regional-basic")
    ok, why = _judge(sc, {CHAIN: {"F1": 3, "": 1}})
    assert not ok and "1 violation(s)" in why and "F1" in why and CHAIN in why


def test_a_finding_that_does_not_apply_explains_nothing():
    """F7's mechanism (a JobManager failover) explains a streak only under the PR's semantics."""
    sc = load("regional-basic")
    assert "F7" not in {f.id for f in findings.applicable(sc)}
    assert not _judge(sc, {STREAK: {"F7": 2}})[0]
    assert _judge(load("jm-failover", overrides=PR), {STREAK: {"F7": 2}}) == (True, "")


def test_a_finding_explains_only_the_rules_it_declares():
    """F2's mechanism tags a duplicate commit; under the PR after a rescale F5 also declares the rule, and a row
    only F1 tagged is no duplicate's explanation."""
    sc = load("union-offsets-rescale")
    assert _judge(sc, {DUP: {"F2": 4}}) == (True, "")
    assert not _judge(sc, {DUP: {"F1": 4}})[0]
    assert _judge(sc, {DUP: {"F1,F2": 4}}) == (True, "")


def test_no_record_of_the_mechanism_is_not_excused():
    sc = load("regional-basic")
    ok, why = meets(sc, "invalid", ["flip_bounds"], [], failed_rules=[CHAIN])
    assert not ok and "does not record which violations" in why
    ok, _ = meets(sc, "invalid", ["flip_bounds"], [], failed_rules=[CHAIN], explained={})
    assert not ok


def test_an_unchecked_rule_is_excused_whole():
    """F9's rule is its own mechanism (Finding.unchecked): no row tags needed."""
    sc = load("pr-forced-failure-fails-job")
    rule = "decisions_follow_rules.forced_failure_is_not_a_job_failure"
    f9 = next(f for f in findings.FINDINGS if f.id == "F9")
    assert rule in f9.unchecked and f9 in findings.applicable(sc)
    assert meets(sc, "invalid", ["decisions_follow_rules"], [], failed_rules=[rule], explained=None) == (True, "")
    # under the FLIP's semantics F9 does not apply: the same failure is not excused
    flip = load("pr-forced-failure-fails-job", overrides={"execution.checkpointing.region.semantics": "flip"})
    assert meets(flip, "invalid", ["decisions_follow_rules"], [], failed_rules=[rule], explained=None)[0] is False


@pytest.mark.parametrize("tags", [{"F1": 2}, {"": 2}])
def test_outcome_carries_the_tags_of_failed_rules_only(tags):
    checks = [{"name": "flip_bounds", "success": False, "failed_rules": ["ref_chain_depth_within_bound"],
               "explained": {"ref_chain_depth_within_bound": tags}},
              {"name": "liveness", "success": True, "failed_rules": [], "explained": {}}]
    assert shows(checks)["explained"] == {CHAIN: tags}


def test_a_mechanism_includes_the_parts_its_finding_s_mechanisms_share(tmp_path):
    """``-- include: _part.sql`` is replaced by that file of the finding's folder, else of ``_shared/``; ``_*.sql``
    files and the ``_shared`` folder are parts, not mechanisms; an include of a part that is not there is refused,
    naming it."""
    folder = tmp_path / "F99"
    folder.mkdir()
    (folder / "_part.sql").write_text("-- shared\nheld AS (SELECT run_id FROM rc_events),\n")
    (folder / "m.sql").write_text("-- explains: liveness.global_after_faults\nWITH\n-- include: _part.sql\n"
                                  "last AS (SELECT run_id FROM held)\nSELECT run_id FROM last\n")
    custom = load_custom()
    ((finding, rules, sql, path),) = custom.mechanism_files(tmp_path)
    assert (finding, rules, path.name) == ("F99", ("liveness.global_after_faults",), "m.sql")
    assert sql.splitlines()[1:5] == ["WITH", "-- shared", "held AS (SELECT run_id FROM rc_events),",
                                     "last AS (SELECT run_id FROM held)"]
    shared = tmp_path / "_shared"  # parts several findings include: looked up after the finding's own folder
    shared.mkdir()
    (shared / "_common.sql").write_text("common AS (SELECT run_id FROM rc_checkpoints),\n")
    (shared / "_part.sql").write_text("held AS (SELECT 'not this one'),\n")
    (folder / "m.sql").write_text("-- explains: liveness.global_after_faults\nWITH\n-- include: _part.sql\n"
                                  "-- include: _common.sql\nSELECT run_id FROM common\n")
    ((finding, _, sql, _),) = custom.mechanism_files(tmp_path)  # the _shared folder is no finding
    assert finding == "F99" and sql.splitlines()[2:5] == [
        "-- shared", "held AS (SELECT run_id FROM rc_events),", "common AS (SELECT run_id FROM rc_checkpoints),"]
    (folder / "broken.sql").write_text("-- explains: liveness.global_after_faults\nWITH\n-- include: _gone.sql\n")
    with pytest.raises(ValueError, match="_gone.sql"):
        custom.mechanism_files(tmp_path)


def test_f10_s_mechanisms_hold_their_shared_part_once_expanded():
    f10 = {path.name: sql for finding, _, sql, path in _files() if finding == "F10"}
    assert sorted(f10) == ["carried.sql", "carried_bounded.sql", "carried_commits.sql", "carried_duplicates.sql",
                           "handed_back.sql", "handed_back_bounded.sql", "handed_back_still_read.sql"]
    assert all("-- include:" not in sql and "held AS (" in sql and "n AS (" in sql for sql in f10.values())
    # the carried spans take in the refreshed checkpoints, and the ranges of commits come from one shared part
    assert all("refreshed AS (" in sql and "spans (run_id" in sql for name, sql in f10.items() if name.startswith("carried"))
    assert f10["carried_bounded.sql"].count("c AS (") == 1 and "covered AS (" in f10["carried_bounded.sql"]
