"""Replay one swarm seed as a deep run, and say whether the two agree.

In:  a swarm id (``swarms/SWARM_ID/summary.json`` on the store, or its local copy under
     ``LOCAL_DIR/swarms/SWARM_ID/``) and one of its seeds.
Out: `replay_seed(...) -> dict`: the deep run's summary (`regionchaos.runner.run`: S3 layout,
     report, Data Docs) with ``replay_of``: the swarm's verdict, failed and unknown
     invariants and protocol stats for that seed, and ``differences`` (empty when the deep
     run reached the same verdict, the same failed and unknown invariants and the same stats).

The fast path and the deep run share the emulator and `tables.build_rows`, so a difference
is a bug in the tool, not in the protocol: the CLI reports it with exit 3 (unknown), never as
a verdict.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rich.markup import escape

from . import runner
from .judge import Judgement
from .run.ids import check_run_id
from .scenario import ScenarioError, check_mutant, load
from .storage.s3 import ObjectStore, StorageConfig
from .swarm import SWARMS_PREFIX


MAX_SUMMARY_BYTES = 256 << 20  # a million-seed swarm's summary is about 200 MB


def load_swarm(swarm_id: str, *, storage: StorageConfig | None = None, local_dir: str | None = ".runs") -> dict:
    """The swarm's summary: from the store when ``storage`` names an endpoint, else the local copy.
    A summary that is not JSON, not a swarm's (an object with ``scenario`` and ``runs``) or holds a
    run id outside the grammar (`regionchaos.runid`) is a ScenarioError naming SWARM_ID."""
    check_run_id(swarm_id, "SWARM_ID")
    if storage is not None and storage.endpoint_url:
        store = ObjectStore(storage, f"{SWARMS_PREFIX}/{swarm_id}")
        if not store.exists("summary.json"):
            raise ScenarioError([("SWARM_ID", f"no swarm {swarm_id!r} at {store.uri()}")])
        where, body = store.uri("summary.json"), store.get("summary.json")
    else:
        where = os.path.join(local_dir or ".runs", SWARMS_PREFIX, swarm_id, "summary.json")
        if not os.path.isfile(where):
            raise ScenarioError([("SWARM_ID", f"no swarm {swarm_id!r} in {where} (a swarm on a remote store: "
                                              "pass its --s3-endpoint and --bucket)")])
        if os.path.getsize(where) > MAX_SUMMARY_BYTES:
            raise ScenarioError([("SWARM_ID", f"{where} is larger than {MAX_SUMMARY_BYTES >> 20} MiB")])
        with open(where, "rb") as fh:
            body = fh.read()
    return check_summary(body, where)


def check_summary(body: bytes, where: str) -> dict:
    """A swarm summary's JSON, checked for what a replay reads (see `load_swarm`)."""
    def bad(reason: str) -> ScenarioError:
        return ScenarioError([("SWARM_ID", f"{where} {reason}")])

    try:
        swarm = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise bad(f"is not JSON ({exc})") from None
    if not isinstance(swarm, dict):
        raise bad(f"is not a swarm summary (a JSON object), it holds a {type(swarm).__name__}")
    if not isinstance(swarm.get("scenario"), str) or not isinstance(swarm.get("runs"), list):
        raise bad("is not a swarm summary: it needs 'scenario' (text) and 'runs' (a list)")
    if not isinstance(swarm.get("overrides") or {}, dict):
        raise bad("is not a swarm summary: 'overrides' must be an object")
    for i, run in enumerate(swarm["runs"]):
        if not isinstance(run, dict) or not isinstance(run.get("seed"), int) or isinstance(run.get("seed"), bool):
            raise bad(f"is not a swarm summary: runs[{i}] has no integer 'seed'")
        for key, kind in (("replay", str), ("verdict", str), ("failed", list), ("unknown", list), ("stats", dict)):
            if run.get(key) is not None and not isinstance(run[key], kind):
                raise bad(f"is not a swarm summary: runs[{i}].{key} must be a {kind.__name__}")
        if run.get("run_id") is not None:
            check_run_id(run["run_id"], f"SWARM_ID ({where} runs[{i}].run_id)")
    swarm.setdefault("swarm_id", where)
    return swarm


def swarm_seed(swarm: dict, seed: int) -> dict:
    """The swarm's record of ``seed`` (ScenarioError naming --seed if the swarm did not run it)."""
    for run in swarm["runs"]:
        if run["seed"] == seed:
            return run
    seeds = sorted(r["seed"] for r in swarm["runs"])
    span = f"{seeds[0]}..{seeds[-1]}" if seeds else "none"
    raise ScenarioError([("--seed", f"seed {seed} is not in swarm {swarm['swarm_id']} (its seeds: {span})")])


def differences(swarm_run: dict, deep: dict) -> list[str]:
    """How the deep run's summary differs from the swarm's record of the same seed: verdict,
    failed and unknown invariants, failed rules (when the swarm recorded them), and each
    protocol stat the swarm recorded."""
    shows = Judgement.from_summary(deep)
    deep_failed, deep_unknown = sorted(shows.failed), sorted(shows.unknown)
    out = []
    if deep.get("verdict") != swarm_run.get("verdict"):
        out.append(f"verdict: swarm {swarm_run.get('verdict')}, deep run {deep.get('verdict')}")
    if deep_failed != sorted(swarm_run.get("failed") or []):
        out.append(f"failed invariants: swarm {sorted(swarm_run.get('failed') or [])}, deep run {deep_failed}")
    if "failed_rules" in swarm_run and sorted(shows.failed_rules) != sorted(swarm_run["failed_rules"]):
        out.append(f"failed rules: swarm {sorted(swarm_run['failed_rules'])}, deep run {sorted(shows.failed_rules)}")
    if deep_unknown != sorted(swarm_run.get("unknown") or []):
        out.append(f"unknown invariants: swarm {sorted(swarm_run.get('unknown') or [])}, deep run {deep_unknown}")
    stats = swarm_run.get("stats")
    if not stats:
        out.append("the swarm recorded no stats for this seed (it crashed, or predates stats): nothing to compare")
    else:
        deep_stats = deep.get("stats", {})
        for key, value in sorted(stats.items()):
            if deep_stats.get(key) != value:
                out.append(f"stats.{key}: swarm {value!r}, deep run {deep_stats.get(key)!r}")
    return out


def replay_seed(swarm_id: str, seed: int, *, storage: StorageConfig | None = None, local_dir: str | None = ".runs",
                console=None, spark=None) -> dict:
    """Run ``seed`` of swarm ``swarm_id`` as a deep run (its run id, scenario, overrides and
    mutant) and compare; see the module docstring."""
    swarm = load_swarm(swarm_id, storage=storage, local_dir=local_dir)
    run = swarm_seed(swarm, seed)
    overrides: dict[str, Any] = dict(swarm.get("overrides") or {})
    scenario = load(swarm["scenario"], overrides=overrides or None, seed=seed)
    mutant = check_mutant(swarm.get("mutant"))
    # the swarm judges the seed's own run only: no A/B side with regional checkpoints off
    scenario = scenario.model_copy(update={"compare_regional_off": False})
    if console is not None:
        said = f"{run.get('verdict')}{': ' + ', '.join(map(str, run['failed'])) if run.get('failed') else ''}"
        console.print(f"[bold]replay[/bold] seed {seed} of swarm {swarm_id} as a deep run (swarm said: "
                      f"{escape(said)})")
    summary = runner.run(scenario, mutant=mutant, storage=storage, run_id=run.get("run_id"),
                         spark=spark, console=console, replay=run.get("replay"), overrides=overrides,
                         local_dir=local_dir)
    return {**summary, "replay_of": {"swarm_id": swarm_id, "seed": seed, "verdict": run.get("verdict"),
                                     "failed": run.get("failed"), "unknown": run.get("unknown"),
                                     "stats": run.get("stats"), "differences": differences(run, summary)}}
