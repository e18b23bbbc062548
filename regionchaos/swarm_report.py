"""The swarm report: one offline HTML page of a swarm's result (same style as the run report).

In:  a swarm's result (`regionchaos.swarm.fast_swarm`: per seed its verdict, failed and
     unknown invariants, drawn fault mix, emulation seconds, replay lines; phase walls; the seeds in
     which each interleaving kind happened).
Out: `build_swarm_report(result) -> str`: failures per invariant, the interleavings reached (a kind no
     seed reached in red: a gap in the chaos), the fault-mix distribution
     of failing vs passing seeds (how often each fault kind was on, and how likely), seeds per
     second and where the wall time went, the slowest seeds, and each failing seed's replay,
     deep replay and shrink lines. `fast_swarm` uploads it to ``swarms/SWARM_ID/report/index.html``.
"""

from __future__ import annotations

import shlex
from typing import Any

from .interleavings import INTERLEAVINGS
from .nemesis import FAULT_KINDS
from .report import CSS, VERDICT_COLOURS, _plt, _png, template
from .scenario import INVARIANTS

SLOWEST = 10
FAILING_LISTED = 200


def shrink_line(replay: str, invariant: str | None) -> str:
    """A failing seed's replay line (``regionchaos run ...``) as the `regionchaos shrink` line for
    the invariant it failed."""
    parts = shlex.split(replay)
    parts[1] = "shrink"
    return shlex.join(parts + (["--invariant", invariant] if invariant else []))


def fault_mix(runs: list[dict]) -> list[dict]:
    """Per fault kind: the share of failing and of passing seeds that had it on, and its mean
    probability where on (a kind on in every failing seed and few passing ones is the suspect)."""
    failing = [r for r in runs if r["verdict"] == "invalid"]
    passing = [r for r in runs if r["verdict"] == "valid"]
    rows = []
    for kind in FAULT_KINDS:
        row: dict[str, Any] = {"kind": kind}
        for name, group in (("failing", failing), ("passing", passing)):
            on = [float((r.get("drawn") or {}).get(kind) or 0.0) for r in group]
            on = [p for p in on if p > 0]
            row[f"{name}_on"] = len(on) / len(group) if group else None
            row[f"{name}_mean_p"] = sum(on) / len(on) if on else None
        rows.append(row)
    return rows


def _plot_failures(counts: dict[str, int]) -> str | None:
    if not counts:
        return None
    plt = _plt()
    names = [n for n in INVARIANTS if n in counts] + sorted(set(counts) - set(INVARIANTS))
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(names) + 0.8))
    ax.barh(names[::-1], [counts[n] for n in names[::-1]], color=VERDICT_COLOURS["invalid"])
    ax.set_xlabel("failing seeds")
    ax.tick_params(labelsize=8)
    return _png(fig)


def _plot_mix(mix: list[dict]) -> str | None:
    if not any(r["failing_on"] is not None for r in mix):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 3))
    x = range(len(mix))
    ax.bar([i - 0.2 for i in x], [r["failing_on"] or 0 for r in mix], 0.4, label="failing seeds",
           color=VERDICT_COLOURS["invalid"])
    ax.bar([i + 0.2 for i in x], [r["passing_on"] or 0 for r in mix], 0.4, label="passing seeds",
           color=VERDICT_COLOURS["valid"])
    ax.set_xticks(list(x), [r["kind"] for r in mix], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("share with the kind on")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    return _png(fig)


def build_swarm_report(result: dict) -> str:
    runs = result["runs"]
    counts: dict[str, int] = {}
    for r in runs:
        for name in r.get("failed") or []:
            counts[name] = counts.get(name, 0) + 1
    known = {k["seed"] for k in result.get("known_findings", [])}
    failing = []
    for r in runs:
        if r["verdict"] != "invalid":
            continue
        failing.append({**r, "known": r["seed"] in known, "replay_deep": f"regionchaos replay {result['swarm_id']} --seed {r['seed']}",
                        "shrink": shrink_line(r["replay"], (r.get("failed") or [None])[0])})
    mix = fault_mix(runs)
    slowest = sorted((r for r in runs if r.get("emulate_seconds") is not None),
                     key=lambda r: -r["emulate_seconds"])[:SLOWEST]
    wall = result.get("wall_seconds") or 0
    return template("swarm.html.j2").render(
        css=CSS, result=result, colours=VERDICT_COLOURS, counts=counts, failing=failing[:FAILING_LISTED],
        failing_total=len(failing), mix=mix, slowest=slowest, rate=result["judged"] / wall if wall else None,
        unknown=[r for r in runs if r["verdict"] == "unknown"][:FAILING_LISTED],
        failures_png=_plot_failures(counts), mix_png=_plot_mix(mix), walls=result.get("walls") or {},
        interleavings=[(kind, what, (result.get("interleavings") or {}).get(kind, 0))
                       for kind, what in INTERLEAVINGS.items()])
