"""The swarm's fast path (regionchaos.swarm): seeds emulated in memory inside Spark tasks,
their rows written as Parquet under the swarm's prefix, one pass of the GX suites for all.

The deep run and the swarm share the emulator and `tables.build_rows`; what they must not
differ in is the rows the suites judge, so the first test compares them for one seed."""

from __future__ import annotations

import contextlib
import io
import json

import pyarrow as pa
import pytest
import yaml

from regionchaos import runner
from regionchaos import tables as tables_mod
from regionchaos.cli import main
from regionchaos.judge.intake import _merge_parts, keyed_ddl, keyed_table, read_remote_tables, run_keys
from regionchaos.swarm import SWARM_OVERRIDES, SwarmContext, emulate_seed, fast_swarm
from regionchaos.scenario import catalogue, from_dict
from regionchaos.storage.faults import FaultPlan
from regionchaos.storage.s3 import ObjectStore

pytestmark = pytest.mark.spark


def _context(config, scenario: str = "coordinator-fallback", mutant: str | None = None) -> SwarmContext:
    data = yaml.safe_load(catalogue()[scenario].read_text())
    return SwarmContext(scenario, data, dict(SWARM_OVERRIDES), mutant, config, "swarms/test/", {})


def test_a_seeds_swarm_rows_equal_its_deep_run_rows(s3_server, spark):
    """Seed 2 of coordinator-fallback with the swarm's fault mix: a global restore, discovered
    splits, regional checkpoints. The deep run emulates into the S3 server with the data plane
    in Spark tasks; the swarm emulates in memory. Every table's rows must be the same."""
    ctx = _context(s3_server.config)
    record, swarm_rows = emulate_seed(ctx, 2)
    assert "error" not in record, record
    scenario = from_dict(ctx.scenario_data, {**SWARM_OVERRIDES, "seed": 2})
    run_id = runner.default_run_id(scenario, None)
    assert record["run_id"] == run_id
    store = ObjectStore.for_run(s3_server.config, run_id)
    runner.start(store, scenario, run_id=run_id, mutant=None, replay=record["replay"], spark=spark)
    deep_rows = tables_mod.build_rows(tables_mod.read_run(store, run_id))
    assert set(swarm_rows) == set(deep_rows) == set(tables_mod.SCHEMAS)
    assert sum(map(len, deep_rows.values())) > 1000  # a run with substance, not two empty tables
    assert len(deep_rows["checkpoints"]) > 5 and deep_rows["transactions"]
    for name in tables_mod.SCHEMAS:
        assert sorted(map(repr, swarm_rows[name])) == sorted(map(repr, deep_rows[name])), name


def test_a_swarm_judges_every_seed_once_and_a_crashed_seed_is_unknown(s3_server, spark):
    """Six smoke seeds, one of which cannot even record its scenario (a crash on that PUT):
    five judged by the suites, the crashed one unknown with its error, and the tables and the
    summary on the store under the swarm's prefix."""
    crash = {4: FaultPlan(crash_before_key="scenario.json")}
    result = fast_swarm("smoke", 6, first_seed=1, storage=s3_server.config, spark=spark, partitions=2,
                        fault_plans=crash)
    by_seed = {r["seed"]: r for r in result["runs"]}
    assert sorted(by_seed) == [1, 2, 3, 4, 5, 6]
    assert by_seed[4]["verdict"] == "unknown" and "InjectedCrash" in by_seed[4]["error"]
    assert result["unknown"] == 1
    judged = [r for s, r in by_seed.items() if s != 4]
    assert all(r["verdict"] in ("valid", "invalid") for r in judged), judged
    assert result["failing"] == []  # the correct protocol: nothing a finding does not declare
    # the swarm's outcome is the worst of its seeds': the crashed one's unknown (exit 3), said with the counts
    assert (result["outcome"]["kind"], result["outcome"]["exit_code"]) == ("unknown", 3), result["outcome"]
    assert by_seed[4]["kind"] == "unknown" and "1 unknown" in result["outcome"]["sentence"]
    assert all(r["drawn"] for r in judged)  # each seed's own fault mix, recorded with its verdict
    store = ObjectStore(s3_server.config, f"swarms/{result['swarm_id']}")
    keys = store.list_keys("")
    assert {f"tables/{t}/part-00000.parquet" for t in tables_mod.SCHEMAS} <= set(keys)
    others = [k for k in keys if not (k.startswith("tables/") and k.endswith(".parquet"))
              and k not in ("summary.json", "report/index.html")]
    assert others == []  # no per-seed object layout: only the tables' parts, the summary and the report
    assert "report/index.html" in keys and result["report"].endswith("report/index.html")
    saved = json.loads(store.get("summary.json"))
    assert saved["verdicts"] == result["verdicts"] and saved["verdicts"]["unknown"] == 1
    # read by the executors (a cluster master): a task per part, or one per table when the
    # tables are small, read the same rows
    names = ("checkpoints", "entries")
    per_part = read_remote_tables(spark, store, names=names)
    per_table = read_remote_tables(spark, store, one_task=True, names=names)
    assert sorted(per_part) == sorted(per_table) == sorted(names)
    for name in names:
        assert (per_part[name].rdd.getNumPartitions(), per_table[name].rdd.getNumPartitions()) == (2, 1)
        rows = sorted(map(repr, per_part[name].collect()))
        assert rows and rows == sorted(map(repr, per_table[name].collect()))
    # the pass reads each run by its key (a bigint), the stored parts keep the run ids
    keys = run_keys(result["runs"])
    assert sorted(keys) == sorted(r["run_id"] for r in judged) and sorted(keys.values()) == [0, 1, 2, 3, 4]
    keyed = read_remote_tables(spark, store, names=names, keys=keys)
    back = {key: run_id for run_id, key in keys.items()}
    for name in names:
        assert dict(keyed[name].dtypes)["run_id"] == "bigint"
        rows = sorted(repr((back[row[0]], *row[1:])) for row in keyed[name].collect())
        assert rows == sorted(repr(tuple(row)) for row in per_part[name].collect())


def test_a_table_s_run_ids_become_the_runs_keys_and_an_unknown_run_none():
    """`keyed_table`: the run ids replaced by their keys in place, every other column as it was; a run
    id the pass does not know gets no key (null), so no rule's join matches its rows."""
    rows = [("run-a", 1, "GLOBAL"), ("run-b", 1, "REGIONAL"), ("stray", 2, "GLOBAL"), ("run-a", 2, "ABORTED")]
    table = pa.table({"run_id": [r[0] for r in rows], "checkpoint_id": [r[1] for r in rows],
                      "status": [r[2] for r in rows]})
    keyed = keyed_table(table, {"run-b": 7, "run-a": 3})
    assert keyed.schema.field("run_id").type == pa.int64() and keyed.column_names == table.column_names
    assert keyed.column("run_id").to_pylist() == [3, 7, None, 3]
    assert keyed.drop_columns(["run_id"]).equals(table.drop_columns(["run_id"]))
    assert keyed_ddl("truth") == "run_id bigint, split int, start bigint, end bigint, count bigint, sum bigint"


def test_a_table_s_parts_merge_into_one_keyed_file_with_every_row(tmp_path):
    """`_merge_parts`: three stored parts of one table (as the swarm's tasks write them) become one Parquet
    file holding every row of all three, in the parts' order, each run by its key."""
    import pyarrow.parquet as pq

    bodies = []
    for part in ([("run-a", 1, 0, 10, 10, 45)], [], [("run-b", 2, 0, 5, 5, 10), ("run-c", 1, 0, 3, 3, 3)]):
        buffer = io.BytesIO()
        pq.write_table(tables_mod.arrow_table("truth", part), buffer)
        bodies.append(buffer.getvalue())
    path = tmp_path / "tables" / "truth" / "part-00000.parquet"
    _merge_parts(str(path), bodies, {"run-a": 0, "run-b": 1, "run-c": 2})
    merged = pq.read_table(path)
    assert merged.column("run_id").to_pylist() == [0, 1, 2] and merged.column("sum").to_pylist() == [45, 10, 3]
    assert merged.schema.field("run_id").type == pa.int64() and merged.column_names == tables_mod.column_names("truth")


@pytest.fixture(scope="module")
def mutant_swarm(s3_server, tmp_path_factory):
    """`regionchaos swarm --mutant failed-region-commits --json` on six smoke seeds: (exit code,
    the printed result, the local directory it mirrored the summary to)."""
    local = tmp_path_factory.mktemp("swarm-local")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["swarm", "--seeds", "6", "--scenario", "smoke", "--mutant", "failed-region-commits",
                     "--s3-endpoint", s3_server.config.endpoint_url, "--bucket", s3_server.config.bucket,
                     "--local-dir", str(local), "--json"])
    return code, json.loads(out.getvalue()), local


def test_the_cli_swarm_finds_a_mutant_through_its_invariant(mutant_swarm):
    """`regionchaos swarm --mutant failed-region-commits`: a failed region's sink commits what
    the regional checkpoint does not cover; the notifications suite must catch it on some seed,
    exit 1, and each failing seed comes with its replay lines."""
    code, result, local = mutant_swarm
    assert code == 1, result["verdicts"]
    assert result["failing"], result["verdicts"]
    outcome = result["outcome"]  # a caught mutant: red (exit 1), and said so in words and in the JSON
    assert (outcome["kind"], outcome["caught"], outcome["exit_code"]) == ("violation", True, 1), outcome
    assert "the checks caught mutant failed-region-commits" in outcome["sentence"]
    assert any("notifications" in f["failed"] for f in result["failing"]), result["failing"]
    for f in result["failing"]:
        assert f"--seed {f['seed']}" in f["replay"] and "--mutant failed-region-commits" in f["replay"]
        assert f["replay_deep"] == f"regionchaos replay {result['swarm_id']} --seed {f['seed']}"
    assert json.loads((local / "swarms" / result["swarm_id"] / "summary.json").read_text())["runs"] == result["runs"]


def test_a_failing_swarm_seed_replays_as_a_deep_run_with_the_same_verdict_and_stats(mutant_swarm, s3_server, capsys):
    """`regionchaos replay SWARM_ID --seed N` on a failing seed: the deep run (S3 layout, report)
    fails the same invariants with the same protocol stats, exit 1 (the verdict), and says so."""
    _, result, local = mutant_swarm
    failing = result["failing"][0]
    swarm_run = next(r for r in result["runs"] if r["seed"] == failing["seed"])
    assert swarm_run["stats"]["triggered"] > 0 and swarm_run["stats"]["region_failovers"] > 0
    code = main(["replay", result["swarm_id"], "--seed", str(failing["seed"]), "--local-dir", str(local),
                 "--s3-endpoint", s3_server.config.endpoint_url, "--bucket", s3_server.config.bucket, "--json"])
    deep = json.loads(capsys.readouterr().out)
    assert code == 1, deep["replay_of"]
    assert deep["replay_of"]["differences"] == []
    assert sorted(c["name"] for c in deep["checks"] if c["success"] is False) == sorted(failing["failed"])
    assert {k: deep["stats"][k] for k in swarm_run["stats"]} == swarm_run["stats"]
    assert deep["run_id"] == failing["run_id"]
    store = ObjectStore.for_run(s3_server.config, deep["run_id"])
    assert store.exists("report/index.html") and store.exists("scenario.json")  # the deep run's own layout


def test_replay_reports_a_disagreement_and_bad_input(mutant_swarm, s3_server, tmp_path, capsys):
    """A swarm record that disagrees with the deep run (a stat and its failed rules edited) gives
    exit 3 naming both; a seed the swarm did not run and an unknown swarm id are bad input (exit 2)."""
    _, result, _ = mutant_swarm
    edited = json.loads(json.dumps(result))
    seed = edited["runs"][0]["seed"]
    edited["runs"][0]["stats"]["triggered"] += 1
    edited["runs"][0]["failed_rules"] = edited["runs"][0]["failed_rules"] + ["liveness.global_after_faults"]
    edited_id = "edited-" + result["swarm_id"]
    ObjectStore(s3_server.config, f"swarms/{edited_id}").put("summary.json", json.dumps(edited).encode())
    where = ["--s3-endpoint", s3_server.config.endpoint_url, "--bucket", s3_server.config.bucket,
             "--local-dir", str(tmp_path)]
    code = main(["replay", edited_id, "--seed", str(seed), *where])
    out = capsys.readouterr().out
    assert code == 3, out
    assert "stats.triggered" in out and "disagrees" in out
    assert "failed rules: swarm" in out and "liveness.global_after_faults" in out
    assert main(["replay", result["swarm_id"], "--seed", "999", *where]) == 2
    assert "seed 999 is not in swarm" in capsys.readouterr().out
    assert main(["replay", "no-such-swarm", "--seed", "1", *where]) == 2
    assert "no swarm 'no-such-swarm'" in capsys.readouterr().out
    assert main(["replay", "no-such-swarm", "--seed", "1", "--local-dir", str(tmp_path)]) == 2  # no endpoint: local
    assert "no swarm 'no-such-swarm'" in capsys.readouterr().out


def test_the_swarm_report_shows_failures_mix_and_each_failing_seed_s_lines(mutant_swarm):
    """The swarm's HTML report (also mirrored locally): the mutant, failures per invariant as the
    runs have them, each failing seed with its replay, deep replay and shrink lines, the fault mix
    table with every fault kind; it renders in headless Chromium without fetching anything."""
    import re
    from html import unescape
    from pathlib import Path

    from regionchaos.nemesis import FAULT_KINDS

    _, result, local = mutant_swarm
    page = Path(result["local_report"]).read_text()
    assert re.search(r'id="mutant">failed-region-commits<', page)
    assert re.search(r'<p id="outcome" data-kind="violation">outcome: <b class="bad">[^<]*the checks caught mutant '
                     r'failed-region-commits[^<]*</b> \(exit 1\)', page), page[:3000]
    counts: dict[str, int] = {}
    for run in result["runs"]:
        for name in run["failed"]:
            counts[name] = counts.get(name, 0) + 1
    shown = dict(re.findall(r'<tr data-invariant="([a-z_]+)"><td>[a-z_]+</td><td>(\d+)</td>', page))
    assert {k: int(v) for k, v in shown.items()} == counts and counts
    for failing in result["failing"]:
        row = page.split(f'<tr data-seed="{failing["seed"]}">')[1].split("</tr>")[0]
        assert unescape(re.search(r'<code class="replay">([^<]+)<', row).group(1)) == failing["replay"]
        assert failing["replay_deep"] in row
        shrink = unescape(re.search(r'<code class="shrink">([^<]+)<', row).group(1))
        assert shrink.startswith("regionchaos shrink --scenario smoke --seed " + str(failing["seed"]))
        assert shrink.endswith(f"--mutant failed-region-commits --invariant {failing['failed'][0]}")
    mix = page.split('<table id="mix-table">')[1].split("</table>")[0]
    assert all(f"<td>{kind}</td>" in mix for kind in FAULT_KINDS)
    from tests.offline_page import open_offline

    shot = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots" / "swarm-report.png"
    images, requested = open_offline(Path(result["local_report"]), shot, lambda page: page.eval_on_selector_all(
        "img", "els => els.map(e => [e.id, e.complete && e.naturalWidth > 0])"))
    assert dict(images) == {"failures": True, "mix": True}
    assert all(url.startswith(("file:", "data:")) for url in requested), requested


class _Count:
    """Stands in for a Spark accumulator in a task body run outside Spark."""

    def __init__(self):
        self.value = 0

    def add(self, n):
        self.value += n


def test_a_seed_whose_rows_do_not_fit_the_schema_is_unknown_and_its_task_goes_on(s3_server, monkeypatch):
    """A seed that writes a string into an integer column (a mutmut mutant did) must not take
    its Spark task down: that seed is recorded with an error naming the table, the task's other
    seeds are written, and the part holds only their rows."""
    import pyarrow.parquet as pq

    from regionchaos import swarm

    ctx = _context(s3_server.config, "smoke")
    ctx = SwarmContext(ctx.scenario_ref, ctx.scenario_data, ctx.overrides, None, ctx.config, "swarms/test-fit/", {})
    real = swarm.emulate_seed

    def emulate(ctx, seed):
        record, rows = real(ctx, seed)
        if seed == 2:
            bad = list(rows["checkpoints"][0])
            bad[tables_mod.column_names("checkpoints").index("checkpoint_id")] = ""
            rows["checkpoints"][0] = tuple(bad)
        return record, rows

    monkeypatch.setattr(swarm, "emulate_seed", emulate)
    done, crashed = _Count(), _Count()
    (part,) = swarm.emulate_partition(ctx, done, crashed, 0, iter([1, 2, 3]))
    by_seed = {r["seed"]: r for r in part["records"]}
    assert "table checkpoints" in by_seed[2]["error"] and "schema" in by_seed[2]["error"]
    assert "error" not in by_seed[1] and "error" not in by_seed[3]
    assert (done.value, crashed.value) == (3, 1)
    store = ObjectStore(s3_server.config, ctx.swarm_prefix)
    written = pq.read_table(io.BytesIO(store.get("tables/checkpoints/part-00000.parquet")))
    assert set(written.column("run_id").to_pylist()) == {by_seed[1]["run_id"], by_seed[3]["run_id"]}
