"""Compaction stalls: how long agents wait on a summary between their tools and their next turn.

Each agent works through numbered steps; every step is one tool call that takes `--tool-ms` and
returns a few thousand tokens, so the context fills up and is compacted several times. The
scripted model server (its own process) answers every request, summaries included, after
`--latency-ms`. All summaries share one `Compactor`. The stall of a step is the time from its
tool's end to the start of the agent's next regular model request. It is measured twice: with
compaction at the threshold only (as Codex does), and with early background compaction. Run
from the repo root:

    .venv/bin/python -m benchmarks.compaction_stall --agents 16 --latency-ms 300 --tool-ms 300
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

from corral.agents import (
    AgentCore,
    AgentRecord,
    AgentRunner,
    CoreConfig,
    EnvironmentContext,
    FunctionCall,
    MemoryStore,
    ModelRequest,
    ModelSettings,
    RunnerHooks,
    RunRecord,
    TurnContext,
    UserInput,
    open_model_client,
)
from corral.agents._fragments import SUMMARIZATION_PROMPT
from corral.orchestrator.services.compaction import Compactor
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry

from ._server import model_server as serve_policy

WINDOW = 32_000
OUTPUT_TOKENS = 3_000
_STEP = re.compile(r"\[step (\d+)\]")


def policy(request: dict[str, Any]) -> Any:
    """Summaries name the last step done; otherwise do the next step, or finish."""
    done = max((int(s) for s in _STEP.findall(json.dumps(request["input"]))), default=0)
    last = request["input"][-1] if request["input"] else {}
    if _text_of(last) == SUMMARIZATION_PROMPT:
        return f"Handoff: steps 1 to {done} are done [step {done}]; continue with the next."
    steps = int(request["metadata"].get("steps", "0"))
    if done >= steps:
        return f"all {steps} steps done"
    arguments = json.dumps({"step": done + 1})
    return [{"type": "function_call", "name": "work", "arguments": arguments}]


def _text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class StepArgs(BaseModel):
    step: int


@dataclass
class Stalls:
    """Tool ends and the model requests that follow them, per agent."""

    runners: dict[str, AgentRunner] = field(default_factory=dict)
    tool_end: dict[str, tuple[float, int]] = field(default_factory=dict)
    all: list[float] = field(default_factory=list)
    at_compaction: list[float] = field(default_factory=list)


class StallHooks(RunnerHooks):
    def __init__(self, stalls: Stalls) -> None:
        self.stalls = stalls

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        compactions = self.stalls.runners[agent_id].core.compactions
        self.stalls.tool_end[agent_id] = (time.perf_counter(), compactions)

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        ended = self.stalls.tool_end.pop(agent_id, None)
        if ended is None:
            return
        stall = time.perf_counter() - ended[0]
        self.stalls.all.append(stall)
        if self.stalls.runners[agent_id].core.compactions != ended[1]:
            self.stalls.at_compaction.append(stall)


@dataclass(frozen=True)
class Scenario:
    agents: int
    steps: int
    tool_s: float
    capacity: int
    early_percent: int | None


async def run_scenario(scenario: Scenario, base_url: str) -> dict[str, Any]:
    store, stalls = MemoryStore(), Stalls()
    compactor = Compactor(max_concurrent=scenario.capacity)
    settings = ModelSettings.resolve(env={}, model="scripted", base_url=base_url)
    model = open_model_client(settings)
    await store.create_run(
        RunRecord(run_id="b", kind="bench", status="running", created_at=0, updated_at=0, config={})
    )
    started = time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for n in range(scenario.agents):
                runner = await _runner(n, scenario, store, model, compactor, stalls)
                group.start_soon(_drive, runner)
    finally:
        await model.aclose()
    return {
        "makespan": time.perf_counter() - started,
        "stalls": stalls,
        "compactor": compactor.stats,
        "compactions": sum(r.core.compactions for r in stalls.runners.values()),
    }


async def _runner(
    n: int,
    scenario: Scenario,
    store: MemoryStore,
    model: Any,
    compactor: Compactor,
    stalls: Stalls,
) -> AgentRunner:
    agent_id = f"agent-{n}"
    await store.create_agent(_record(agent_id))
    config = CoreConfig(
        agent_id=agent_id,
        model="scripted",
        instructions="Do the numbered steps with the work tool, one at a time.",
        context_window=WINDOW,
        early_compact_percent=scenario.early_percent,
        metadata={"steps": str(scenario.steps)},
    )
    registry = ToolRegistry([_work_tool(scenario.tool_s)])
    config = CoreConfig(**{**config.__dict__, "tools": tuple(registry.responses_tools())})
    runner = AgentRunner(
        core=AgentCore(config),
        model=model,
        registry=registry,
        tool_context=ToolContext(cwd=Path.cwd(), profile=PermissionProfile()),
        store=store,
        hooks=StallHooks(stalls),
        compaction_gate=compactor,
    )
    stalls.runners[agent_id] = runner
    return runner


def _work_tool(seconds: float) -> Tool[StepArgs]:
    async def work(args: StepArgs, ctx: ToolContext) -> ToolOutput:
        await anyio.sleep(seconds)  # the tool's own work, simulated
        return ToolOutput(f"[step {args.step}] " + "result " * (OUTPUT_TOKENS * 4 // 7))

    return Tool("work", "does one numbered step", StepArgs, work)


async def _drive(runner: AgentRunner) -> None:
    env = EnvironmentContext(
        cwd=Path("/w"), shell="bash", current_date="2026-11-29", timezone="Etc/UTC"
    )
    perms = "<permissions instructions>workspace-write</permissions instructions>"
    task = UserInput(text="Do every step.", context=TurnContext(environment=env, permissions=perms))
    finish = await runner.drive(await runner.feed(task))
    if finish.error is not None:
        raise RuntimeError(f"{runner.agent_id} ended with: {finish.error}")


def _record(agent_id: str) -> AgentRecord:
    return AgentRecord(
        agent_id=agent_id,
        run_id="b",
        parent_id=None,
        nickname=agent_id,
        role="general",
        status="running",
        created_at=0,
        updated_at=0,
        base_instructions="",
        config={},
    )


def model_server(latency_ms: int) -> AbstractContextManager[str]:
    return serve_policy("benchmarks.compaction_stall:policy", "--latency-ms", str(latency_ms))


def _ms(values: list[float], pick: str) -> str:
    if not values:
        return "-"
    if pick == "mean":
        return f"{1000 * statistics.fmean(values):.0f}"
    if pick == "max":
        return f"{1000 * max(values):.0f}"
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]:.0f}"


def table_row(label: str, figures: dict[str, Any]) -> str:
    stalls: Stalls = figures["stalls"]
    stats = figures["compactor"]
    cells = [
        label,
        str(len(stalls.all)),
        f"{figures['compactions']} ({stats.foreground_done} fg, {stats.background_done} bg, "
        f"{stats.hurried} hurried)",
        _ms(stalls.all, "mean"),
        _ms(stalls.all, "p95"),
        _ms(stalls.at_compaction, "mean"),
        _ms(stalls.at_compaction, "p95"),
        _ms(stalls.all, "max"),
        f"{figures['makespan']:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| mode | steps | compactions | mean stall ms | p95 stall ms "
    "| mean at compaction ms | p95 at compaction ms | max ms | makespan s |\n"
    "|---|---:|---|---:|---:|---:|---:|---:|---:|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--latency-ms", type=int, default=300)
    parser.add_argument("--tool-ms", type=int, default=300)
    parser.add_argument("--capacity", type=int, default=4, help="summaries at once")
    parser.add_argument("--early-percent", type=int, default=80)
    args = parser.parse_args()
    modes = [
        ("at the threshold (90%)", None),
        (f"early ({args.early_percent}%)", args.early_percent),
    ]
    rows = []
    with model_server(args.latency_ms) as url:
        for label, early in modes:
            scenario = Scenario(args.agents, args.steps, args.tool_ms / 1000, args.capacity, early)
            rows.append(table_row(label, anyio.run(run_scenario, scenario, url)))
    print(
        f"{args.agents} agents x {args.steps} steps; window {WINDOW} tokens, "
        f"~{OUTPUT_TOKENS} tokens per tool output; model latency {args.latency_ms} ms, "
        f"tools {args.tool_ms} ms; compactor capacity {args.capacity}\n"
    )
    print(HEADER)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
