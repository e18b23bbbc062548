"""What the explorer covers: the scenarios it accepts, and the choices it enumerates at each checkpoint attempt.

In:  a Scenario (catalogue name or file, with ``--set`` overrides) and the largest number of checkpoint attempts.
Out: `refuse(scenario, max_checkpoints)`: a `regionchaos.scenario.ScenarioError` (exit 2) naming every field whose
     setting the state signature does not cover, with the reason (a bounded job is explored only with a fixed
     number of records per interval, aligned checkpoints, no partition discovery, the FLIP's semantics and one
     checkpoint at a time: `BOUNDED_NEEDS`); `Choices`: per choice point the actions, each
     a tuple of explicit-schedule entries (`regionchaos.scenario.ScheduledFault` fields, without ``checkpoint``)
     that `regionchaos.faultkinds.land` turns into the attempt's faults, exactly as a pinned run does.

The actions of one attempt (only the kinds the scenario enables, i.e. whose probability is above 0):
- each region's response: its source subtask acks (no entry), declines (``decline``), or stays silent until the
  checkpoint timeout (``timeout``); the region's other tasks ack (a bounded job's finished source responds to
  nothing: then its region's first running task stands for it). A region fails as a whole (the coordinator maps
  tasks to regions before any rule reads them), so which of its tasks fails changes no decision;
- at most ``FAULTS_PER_ATTEMPT`` (one) of: a region failover (``subtask_crash``), a TaskManager loss
  (``taskmanager_loss``) or a JobManager failover (``jobmanager_failover``), each between checkpoints, and with
  ``faults.inside`` above 0 also inside the attempt's checkpoint: after ``k`` of its responses for every ``k``
  from 0 to the number of tasks (the last: once every response arrived or the timeout fired), at its region
  fallback, while its metadata is written; or a JobManager crash between state upload and metadata commit
  (``crash_before_metadata``), which lands while the metadata is written.
A schedule of N attempts is one action per attempt; "no fault and every region acks" is an action too.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from types import SimpleNamespace

from ..protocol.topology import JobGraph, Task
from ..scenario import Scenario, ScenarioError, ScheduledFault, require_emulation
from ..workload.dataflow import SOURCE

MAX_PARALLELISM = 4
MAX_CHECKPOINTS = 12
FAULTS_PER_ATTEMPT = 1
RESPONSES = ("decline", "timeout")  # the kinds that make a region's response (ack: no entry)
FAILURES = ("subtask_crash", "taskmanager_loss", "jobmanager_failover")  # placed between checkpoints or inside
REFUSED_KINDS = {
    "put_failure": "a failed state upload declines every task of a TaskManager at once, and leaves objects the "
                   "data plane decides",
    "slow_put": "a slow upload's ack arrives after the timeout or not, by the seed's upload time at each attempt",
    "recovery_failure": "a region failing again while it recovers replays a drawn part of its input",
    "ack_loss": "lost acknowledgements last a drawn number of attempts",
    "store_failure": "the completed checkpoint store's refusal is not among the choices the signature covers",
}


def refuse(scenario: Scenario, max_checkpoints: int) -> None:
    """Raise ScenarioError naming every setting outside what the signature covers (see the module docstring
    and `regionchaos.explore.signature`); nothing is explored then."""
    require_emulation(scenario, "explore")
    errors: list[tuple[str, str]] = []
    if not 1 <= max_checkpoints <= MAX_CHECKPOINTS:
        errors.append(("--max-checkpoints", f"must be 1 to {MAX_CHECKPOINTS}, got {max_checkpoints}"))
    ps = [scenario.topology.parallelism, *(e.parallelism for e in scenario.rescale)]
    if max(ps) > MAX_PARALLELISM:
        field = "topology.parallelism" if scenario.topology.parallelism > MAX_PARALLELISM else "rescale"
        errors.append((field, f"at most {MAX_PARALLELISM} subtasks per vertex are explored (got {max(ps)}): every "
                              "region's response is a choice at every attempt"))
    if scenario.workload.bounded:
        errors += _bounded(scenario)
    if scenario.flink.region_timeout_ms is not None:
        errors.append(("execution.checkpointing.region.timeout", "whether an ack beats the per-region deadline "
                       "depends on the seed's upload time at each attempt, which the state signature does not hold"))
    for name in ("fallback_ms", "metadata_ms", "notify_ms"):
        if tuple(getattr(scenario.timing, name)) != (0, 0):
            errors.append((f"timing.{name}", "a delay is drawn per attempt from the seed; the explorer covers "
                                             "zero delays only"))
    for kind, why in REFUSED_KINDS.items():
        if getattr(scenario.faults, kind):
            errors.append((f"faults.{kind}", f"not explored: {why}"))
    if scenario.faults.schedule is not None:
        errors.append(("faults.schedule", "the explorer chooses every fault itself; explore the scenario without "
                                          "its schedule"))
    if scenario.faults.swarm:
        errors.append(("faults.swarm", "a swarm seed draws its own fault mix and job shape; explore a fixed scenario"))
    if scenario.faults.inside and not scenario.region_enabled_effective:
        errors.append(("faults.inside", "with regional checkpoints off a decline aborts at once, so where a fault "
                                        "inside the checkpoint lands depends on the seed's arrival order"))
    if not any(getattr(scenario.faults, k) for k in (*RESPONSES, *FAILURES, "crash_before_metadata")):
        errors.append(("faults", "no fault kind the explorer covers is enabled (decline, timeout, subtask_crash, "
                                 "taskmanager_loss, jobmanager_failover, crash_before_metadata): nothing to explore"))
    if errors:
        raise ScenarioError(errors, what="explore")


# bounded sources: what the signature's input fields (`regionchaos.explore.signature`) need fixed, and why
BOUNDED_NEEDS = {
    "workload.records_per_interval": "the records a split reads per interval are drawn per attempt from the seed "
                                     "unless min = max: explore a fixed rate, so that the end of input is a "
                                     "function of the positions the signature holds",
    "execution.checkpointing.unaligned.enabled": "with unaligned checkpoints the records in flight are drawn per "
                                                 "attempt from the seed, and recovered ones drain over intervals",
    "workload.discovered_splits": "partition discovery adds splits at attempts the seed draws",
    "execution.checkpointing.region.semantics": "under the PR a failed region's splits go back to the enumerator "
                                                "and a closed gateway holds assignments (F10, F16), which the model "
                                                "leaves to the data plane: which reader reads a split decides the "
                                                "end of input",
    "execution.checkpointing.max-concurrent-checkpoints": "with several checkpoints at once a task can be told "
                                                          "of a newer checkpoint before an older one, whose "
                                                          "notification it then ignores (a source does not finish "
                                                          "on it): the signature does not hold what each task was "
                                                          "told; bounded jobs are explored one checkpoint at a time",
}


def _bounded(scenario: Scenario) -> list[tuple[str, str]]:
    """The settings of a bounded job the signature's input fields do not cover (see `BOUNDED_NEEDS`)."""
    w, f = scenario.workload, scenario.flink
    off = {"workload.records_per_interval": w.records_per_interval[0] != w.records_per_interval[1],
           "execution.checkpointing.unaligned.enabled": f.unaligned,
           "workload.discovered_splits": w.discovered_splits > 0,
           "execution.checkpointing.region.semantics": f.semantics != "flip",
           "execution.checkpointing.max-concurrent-checkpoints": f.max_concurrent != 1}
    return [(field, f"with bounded sources (workload.bounded): {why}") for field, why in BOUNDED_NEEDS.items()
            if off[field]]


def failing_task(graph: JobGraph, regions: dict[Task, int], region: int, finished: frozenset = frozenset()) -> Task:
    """The task whose response stands for its region's: the region's first running source subtask (else its first
    running task; a finished task is not triggered, FLIP-147)."""
    tasks = sorted(t for t, r in regions.items() if r == region and t not in finished) or sorted(
        t for t, r in regions.items() if r == region)
    return next((t for t in tasks if t[0] == SOURCE), tasks[0])


@dataclass(frozen=True)
class Action:
    """One attempt's choices: ``entries`` (schedule entries without ``checkpoint``, as sorted item tuples) and the
    same as objects `regionchaos.faultkinds.land` reads (``faults``)."""

    entries: tuple[tuple[tuple[str, object], ...], ...]
    faults: tuple

    def schedule(self, checkpoint: int) -> list[dict]:
        """The entries of attempt ``checkpoint`` as `ScheduledFault` dicts."""
        return [{"checkpoint": checkpoint, **dict(e)} for e in self.entries]

    def describe(self) -> str:
        return "; ".join(_describe(dict(e)) for e in self.entries) or "every region acks"


def _describe(e: dict) -> str:
    where = {"pending": f" after {e.get('after_acks', 0)} responses", "fallback": " at the region fallback",
             "finalize": " while the metadata is written"}.get(e.get("at"), "")
    if e["kind"] in RESPONSES:
        return f"{e['vertex']} {e['subtask']} {'declines' if e['kind'] == 'decline' else 'is silent'}"
    target = {"subtask_crash": f"region {e.get('region')} fails over", "taskmanager_loss":
              f"TaskManager {e.get('taskmanager')} is lost", "jobmanager_failover": "JobManager fails over",
              "crash_before_metadata": "JobManager crashes before the metadata commit"}[e["kind"]]
    return target + (where if e.get("at") else " between checkpoints" if e["kind"] in FAILURES else "")


class Choices:
    """The actions at a choice point, by the job's shape then (graph, regions, finished tasks): built once per shape.

    ``full``: every action the schedule language has (`_full`). Otherwise one action per class of actions that
    reach the same state (`_reduced`), which holds with one checkpoint at a time, zero delays, the protocol
    unmutated and unbounded sources (with bounded ones a failover rewinds the positions the signature holds, and
    restarts finished tasks); `tests/test_explore_signature.py` checks that both reach the same states."""

    def __init__(self, scenario: Scenario, mutant: str | None = None):
        self.sc = scenario
        f = scenario.faults
        self.responses = ("ack", *(k for k in RESPONSES if getattr(f, k)))
        self.failures = tuple(k for k in FAILURES if getattr(f, k))
        self.inside = bool(f.inside)
        self.crash_before_metadata = bool(f.crash_before_metadata)
        self.full = not (mutant is None and scenario.flink.max_concurrent == 1 and not scenario.workload.bounded)
        self._cache: dict[tuple, list[Action]] = {}

    def actions(self, graph: JobGraph, regions: dict[Task, int], *, full: bool | None = None,
                finished: frozenset = frozenset()) -> list[Action]:
        """The actions at a choice point of a job with this graph and these regions (all of them with ``full``);
        ``finished``: its finished tasks (bounded sources), which respond to nothing."""
        full = self.full if full is None else full
        key = (tuple(graph.tasks()), tuple(sorted(regions.items())), full, tuple(sorted(finished)))
        if key not in self._cache:
            self._cache[key] = (self._full(graph, regions, finished) if full
                                else self._reduced(graph, regions, finished))
        return self._cache[key]

    def count(self, graph: JobGraph, regions: dict[Task, int], finished: frozenset = frozenset()) -> int:
        """How many actions the schedule language has here (what the reduced ones stand for)."""
        return len(self.actions(graph, regions, full=True, finished=finished))

    def _vectors(self, graph: JobGraph, regions: dict[Task, int], finished: frozenset) -> list[tuple]:
        """Every combination of the regions' responses, as entries (an ack is none)."""
        num_regions = len(set(regions.values()))
        per_region = [[self._response(graph, regions, r, kind, finished) for kind in self.responses]
                      for r in range(num_regions)]
        return [tuple(e for e in combo if e is not None) for combo in product(*per_region)]

    def _full(self, graph: JobGraph, regions: dict[Task, int], finished: frozenset) -> list[Action]:
        tasks = len(graph.tasks())
        instants = [{}]
        if self.inside:
            instants += [{"at": "pending", "after_acks": k} for k in range(tasks + 2)]
            instants += [{"at": "fallback"}, {"at": "finalize"}]
        faults = [()] + [(e,) for e in self._failures(len(set(regions.values())), instants)]
        if self.crash_before_metadata:
            faults.append(({"kind": "crash_before_metadata"},))
        return [_action((*vector, *extra)) for vector in self._vectors(graph, regions, finished) for extra in faults]

    def _reduced(self, graph: JobGraph, regions: dict[Task, int], finished: frozenset) -> list[Action]:
        """One action per class of the full set's actions that reach the same state, with one checkpoint at a
        time, zero delays and the protocol unmutated. Why the classes are what they are (the model's code paths):

        - a region failover or a TaskManager loss never changes what the signature holds (`Model._region_failover`:
          the coordinator's ``restore_region`` refills no fallback entry, moves no counter; without a completed
          checkpoint, or a job of one region, it is a global restore from the latest checkpoint, which refills the
          fallback table from that same checkpoint), except that it aborts the pending checkpoint it lands in,
          uncounted (``job-failover-region``): landing between checkpoints, or after its checkpoint was aborted, is
          the same as no fault; anywhere inside the pending checkpoint up to its end (after any number of
          responses, at its decision, at its region fallback, while its metadata is written) it aborts that
          checkpoint, whatever the responses were: as right after the trigger (``after_acks: 0``, every region
          acking);
        - a JobManager failover inside the pending checkpoint up to its end voids it, whatever the responses: as
          right after the trigger; after an abort (``after_acks`` past the last response: it lands at the decision,
          which for an aborted checkpoint is right after the abort) it follows the abort's counter moves; between
          checkpoints it comes before the trigger. Those three stay, the last two with every response;
        - a crash between state upload and metadata commit is a JobManager failover while the metadata is written
          (the checkpoint voided) or, for a checkpoint aborted with a reason, right after the abort: kept with
          every response;
        - a fault placed at the region fallback lands inside the checkpoint before its end, or waits for a later
          checkpoint's fallback (the search keeps only schedules whose faults land in their own attempt)."""
        tasks = len(graph.tasks())
        vectors = self._vectors(graph, regions, finished)
        out = [_action(v) for v in vectors]
        if "jobmanager_failover" in self.failures:
            out += [_action((*v, {"kind": "jobmanager_failover"})) for v in vectors]
            if self.inside:
                out += [_action((*v, {"kind": "jobmanager_failover", "at": "pending", "after_acks": tasks + 1}))
                        for v in vectors]
        if self.crash_before_metadata:
            out += [_action((*v, {"kind": "crash_before_metadata"})) for v in vectors]
        if self.inside:
            out += [_action((e,)) for e in self._failures(len(set(regions.values())),
                                                          [{"at": "pending", "after_acks": 0}])]
        return out

    def probes(self, graph: JobGraph, regions: dict[Task, int], finished: frozenset = frozenset()) -> list[Action]:
        """Actions of the schedule language that the reduced set stands for, tried from every state only for the
        kinds of step they make (`regionchaos.explore.search`): the judged runs then go through what the
        signature merges (a failover while the region fallback is pending and one while the metadata is written
        reach the same state, but their data differ). Each enabled failure kind on its first target at every
        instant, with every region acking and with the last one declining (so the checkpoint falls back); a crash
        before the metadata commit both ways; the first region silent (its ack arrives after the checkpoint)."""
        num_regions = len(set(regions.values()))
        tasks = len(graph.tasks())
        last = (self._response(graph, regions, num_regions - 1, "decline", finished) if "decline" in self.responses
                else None)
        vectors = [()] + ([(last,)] if last is not None and num_regions > 1 else [])
        instants = [{}]
        if self.inside:
            instants += [{"at": "pending", "after_acks": k} for k in range(tasks + 2)]
            instants += [{"at": "fallback"}, {"at": "finalize"}]
        firsts = {"subtask_crash": {"region": 0}, "taskmanager_loss": {"taskmanager": 0}, "jobmanager_failover": {}}
        out = [_action((*v, {"kind": k, **firsts[k], **at})) for v in vectors for k in self.failures for at in instants]
        if self.crash_before_metadata:
            out += [_action((*v, {"kind": "crash_before_metadata"})) for v in vectors]
        if "timeout" in self.responses:
            out.append(_action((self._response(graph, regions, 0, "timeout", finished),)))
        return out

    def _response(self, graph: JobGraph, regions: dict[Task, int], region: int, kind: str, finished: frozenset):
        if kind == "ack":
            return None
        vertex, sub = failing_task(graph, regions, region, finished)
        return {"kind": kind, "vertex": vertex, "subtask": sub}

    def _failures(self, num_regions: int, instants: list[dict]) -> list[dict]:
        targets = {"subtask_crash": [{"region": r} for r in range(num_regions)],
                   "taskmanager_loss": [{"taskmanager": t} for t in range(self.sc.topology.taskmanagers)],
                   "jobmanager_failover": [{}]}
        return [{"kind": k, **t, **at} for k in self.failures for t in targets[k] for at in instants]


def _action(entries: tuple[dict, ...]) -> Action:
    for e in entries:  # every action is a schedule entry the scenario model accepts (validated once per shape)
        ScheduledFault(checkpoint=0, **e)
    fields = ("kind", "vertex", "subtask", "region", "taskmanager", "at", "after_acks")
    return Action(tuple(tuple(sorted(e.items())) for e in entries),
                  tuple(SimpleNamespace(**{k: e.get(k) for k in fields}) for e in entries))
