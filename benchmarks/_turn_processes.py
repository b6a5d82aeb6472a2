"""`benchmarks.turns`' fan-out modes: the same workload through corral's fan-out (`FanoutJob`, as
`corral fanout` runs it), its workers in one process or in two (`--processes`).

A fan-out's workers have the core tools and `report_result`, not the benchmark's `step`, so the
server's policy answers them with its own five turns (`fanout_answer`): three `update_plan`
calls, then `report_result`, then the final answer. The figures add what the worker processes
spent (their CPU, and the peak RSS of the largest one) and the scripted model server's CPU per
turn: it runs on the same cores, so it bounds the fan-out's wall time as much as the clients do.

    python -m benchmarks.turns --scenarios scale --modes corral-fanout-p1,corral-fanout-p2
    python -m benchmarks._turn_processes --repeat 3     # the same, with the workers' figures
    python -m benchmarks._turn_processes --before /tmp/before   # and against that server too
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

PLAN_TURNS = 3
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: update the plan three times, then report {n}."
MODEL = "bench-model"
TURNS_PER_AGENT = PLAN_TURNS + 2


def fanout_answer(request: dict[str, Any]) -> Any | None:
    """A fan-out worker's next answer, or None for a request that is not a fan-out worker's."""
    if not any(tool.get("name") == "report_result" for tool in request.get("tools", [])):
        return None
    calls = [i for i in request["input"] if i.get("type") == "function_call"]
    if len(calls) < PLAN_TURNS:
        plan = {"plan": [{"step": f"turn {len(calls) + 1}", "status": "in_progress"}]}
        return [{"type": "function_call", "name": "update_plan", "arguments": json.dumps(plan)}]
    if len(calls) == PLAN_TURNS:
        item = json.dumps(request["input"]).split("Item ", 1)[1].split(":", 1)[0]
        arguments = json.dumps({"n": int(item)})
        return [{"type": "function_call", "name": "report_result", "arguments": arguments}]
    return "reported"


def _children() -> tuple[float, float]:
    """CPU seconds of the reaped worker processes, and the peak RSS (MB) of the largest."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


async def _fanout(
    base_url: str, agents: int, concurrency: int, home: Path, processes: int
) -> dict[str, Any]:
    import corral
    from corral.orchestrator.fanout import run_fanout
    from corral.orchestrator.runs import FanoutJob, RunSetup

    from ._turn_modes import INSTRUCTIONS

    config = corral.load_config(
        home,
        env={"CORRAL_HOME": str(home), "OPENAI_API_KEY": "bench", "HOME": str(home)},
        model=MODEL,
        base_url=base_url,
        base_instructions=INSTRUCTIONS,
        settings=("skills.enabled=false",),
    )
    before, _ = _children()
    # `corral.run_fanout` chooses the processes itself; the job says how many, as `--processes`.
    job = FanoutJob(
        items=tuple({"n": n} for n in range(agents)),
        template=TEMPLATE,
        result_schema=SCHEMA,
        cwd=home,
        concurrency=concurrency,
        processes=processes,
    )
    outcome = await run_fanout(config, job, RunSetup(env={"OPENAI_API_KEY": "bench"}))
    cpu, rss = _children()
    lost = agents - outcome.done
    return {
        "turns": outcome.done * TURNS_PER_AGENT,
        "lost_agents": lost,
        "workers_cpu_s": cpu - before,
        "workers_rss_peak_mb": rss if processes > 1 else 0.0,
    }


def _mode(processes: int) -> Callable[[str, int, int, Path], Awaitable[dict[str, Any]]]:
    return lambda url, n, c, home: _fanout(url, n, c, home, processes)


PROCESS_MODES = {"corral-fanout-p1": _mode(1), "corral-fanout-p2": _mode(2)}


def main() -> None:
    from contextlib import ExitStack

    from ._server import model_server, server_cpu
    from .turns import SCENARIOS, TURNS, run_worker

    parser = argparse.ArgumentParser(description="fan-out in 1 and 2 processes: scale scenario")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agents", type=int, default=SCENARIOS["scale"].agents)
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of older code: its model server also serves each mode, as "
        "MODE@server-before, interleaved (the clients are this checkout's)",
    )
    args = parser.parse_args()
    scenario = SCENARIOS["scale"]
    options = ("--latency-ms", str(scenario.latency_ms))
    servers = {"": None} if args.before is None else {"": None, "@server-before": args.before}
    runs: dict[str, list[dict[str, Any]]] = {}
    with ExitStack() as stack:
        urls = {
            tag: stack.enter_context(model_server("benchmarks.turns:policy", *options, code=code))
            for tag, code in servers.items()
        }
        for _ in range(args.repeat):
            for mode in PROCESS_MODES:
                for tag, url in urls.items():
                    served = server_cpu(url)
                    figures = run_worker(mode, url, scenario, args.agents, "asyncio", None)
                    figures["server_cpu_s"] = server_cpu(url) - served
                    runs.setdefault(mode + tag, []).append(figures)
    ideal = -(-args.agents // scenario.concurrency) * TURNS * scenario.latency_ms / 1000
    print(
        f"scale: {args.agents} agents x {TURNS} turns, {scenario.concurrency} at a time, "
        f"{scenario.latency_ms} ms; ideal {ideal:g} s; medians of {args.repeat}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    rows = ("wall_s", "efficiency", "cpu_ms_per_turn", "server_cpu_ms_per_turn", "lost_agents",
            "rss_peak_mb", "workers_rss_peak_mb")  # fmt: skip
    print(f"{'figure':<22}" + "".join(f"{mode:>32}" for mode in runs))
    table = {mode: _figures(figures, ideal) for mode, figures in runs.items()}
    for row in rows:
        print(f"{row:<22}" + "".join(f"{table[mode][row]:>32.3f}" for mode in runs))


def _figures(runs: list[dict[str, Any]], ideal: float) -> dict[str, float]:
    def median(pick: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(pick(run) for run in runs)

    wall = median(lambda r: r["wall_s"])
    return {
        "wall_s": wall,
        "efficiency": ideal / wall,
        "cpu_ms_per_turn": median(
            lambda r: 1000 * (r["cpu_s"] + r["workers_cpu_s"]) / max(r["turns"], 1)
        ),
        "server_cpu_ms_per_turn": median(lambda r: 1000 * r["server_cpu_s"] / max(r["turns"], 1)),
        "lost_agents": median(lambda r: r["lost_agents"]),
        "rss_peak_mb": median(lambda r: r["rss_peak_mb"]),
        "workers_rss_peak_mb": median(lambda r: r["workers_rss_peak_mb"]),
    }


if __name__ == "__main__":
    main()
