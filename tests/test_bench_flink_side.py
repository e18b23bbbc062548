"""bench/flink_side_by_side.py's pure parts: the real shape -> emulated scenario mapping and the raw-artifact
measures (transactions pre-committed twice, objects no retained checkpoint names). No cluster, no Spark.

In:  real-Flink catalogue scenarios and their seeds' drawn faults; hand-made mirrored artifacts in tmp_path.
Out: assertions on the mapped scenario (it loads as an emulated scenario of the same shape) and on the measures.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from regionchaos.flink.run import draw_faults
from regionchaos.scenario import from_dict, load

_SPEC = importlib.util.spec_from_file_location(
    "flink_side_by_side", Path(__file__).resolve().parent.parent / "bench" / "flink_side_by_side.py")
side = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(side)


@pytest.mark.parametrize("name", ["real-flink-tm-kills", "real-flink-jm-resume"])
@pytest.mark.parametrize("seed", [1, 2, 7])
def test_shape_loads_as_an_emulated_scenario_of_the_same_job(name, seed):
    real = load(name, seed=seed)
    section = real.real_flink
    faults = draw_faults(real.flink_run_spec)
    emulated = from_dict(side.emulated_shape(name, seed, section.model_dump(), faults))
    assert emulated.backend == "emulation"
    assert emulated.topology.parallelism == section.parallelism
    assert emulated.topology.taskmanagers == section.taskmanagers
    assert emulated.flink.num_retained == section.retained
    assert emulated.flink.backend_type == section.state_backend
    assert not emulated.flink.region_enabled
    assert emulated.workload.splits * emulated.workload.records_per_split == section.records
    kinds = sorted(f.kind for f in emulated.faults.schedule)
    assert kinds == sorted(["taskmanager_loss"] * section.tm_kills + ["jobmanager_failover"] * section.jm_kill)


def test_a_fault_lands_on_the_attempt_its_time_falls_in():
    real = {"interval_ms": 500, "taskmanagers": 2}
    faults = [{"at_s": 9.376, "kind": "tm_kill", "victim_draw": 0.71}, {"at_s": 0.2, "kind": "jm_kill", "victim_draw": 0.0},
              {"at_s": 99.0, "kind": "tm_kill", "victim_draw": 0.1}]
    schedule = side.fault_schedule(faults, real, attempts=60)
    assert schedule == [{"checkpoint": 18, "kind": "taskmanager_loss", "taskmanager": 1},
                        {"checkpoint": 0, "kind": "jobmanager_failover"},
                        {"checkpoint": 59, "kind": "taskmanager_loss", "taskmanager": 0}]


def _write(folder: Path, key: str, body) -> None:
    path = folder / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body))


def test_replayed_counts_records_two_transactions_hold(tmp_path):
    _write(tmp_path, "sink/txn/chk-1/tm-0.json", [{"split": 0, "start": 0, "end": 10}])
    _write(tmp_path, "sink/txn/chk-2/tm-0.json", [{"split": 0, "start": 6, "end": 20}, {"split": 1, "start": 0, "end": 5}])
    _write(tmp_path, "sink/txn/chk-3/tm-0.json", [{"split": 0, "start": 20, "end": 25}])
    assert side.replayed_from_transactions(side.Mirror(tmp_path)) == 4


def test_storage_left_is_what_no_retained_metadata_names(tmp_path):
    _write(tmp_path, "checkpoints/chk-3/_metadata", '{"handles": ["checkpoints/chk-3/a.state", "checkpoints/chk-2/b.state"]}')
    _write(tmp_path, "checkpoints/chk-3/a.state", "x" * 10)
    _write(tmp_path, "checkpoints/chk-2/b.state", "x" * 20)
    _write(tmp_path, "checkpoints/chk-4/c.state", "x" * 30)
    left = side.emulated_storage_left(side.Mirror(tmp_path))
    assert (left["objects"], left["bytes"], left["examples"]) == (1, 30, ["checkpoints/chk-4/c.state"])


def test_real_storage_left_skips_what_a_present_checkpoint_names(tmp_path):
    files = [{"path": "J/chk-5/_metadata", "size": 100, "present_at_end": True},
             {"path": "J/shared/sst-1", "size": 7, "present_at_end": True},
             {"path": "J/shared/sst-2", "size": 11, "present_at_end": True},
             {"path": "J/chk-6/orphan", "size": 13, "present_at_end": True},
             {"path": "J/chk-4/_metadata", "size": 100, "present_at_end": False}]
    _write(tmp_path, "flink/inventory.json", {"files": files})
    dump = {"operators": [{"coordinator": None, "subtasks": [{"handles": [
        {"kind": "file", "path": "file:/tmp/x/checkpoints/J/shared/sst-1"}, {"kind": "inline", "name": "J/shared/sst-2"}]}]}]}
    _write(tmp_path, "flink/metadata/J/chk-5.json", dump)
    left = side.real_storage_left(side.Mirror(tmp_path))
    assert (left["objects"], left["bytes"], left["retained_checkpoints"]) == (2, 24, 1)
