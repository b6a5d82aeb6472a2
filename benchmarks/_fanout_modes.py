"""The fan-out modes of `benchmarks.turns`: the same workload through corral's fan-out
(`FanoutJob`, as `corral fanout` runs it), its workers in one process or in two (`--processes`).

A fan-out's workers have the core tools and `report_result`, not the benchmark's `step`, so the
server's policy answers them with its own five turns (`fanout_answer`): three `update_plan`
calls, then `report_result`, then the final answer. Besides the figures of every mode, a run
reports what the worker processes spent (their CPU, and the peak RSS of the largest one).
"""

from __future__ import annotations

import json
import resource
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ._workload import INSTRUCTIONS, MODEL

PLAN_TURNS = 3
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: update the plan three times, then report {n}."
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


async def drive_fanout(
    base_url: str, agents: int, concurrency: int, home: Path, processes: int
) -> dict[str, Any]:
    import corral
    from corral.orchestrator.fanout import run_fanout
    from corral.orchestrator.runs import FanoutJob, RunSetup

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
    return lambda url, n, c, home: drive_fanout(url, n, c, home, processes)


PROCESS_MODES = {"corral-fanout-p1": _mode(1), "corral-fanout-p2": _mode(2)}
