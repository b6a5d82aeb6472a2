"""Client CPU per model turn, fan-out efficiency, faults and memory: corral beside the bare SDK.

The workload: agents with about 2 KB of instructions and one tool `step(x)`, four streamed tool
turns then a final answer, against the scripted model server in its own process (so the CPU
measured is the client's alone). Each driver of `benchmarks._turn_modes` runs in a fresh process
per scenario and repetition, interleaved, and the medians are printed. Scenarios:

- `cpu`: 200 agents, 50 at a time, 0 ms latency: client CPU ms per turn, and the server's
  prefix-cache figures (the share of each follow-up request that repeats the one before it);
- `scale`: 1,000 agents, 256 at a time, 200 ms per request: wall, efficiency (ideal / wall) and
  peak RSS;
- `rss`: the agents of `scale` without the latency: peak RSS at 1,000 agents in a minute,
  not several;
- `serial`: 20 agents one at a time, 0 ms: CPU per turn when nothing overlaps;
- `compact`: 20 agents with a context window so small that each is compacted: the prefix-cache
  share of follow-up requests, summaries included;
- `clean` and `faults`: 100 agents, 50 at a time, 50 ms; in `faults` 2% of requests are
  answered 429 (Retry-After 1 s, no `x-ratelimit-*` headers) and 2% are cut midway: agents lost
  and efficiency, to compare with `clean`;
- `faults-short`: the faults of `faults`, but each 429 asks for 50 ms (`retry-after-ms: 50`, one
  request's latency; `Retry-After: 1`, rounded up to whole seconds): in `faults` one honoured
  second is as long as the whole fault-free run, so the ratio of the two efficiencies measures
  that second more than the client (docs/performance.md); here the wait is short, so the ratio
  measures what the faults cost beyond the waits the server asked for;
- `scale-faults`: the faults of `faults` in the workload of `scale`, to compare with `scale`: a
  run several times longer than the honoured second.

When a run holds a fault-free scenario and its faulty twin (`clean` and `faults` or
`faults-short`; `scale` and `scale-faults`), the two are run interleaved, repetition by
repetition, so both meet the same machine load, and the run also prints, per mode, the faulty
efficiency over the fault-free one.

Run (all scenarios with `--repeat 3` take about a quarter of an hour on two cores; `--quick`
divides the agents by ten):

    .venv/bin/python -m benchmarks.turns --repeat 3
    .venv/bin/python -m benchmarks.turns --scenarios cpu --modes sdk-raw,corral --loop uvloop
    .venv/bin/python -m benchmarks.turns --scenarios cpu,serial --before /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._fanout_modes import fanout_answer
from ._goals import print_goals
from ._server import model_server

TOOL_TURNS = 4
CACHE_FIGURES = ("cache_share", "followup_cache_share", "summaries")
LOGGED = ("cpu", "compact")
"""Scenarios whose requests the server logs, for the prefix-cache figures."""


_REACHED = re.compile(r"reached (\d+)")
_SUMMARY_ASKED = "handoff note"
"""Words of corral's summarisation prompt (the server does not pass `tool_choice` on)."""


def policy(request: dict[str, Any]) -> Any:
    """Call `step` with the last number seen until it reaches four, then answer; a summary
    request (its last item corral's summarisation prompt) is answered with the number reached,
    which so survives the compaction."""
    if (answer := fanout_answer(request)) is not None:  # `_fanout_modes`' fan-out workers
        return answer
    reached = 0
    for item in request["input"]:
        if item.get("type") == "function_call_output":
            reached = int(item["output"])
        elif found := _REACHED.findall(json.dumps(item.get("content", ""))):
            reached = int(found[-1])
    if _SUMMARY_ASKED in json.dumps(request["input"][-1]):
        return f"reached {reached}"
    if reached >= TOOL_TURNS:
        return "done"
    return [{"type": "function_call", "name": "step", "arguments": json.dumps({"x": reached})}]


@dataclass(frozen=True)
class Scenario:
    agents: int
    concurrency: int
    latency_ms: int
    faults: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    """corral settings (`key=value`) the corral drivers add."""


FAULTS = ("--ratelimit-rate", "0.02", "--disconnect-rate", "0.02", "--seed", "7")
"""2% of requests answered 429 with `Retry-After: 1` and no `x-ratelimit-*` headers, 2% of
streams cut midway."""
SHORT_WAIT = ("--retry-after", "0.05")
"""A 429's wait of one request's latency: `retry-after-ms: 50` (and `Retry-After: 1`)."""

SCENARIOS = {
    "cpu": Scenario(200, 50, 0),
    "scale": Scenario(1000, 256, 200),
    "rss": Scenario(1000, 256, 0),
    "serial": Scenario(20, 1, 0),
    "compact": Scenario(20, 10, 0, settings=("model_context_window=2700",)),
    "clean": Scenario(100, 50, 50),
    "faults": Scenario(100, 50, 50, FAULTS),
    "faults-short": Scenario(100, 50, 50, FAULTS + SHORT_WAIT),
    "scale-faults": Scenario(1000, 256, 200, FAULTS),
}
FAULTY_TWINS = {"faults": "clean", "faults-short": "clean", "scale-faults": "scale"}
"""Each faulty scenario and the fault-free one with the same workload."""
MODES = ("sdk", "sdk-raw", "corral", "runtime-sqlite", "runtime-memory")
TURNS = TOOL_TURNS + 1
WORKER_TIMEOUT = 600.0


BEFORE = "@before"
"""The suffix of a mode run from the `--before` checkout's code."""


def run_worker(
    mode: str, url: str, scenario: Scenario, agents: int, loop: str, before: Path | None
) -> dict[str, Any]:
    env, cwd = dict(os.environ), None
    if mode.endswith(BEFORE):
        assert before is not None
        mode = mode.removesuffix(BEFORE)
        # `-m` puts the working folder first on the path: its corral and its drivers, then.
        env["PYTHONPATH"], cwd = str(before), before
    argv = [sys.executable, "-m", "benchmarks._turn_modes", mode, url, str(agents)]
    argv += [str(scenario.concurrency), loop, *scenario.settings]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=WORKER_TIMEOUT, check=False, env=env, cwd=cwd
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def cache_share(log: Path, skip: int) -> tuple[dict[str, float], int]:
    """The prefix-cache figures of the requests logged after the first `skip`: the share of
    all their bytes, and of follow-up requests' bytes, that repeat the request before them under
    the same `prompt_cache_key`; how many were summaries; and the lines now in the log."""
    total = prefix = follow_total = summaries = count = 0
    seen: set[str] = set()
    with log.open(encoding="utf-8") as lines:
        for count, line in enumerate(lines, 1):
            if count <= skip:
                continue
            record = json.loads(line)
            total += record["input_bytes"]
            prefix += record["prefix_bytes"]
            summaries += record["body"].get("tool_choice") == "none"
            key = record["prompt_cache_key"]
            if key in seen:
                follow_total += record["input_bytes"]
            seen.add(key)
    figures = {
        "cache_share": prefix / max(total, 1),
        "followup_cache_share": prefix / max(follow_total, 1),
        "summaries": float(summaries),
    }
    return figures, count


@dataclass
class _Running:
    """One scenario of a group being run: its server, its agents and the runs so far."""

    name: str
    url: str
    agents: int
    log: Path
    lines: int = 0
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def run_scenarios(
    names: list[str],
    modes: list[str],
    repeat: int,
    divide: int,
    loop: str,
    before: Path | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """Run every mode of every scenario in `names`, interleaved: each repetition runs each
    scenario's modes in turn, so scenarios compared with each other (a fault run and its
    fault-free twin) meet the same machine load, as the modes of one scenario do."""
    with ExitStack() as stack:
        running = [_start(name, divide, stack) for name in names]
        for _ in range(repeat):
            for scenario in running:
                for mode in modes:
                    _run_once(scenario, mode, loop, before)
    tables = {}
    for scenario in running:
        spec = SCENARIOS[scenario.name]
        ideal = -(-scenario.agents // spec.concurrency) * TURNS * spec.latency_ms / 1000
        tables[scenario.name] = {mode: summary(scenario.runs[mode], ideal) for mode in modes}
    return tables


def _start(name: str, divide: int, stack: ExitStack) -> _Running:
    scenario = SCENARIOS[name]
    agents = max(scenario.agents // divide, scenario.concurrency if divide == 1 else 1)
    log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "requests.jsonl"
    options = ["--latency-ms", str(scenario.latency_ms), *scenario.faults]
    if name in LOGGED:
        options += ["--log", str(log)]
    url = stack.enter_context(model_server("benchmarks.turns:policy", *options))
    return _Running(name, url, agents, log)


def _run_once(scenario: _Running, mode: str, loop: str, before: Path | None) -> None:
    spec = SCENARIOS[scenario.name]
    figures = run_worker(mode, scenario.url, spec, scenario.agents, loop, before)
    if scenario.name in LOGGED:
        cache, scenario.lines = cache_share(scenario.log, scenario.lines)
        figures |= cache
    scenario.runs.setdefault(mode, []).append(figures)
    print(scenario.name, mode, json.dumps(figures), file=sys.stderr, flush=True)


def summary(runs: list[dict[str, Any]], ideal: float) -> dict[str, float]:
    def median(key: str) -> float:
        return statistics.median(float(run[key]) for run in runs)

    # A fan-out's worker processes spend CPU of their own: it counts as the client's too.
    cpu_ms_per_turn = [
        1000 * (r["cpu_s"] + r.get("workers_cpu_s", 0.0)) / max(r["turns"], 1) for r in runs
    ]
    wall = median("wall_s")
    return {
        "cpu_ms_per_turn": statistics.median(cpu_ms_per_turn),
        "wall_s": wall,
        "efficiency": ideal / wall if ideal else 0.0,
        "lost_agents": median("lost_agents"),
        "rss_start_mb": median("rss_start_mb"),
        "rss_peak_mb": median("rss_peak_mb"),
        **{key: median(key) if key in runs[0] else 0.0 for key in CACHE_FIGURES},
    }


ROWS = {
    "cpu": (
        "cpu_ms_per_turn",
        "rss_start_mb",
        "rss_peak_mb",
        "cache_share",
        "followup_cache_share",
    ),
    "scale": ("wall_s", "efficiency", "cpu_ms_per_turn", "rss_peak_mb"),
    "rss": ("rss_peak_mb", "cpu_ms_per_turn", "wall_s"),
    "serial": ("cpu_ms_per_turn", "wall_s"),
    "compact": ("cache_share", "followup_cache_share", "summaries", "cpu_ms_per_turn"),
    "clean": ("lost_agents", "wall_s", "efficiency", "cpu_ms_per_turn"),
    "faults": ("lost_agents", "wall_s", "efficiency", "cpu_ms_per_turn"),
    "faults-short": ("lost_agents", "wall_s", "efficiency", "cpu_ms_per_turn"),
    "scale-faults": ("lost_agents", "wall_s", "efficiency", "cpu_ms_per_turn"),
}


def print_table(name: str, table: dict[str, dict[str, float]]) -> None:
    modes = list(table)
    print(f"\n{name}: {SCENARIOS[name]}")
    print(f"{'figure':<22}" + "".join(f"{mode:>22}" for mode in modes))
    for row in ROWS[name]:
        print(f"{row:<22}" + "".join(f"{table[mode][row]:>22.3f}" for mode in modes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a tenth of the agents")
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of older code (e.g. `git worktree add /tmp/before main`): each corral "
        f"mode also runs from it, as MODE{BEFORE}, interleaved with the others",
    )
    args = parser.parse_args()
    modes = args.modes.split(",")
    if args.before is not None:
        modes += [m + BEFORE for m in modes if not m.startswith("sdk")]
    names = args.scenarios.split(",")
    if unknown := [name for name in names if name not in SCENARIOS]:
        parser.error(f"unknown scenarios {unknown}; choose from {', '.join(SCENARIOS)}")
    tables: dict[str, dict[str, dict[str, float]]] = {}
    divide = 10 if args.quick else 1
    for group in twin_groups(names):
        run = run_scenarios(group, modes, args.repeat, divide, args.loop, args.before)
        for name, table in run.items():
            print_table(name, table)
        tables |= run
    print_fault_ratios(tables)
    print_goals(tables)


def twin_groups(names: list[str]) -> list[list[str]]:
    """`names` in groups run together: each faulty scenario with its fault-free twin, when
    both are asked for; every other scenario alone. Groups keep the order asked for."""
    groups: dict[str, list[str]] = {}
    for name in names:
        twin = FAULTY_TWINS.get(name)
        key = twin if twin in names else name
        groups.setdefault(key, []).append(name)
    return list(groups.values())


def print_fault_ratios(tables: dict[str, dict[str, dict[str, float]]]) -> None:
    """Per mode, a faulty scenario's efficiency over its fault-free twin's (medians of each)."""
    pairs = [(f, c) for f, c in FAULTY_TWINS.items() if f in tables and c in tables]
    for faulty, clean in pairs:
        print(f"\n{faulty} efficiency over {clean}'s (goal: at least 0.8)")
        for mode, figures in tables[faulty].items():
            base = tables[clean][mode]["efficiency"]
            ratio = figures["efficiency"] / base if base else 0.0
            print(f"{mode:<22}{ratio:>10.3f}   agents lost {figures['lost_agents']:.0f}")


if __name__ == "__main__":
    main()
