"""The performance goal, line by line, read off one run of `benchmarks.turns`.

Each line of the goal (docs/performance.md) is judged from the medians the run printed, for
each corral mode that ran the scenarios it needs; a line whose scenarios or baseline did not
run is left out. A line is "met" or "missed", with the figures that decide it, so a reader sees
at once which line a slow hour of the machine moved, and by how much.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

Tables = dict[str, dict[str, dict[str, float]]]
"""Scenario -> mode -> figure -> median, as `benchmarks.turns` prints them."""

BARE = "sdk-raw"
"""The floor the CPU line is measured against: the bare SDK loop, its request transform skipped."""
CPU_MS_PER_TURN = 3.0
EFFICIENCY = 0.5
FAULT_RATIO = 0.8
FOLLOWUP_CACHE_SHARE = 0.97
RSS_MB = 120.0
ONE_PROCESS = ("corral", "runtime-sqlite", "runtime-memory")
"""The modes whose agents all run in the measured process: the CPU and RSS lines are theirs (a
fan-out's worker processes start up inside its timed window, and have RSS of their own)."""


@dataclass(frozen=True)
class Verdict:
    line: str
    mode: str
    met: bool
    figures: str


def verdicts(tables: Tables) -> Iterator[Verdict]:
    """Every line of the goal this run can judge, for every corral mode it can judge it for."""
    yield from _cpu(tables)
    yield from _scale(tables)
    yield from _faults(tables)
    yield from _cache(tables)
    yield from _rss(tables)


def print_goals(tables: Tables) -> None:
    found = list(verdicts(tables))
    if not found:
        return
    print("\nthe goal, line by line (docs/performance.md)")
    for v in found:
        print(f"{v.line:<14}{v.mode:<22}{'met' if v.met else 'MISSED':<8}{v.figures}")


def _corral_modes(table: dict[str, dict[str, float]]) -> list[str]:
    return [mode for mode in table if not mode.startswith("sdk") and "@" not in mode]


def _cpu(tables: Tables) -> Iterator[Verdict]:
    table = tables.get("cpu", {})
    if BARE not in table:
        return
    bare = table[BARE]["cpu_ms_per_turn"]
    for mode in _corral_modes(table):
        if mode in ONE_PROCESS:
            ms = table[mode]["cpu_ms_per_turn"]
            met = ms <= CPU_MS_PER_TURN and ms < bare
            yield Verdict("cpu", mode, met, f"{ms:.3f} ms per turn; bare loop {bare:.3f}")


def _scale(tables: Tables) -> Iterator[Verdict]:
    table = tables.get("scale", {})
    bare = f"; bare loop {table[BARE]['wall_s']:.2f} s" if BARE in table else ""
    for mode in _corral_modes(table):
        eff, wall = table[mode]["efficiency"], table[mode]["wall_s"]
        yield Verdict("scale", mode, eff >= EFFICIENCY, f"efficiency {eff:.3f}, {wall:.2f} s{bare}")


def _faults(tables: Tables) -> Iterator[Verdict]:
    clean = tables.get("clean", {})
    for faulty in ("faults-short", "faults"):
        table = tables.get(faulty, {})
        for mode in _corral_modes(table):
            if mode not in clean or not clean[mode]["efficiency"]:
                continue
            ratio = table[mode]["efficiency"] / clean[mode]["efficiency"]
            lost = table[mode]["lost_agents"]
            met = ratio >= FAULT_RATIO and lost == 0
            yield Verdict(faulty, mode, met, f"{ratio:.3f} of clean's efficiency, {lost:.0f} lost")


def _cache(tables: Tables) -> Iterator[Verdict]:
    table = tables.get("cpu", {})
    for mode in _corral_modes(table):
        share = table[mode]["followup_cache_share"]
        met = share >= FOLLOWUP_CACHE_SHARE
        yield Verdict("cache", mode, met, f"follow-up cache-eligible share {share:.3f}")


def _rss(tables: Tables) -> Iterator[Verdict]:
    table = tables.get("rss", {})
    for mode in _corral_modes(table):
        if mode in ONE_PROCESS:
            mb = table[mode]["rss_peak_mb"]
            yield Verdict("rss", mode, mb <= RSS_MB, f"peak {mb:.1f} MB at 1,000 agents")
