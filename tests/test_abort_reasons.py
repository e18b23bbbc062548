"""``abort_has_a_reason`` reads "no completed checkpoint" in the history's order, not by checkpoint id.

In:  `concurrent-checkpoints` seed 11 under the swarm's fault draw, emulated once into the embedded S3 server: with
     two checkpoints pending at once, checkpoint 8 is aborted for want of a completed checkpoint while the older
     checkpoint 7 is still pending, and 7 completes after that decision. And a copy whose history moves 7's
     completion before 8's decision (`tests.tamper_helpers`). Both judged in the session's pooled pass
     (tests/judge_pool.py).
Out: the run is valid: 8's reason held when it was decided (read by ids, 7 < 8 made it look unfounded, a false
     alarm on 7 of 100 such swarm seeds); the copy fails ``abort_has_a_reason``, naming checkpoint 8.
"""

from __future__ import annotations

import pytest

from regionchaos import runner
from regionchaos.scenario import load
from regionchaos.storage import ObjectStore
from tests import tamper_helpers as H
from tests.judge_pool import pooled

pytestmark = pytest.mark.spark
NAME, SEED, OVERRIDES = "concurrent-checkpoints", 11, {"faults.swarm": True}
RUN, MOVED = "abort-reasons-cc-s11", "abort-reasons-cc-s11-completed-first"
ABORTED, OLDER = 8, 7  # the abort for want of a completed checkpoint, and the older one completing after it


def complete_the_older_checkpoint_first(store: ObjectStore) -> None:
    """The history: checkpoint 7's completion now comes before checkpoint 8's decision (sequence numbers in the
    new order), so a checkpoint had completed when 8 was aborted for want of one."""
    def fn(events):
        decided = next(i for i, e in enumerate(events)
                       if e["kind"] == "checkpoint_decided" and e["checkpoint_id"] == ABORTED)
        assert (events[decided]["status"], events[decided]["reason"]) == ("ABORTED", "no-completed-checkpoint")
        done = next(i for i, e in enumerate(events)
                    if e["kind"] == "checkpoint_completed" and e["checkpoint_id"] == OLDER)
        assert done > decided, "the run should complete the older checkpoint after the newer one's abort"
        seqs = [e["seq"] for e in events]
        moved = events[:decided] + [events[done]] + events[decided:done] + events[done + 1:]
        for seq, e in zip(seqs, moved):
            e["seq"] = seq
        return moved
    H.edit_history(store, fn)


def _build(config, spark) -> list[ObjectStore]:
    scenario = load(NAME, OVERRIDES, seed=SEED)
    store = ObjectStore.for_run(config, RUN)
    runner.start(store, scenario, run_id=RUN, mutant=None,
                 replay=runner.replay_line(NAME, SEED, OVERRIDES, None))
    copy = H.copy_run(store, MOVED)
    complete_the_older_checkpoint_first(copy)
    return [store, copy]


pooled(__name__, _build)


@pytest.fixture(scope="module")
def judged(judge_pool) -> dict:
    return judge_pool.results(__name__)


def test_an_abort_before_an_older_checkpoint_completes_has_its_reason(judged):
    result = judged[RUN]
    assert "abort_has_a_reason" not in H.failed_rules(result, "decisions_follow_rules"), result.why
    assert result.verdict == "valid", result.failed_rules


def test_the_same_abort_after_a_completion_has_none(judged):
    result = judged[MOVED]
    assert "abort_has_a_reason" in H.failed_rules(result, "decisions_follow_rules"), result.failed_rules
    check = next(c for c in result.checks if c["name"] == "decisions_follow_rules")
    assert any(row["rule"] == "abort_has_a_reason" and row.get("checkpoint_id") == ABORTED
               and "no-completed-checkpoint" in str(row.get("detail"))
               for row in check["examples"]), check["examples"][:5]
