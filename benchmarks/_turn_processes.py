"""The fan-out modes of `benchmarks.turns` (`benchmarks._fanout_modes`) in the `scale` scenario,
with the worker processes' figures (their CPU, and the peak RSS of the largest one) and the
scripted model server's CPU per turn: it runs on the same cores, so it bounds the fan-out's wall
time as much as the clients do.

    python -m benchmarks.turns --scenarios scale --modes corral-fanout-p1,corral-fanout-p2
    python -m benchmarks._turn_processes --repeat 3     # the same, with the workers' figures
    python -m benchmarks._turn_processes --before /tmp/before   # and that checkout's clients
    python -m benchmarks._turn_processes --repeat 1 --timeline  # where the cores sit idle
    python -m benchmarks._turn_processes --scenario scale-faults --modes runtime-sqlite --timeline
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._fanout_modes import PROCESS_MODES, TURNS_PER_AGENT
from ._server import model_server, server_cpu
from .timeline import Timeline
from .turns import BEFORE, SCENARIOS, Scenario, run_worker


def main() -> None:
    parser = argparse.ArgumentParser(description="fan-out in 1 and 2 processes: scale scenario")
    parser.add_argument(
        "--scenario",
        choices=("scale", "scale-faults"),
        default="scale",
        help="scale-faults: the same with the faults scenario's 429s and cut streams",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agents", type=int, default=SCENARIOS["scale"].agents)
    parser.add_argument("--modes", default=",".join(PROCESS_MODES))
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of older code: each mode also runs from it, as MODE@before, "
        "interleaved, against the same model server",
    )
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="sample every process's CPU and the requests in flight each 100 ms; print a "
        "table per run and add the idle figures",
    )
    args = parser.parse_args()
    scenario = SCENARIOS[args.scenario]
    modes = args.modes.split(",")
    if args.before is not None:
        modes = [m + tag for m in modes for tag in ("", BEFORE)]
    runs: dict[str, list[dict[str, Any]]] = {}
    options = ("--latency-ms", str(scenario.latency_ms), *scenario.faults)
    with model_server("benchmarks.turns:policy", *options) as url:
        for _ in range(args.repeat):
            for mode in modes:
                served = server_cpu(url)
                figures = _run(mode, url, scenario, args.agents, args.before, args.timeline)
                figures["server_cpu_s"] = server_cpu(url) - served
                runs.setdefault(mode, []).append(figures)
    ideal = -(-args.agents // scenario.concurrency) * TURNS_PER_AGENT * scenario.latency_ms / 1000
    print(
        f"{args.scenario}: {args.agents} agents x {TURNS_PER_AGENT} turns, "
        f"{scenario.concurrency} at a time, {scenario.latency_ms} ms; ideal {ideal:g} s; "
        f"medians of {args.repeat}; load average {os.getloadavg()[0]:.1f}"
    )
    rows = ["wall_s", "efficiency", "cpu_ms_per_turn", "server_cpu_ms_per_turn", "lost_agents",
            "rss_peak_mb", "workers_rss_peak_mb"]  # fmt: skip
    if args.timeline:
        rows += ["timeline_s", "idle_share", "idle_core_s", "below_cap_s", "machine_cpu_s"]
    print(f"{'figure':<24}" + "".join(f"{mode:>26}" for mode in runs))
    table = {mode: _figures(figures, ideal) for mode, figures in runs.items()}
    for row in rows:
        print(f"{row:<24}" + "".join(f"{table[mode][row]:>26.3f}" for mode in runs))


def _run(
    mode: str, url: str, scenario: Scenario, agents: int, before: Path | None, timeline: bool
) -> dict[str, Any]:
    if not timeline:
        return run_worker(mode, url, scenario, agents, "asyncio", before)
    with Timeline(url.removesuffix("/v1") + "/stats") as line:
        figures = run_worker(mode, url, scenario, agents, "asyncio", before)
    summary = line.summary(scenario.concurrency)
    print(f"\n{mode}: {json.dumps({k: round(v, 2) for k, v in summary.items()})}")
    print(line.table(every=5), flush=True)
    return {**figures, **summary}


def _figures(runs: list[dict[str, Any]], ideal: float) -> dict[str, float]:
    def median(pick: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(pick(run) for run in runs)

    wall = median(lambda r: r["wall_s"])
    return {
        "wall_s": wall,
        "efficiency": ideal / wall,
        "cpu_ms_per_turn": median(
            lambda r: 1000 * (r["cpu_s"] + r.get("workers_cpu_s", 0.0)) / max(r["turns"], 1)
        ),
        "server_cpu_ms_per_turn": median(lambda r: 1000 * r["server_cpu_s"] / max(r["turns"], 1)),
        "lost_agents": median(lambda r: r["lost_agents"]),
        "rss_peak_mb": median(lambda r: r["rss_peak_mb"]),
        "workers_rss_peak_mb": median(lambda r: r.get("workers_rss_peak_mb", 0.0)),
        **{name: _median_of(runs, name) for name in TIMELINE_FIGURES},
    }


TIMELINE_FIGURES = ("timeline_s", "idle_share", "idle_core_s", "below_cap_s", "machine_cpu_s")


def _median_of(runs: list[dict[str, Any]], name: str) -> float:
    return statistics.median(float(run.get(name, 0.0)) for run in runs)


if __name__ == "__main__":
    main()
