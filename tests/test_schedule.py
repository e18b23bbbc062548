"""Explicit fault schedules (`faults.schedule`, `regionchaos.schedule`, `regionchaos pin`).

In:  catalogue scenarios with the swarm's drawn fault mixes (declines, timeouts, region and
     TaskManager failures, JobManager failovers, storage faults, rescales), emulated in memory.
Out: a pinned schedule replays its drawn run exactly (every table's rows, every protocol stat);
     editing the schedule changes the run as edited; a bad entry is a ScenarioError naming
     the field; `regionchaos pin` writes a scenario file that loads back as the same scenario.
"""

from __future__ import annotations

import pytest

from regionchaos import runner
from regionchaos import tables as tables_mod
from regionchaos.cli import main
from regionchaos.scenario import ScenarioError, from_dict, load
from regionchaos.schedule import pin, protocol_stats_of, to_yaml
from regionchaos.storage.memory import MemoryStore

SWARM = {"faults.swarm": True}


def _rows(scenario) -> tuple[dict, dict]:
    """(rows of every table without the run id, protocol stats) of an in-memory emulation."""
    run_id = runner.default_run_id(scenario, None)
    store = MemoryStore.for_run(None, run_id)
    result, _ = runner.start(store, scenario, run_id=run_id, mutant=None, replay="-", threads=1)
    rows = tables_mod.build_rows(tables_mod.read_run(store, run_id))
    strip = {name: sorted(repr(tuple(v for v in row if v != run_id)) for row in table if not _names_the_scenario(row))
             for name, table in rows.items() if name != "run"}  # "run": the scenario itself
    return strip, runner.protocol_stats(result.stats)


def _names_the_scenario(row: tuple) -> bool:
    """Rows that carry the scenario (its name, its schedule) or the size of what does: the
    run_started event, and the inventory's scenario.json and history files."""
    return "run_started" in row or "scenario.json" in row or any(str(v).startswith("history/") for v in row)


@pytest.mark.parametrize("name,seed", [("coordinator-fallback", 2), ("rescale-4-2-1", 3), ("storage-faults", 1),
                                       ("unaligned-recovery-7-2", 2)])
def test_a_pinned_schedule_replays_the_drawn_run_exactly(name, seed, tmp_path):
    drawn = load(name, overrides=SWARM, seed=seed)
    pinned, stats = pin(drawn)
    assert pinned.faults.schedule and not pinned.faults.swarm
    path = tmp_path / "pinned.yaml"
    path.write_text(to_yaml(pinned))
    loaded = load(str(path))
    assert loaded == pinned
    drawn_rows, drawn_stats = _rows(drawn)
    pinned_rows, pinned_stats = _rows(loaded)
    assert drawn_stats == stats == pinned_stats
    assert sum(map(len, drawn_rows.values())) > 500
    differing = [t for t in drawn_rows if drawn_rows[t] != pinned_rows[t]]
    assert differing == [], differing


def test_editing_the_schedule_changes_the_run_as_edited():
    """Without its region crashes, a pinned run has no region failover; with one more
    JobManager failover, one more."""
    pinned, stats = pin(load("coordinator-fallback", overrides=SWARM, seed=2))
    assert stats["region_failovers"] > 0
    data = pinned.to_dict()
    schedule = data["faults"]["schedule"]
    no_crash = [e for e in schedule if e["kind"] not in ("subtask_crash", "taskmanager_loss", "recovery_failure")]
    assert len(no_crash) < len(schedule)
    without = protocol_stats_of(from_dict({**data, "faults": {**data["faults"], "schedule": no_crash}}))
    assert without["region_failovers"] == 0
    extra = [*schedule, {"checkpoint": 1, "kind": "jobmanager_failover"}]
    assert not any(e == {"checkpoint": 1, "kind": "jobmanager_failover"} for e in schedule)
    more = protocol_stats_of(from_dict({**data, "faults": {**data["faults"], "schedule": extra}}))
    assert more["jm_failovers"] == stats["jm_failovers"] + 1


@pytest.mark.parametrize("entry,field,reason", [
    ({"checkpoint": 0, "kind": "decline", "vertex": "process"}, "faults.schedule.0.subtask", "missing"),
    ({"checkpoint": 0, "kind": "subtask_crash", "region": 9}, "faults.schedule.0.region", "at most 4 pipeline regions"),
    ({"checkpoint": 12, "kind": "jobmanager_failover"}, "faults.schedule.0.checkpoint", "beyond the 12 checkpoints"),
    ({"checkpoint": 0, "kind": "meteor"}, "faults.schedule.0.kind", "must be 'decline'"),
    ({"checkpoint": 0, "kind": "jobmanager_failover", "region": 1}, "faults.schedule.0.region", "takes no region"),
    ({"checkpoint": 0, "kind": "put_failure", "taskmanager": 2}, "faults.schedule.0.taskmanager", "at most 2"),
    ({"checkpoint": 0, "kind": "timeout", "vertex": "sink", "subtask": 0}, "faults.schedule.0.vertex", "'source'"),
])
def test_a_bad_schedule_entry_names_its_field(entry, field, reason):
    with pytest.raises(ScenarioError) as err:
        load("smoke", overrides={"faults.schedule": [entry]})
    assert [f for f, _ in err.value.errors] == [field], err.value.errors
    assert reason in err.value.errors[0][1]


def test_a_schedule_and_the_swarm_mix_do_not_mix():
    with pytest.raises(ScenarioError) as err:
        load("smoke", overrides={"faults.schedule": [], "faults.swarm": True})
    assert err.value.errors[0][0] == "faults.schedule"


def test_the_cli_pins_a_seed_into_a_file_and_refuses_bad_input(tmp_path, capsys):
    out = tmp_path / "p.yaml"
    assert main(["pin", "--scenario", "smoke", "--seed", "14", "--set", "faults.swarm=true", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"into {out}" in printed and f"replay: regionchaos run --scenario {out} --seed 14" in printed
    pinned = load(str(out))
    assert pinned.seed == 14 and pinned.faults.schedule and pinned.name == "smoke-s14-pinned"
    assert protocol_stats_of(pinned) == protocol_stats_of(load("smoke", overrides=SWARM, seed=14))
    missing = tmp_path / "never.yaml"
    assert main(["pin", "--scenario", "smoke", "--set", "faults.decline=7", "--out", str(missing)]) == 2
    assert "faults.decline" in capsys.readouterr().out and not missing.exists()


def test_every_random_draw_of_a_seed_comes_from_the_nemesis_stream_table():
    """A seed replays bit for bit only while no two kinds of draw share a random stream: every
    generator is made by `faultkinds.stream_rng` from the one `Stream` table (the registry of fault kinds)."""
    from pathlib import Path

    import regionchaos
    from regionchaos.faultkinds import Stream

    package = Path(regionchaos.__file__).parent
    makers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                    if "default_rng(" in p.read_text() or "np.random.seed(" in p.read_text())
    assert makers == ["faultkinds.py"]
    assert len({int(s) for s in Stream}) == len(Stream)
