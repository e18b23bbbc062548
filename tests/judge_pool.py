"""One GX pass for every test module that judges runs it stored (the tamper harness and its kin).

In:  per module, a builder registered at import with `pooled(__name__, build)`: ``build(config,
     spark) -> [ObjectStore]`` emulates its runs into the shared S3 server (and tampers copies).
Out: the session fixture `judge_pool`: on the first module's request it runs the builders of
     every module with a selected test, judges all their stores in ONE pass
     (`regionchaos.judge.runs.judge_stores`) and hands each module, through
     ``judge_pool.results(__name__)``, run id -> `regionchaos.judge.Judgement` (held to the scenario
     and mutant its ``scenario.json`` records) for its own runs. A builder that raised fails only its own module (its error is raised
     there); two modules that store the same run id are refused (one would judge the other's run).

Why: a GX pass costs a fixed 7-12 JVM CPU seconds beyond its rows (bench/results/judge_profile/);
five modules judged apart paid it five times. Every run's rules read only its own rows (the
swarm relies on the same), so a run's result does not depend on the runs judged beside it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from regionchaos.judge import Judgement
from regionchaos.judge.runs import judge_stores
from regionchaos.storage import ObjectStore

Builder = Callable[..., list[ObjectStore]]
_BUILDERS: dict[str, Builder] = {}


def pooled(module: str, build: Builder) -> None:
    """Register ``module``'s builder (call at import)."""
    _BUILDERS[module] = build


def run_id_of(store: ObjectStore) -> str:
    """The run id of a store made by ``ObjectStore.for_run`` (the last part of its prefix)."""
    return store.run_prefix.rstrip("/").rsplit("/", 1)[-1]


class Pool:
    def __init__(self, config, spark, modules: set[str]):
        self.config, self.spark = config, spark
        self.modules = sorted(m for m in _BUILDERS if m in modules)
        self.judged: dict[str, Judgement] | None = None
        self.run_ids: dict[str, list[str]] = {}
        self.errors: dict[str, BaseException] = {}

    def _judge_all(self) -> None:
        stores: list[ObjectStore] = []
        owner: dict[str, str] = {}
        for module in self.modules:
            try:
                built = _BUILDERS[module](self.config, self.spark)
            except Exception as exc:  # noqa: BLE001 - fails that module's tests only
                self.errors[module] = exc
                continue
            self.run_ids[module] = [run_id_of(store) for store in built]
            for run_id in self.run_ids[module]:
                if run_id in owner:
                    raise AssertionError(f"run id {run_id} stored by {owner[run_id]} and {module}")
                owner[run_id] = module
            stores.extend(built)
        self.judged = judge_stores(self.spark, stores)

    def results(self, module: str) -> dict[str, Judgement]:
        """Run id -> the judgement of each of ``module``'s runs (the pass runs on the first call)."""
        if module not in self.modules:  # a module asks only from its own selected tests
            raise KeyError(f"{module} registered no builder (tests.judge_pool.pooled) or has no selected test")
        if self.judged is None:
            self._judge_all()
        if module in self.errors:
            raise self.errors[module]
        return {run_id: self.judged[run_id] for run_id in self.run_ids[module]}


@pytest.fixture(scope="session")
def judge_pool(request, s3_server, spark) -> Pool:
    selected = {item.module.__name__ for item in request.session.items if getattr(item, "module", None)}
    return Pool(s3_server.config, spark, selected)
