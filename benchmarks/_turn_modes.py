"""The drivers `benchmarks.turns` compares, each run in a process of its own.

Every driver runs the same workload against the same server: about 2 KB of instructions, one
tool `step(x)`, streamed Responses turns until the model stops calling it. The bare `openai` SDK
drivers are the floor: a loop a Python user would write, once through `responses.create` and once
through the SDK's low-level `post` (its request transform skipped). The corral drivers run agents
through corral as a Python user would: `corral.run_agents` (each agent its own journaled run) and
one run's runtime holding every agent, over the SQLite journal or its in-memory twin. Run one as

    python -m benchmarks._turn_modes MODE BASE_URL AGENTS CONCURRENCY [LOOP [KEY=VALUE...]]

which prints one JSON line: client CPU seconds and wall seconds of the timed window, turns done,
agents that did not finish, and RSS after start-up and at its peak.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from ._fanout_modes import PROCESS_MODES
from ._workload import INSTRUCTIONS, MODEL

STEP_SCHEMA = {
    "type": "object",
    "properties": {"x": {"type": "integer"}},
    "required": ["x"],
    "additionalProperties": False,
}
TURNS_PER_AGENT = 5
"""Four tool turns, then the final answer (the server's policy decides)."""


def step(x: int) -> int:
    """Advance the counter: returns x + 1."""
    return x + 1


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- the bare SDK -------------------------------------------------------------------------------


def _sdk_client(base_url: str) -> Any:
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=2)


def _sdk_tools() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": "step",
            "description": step.__doc__,
            "parameters": STEP_SCHEMA,
            "strict": True,
        }
    ]


async def _sdk_agent(client: Any, index: int, *, raw: bool) -> int:
    """One agent's loop with the SDK; returns the turns it completed."""
    from openai import AsyncStream

    conversation: list[dict[str, Any]] = [{"role": "user", "content": f"Start at {index}."}]
    body: dict[str, Any] = {
        "model": MODEL,
        "instructions": INSTRUCTIONS,
        "tools": _sdk_tools(),
        "stream": True,
        "store": False,
        "prompt_cache_key": f"sdk-{os.getpid()}-{index}",
    }
    for turn in range(1, TURNS_PER_AGENT + 1):
        if raw:
            stream = await client.post(
                "/responses",
                cast_to=object,
                body={**body, "input": conversation},
                stream=True,
                stream_cls=AsyncStream[object],
            )
        else:
            stream = await client.responses.create(**body, input=conversation)
        calls = []
        async for event in stream:
            kind = event["type"] if raw else event.type
            if kind == "response.output_item.done":
                item = event["item"] if raw else event.item.model_dump(exclude_none=True)
                if item.get("type") == "function_call":
                    calls.append(item)
        if not calls:
            return turn
        for call in calls:
            result = step(**json.loads(call["arguments"]))
            conversation.append(
                {
                    "type": "function_call",
                    "call_id": call["call_id"],
                    "name": call["name"],
                    "arguments": call["arguments"],
                }
            )
            conversation.append(
                {"type": "function_call_output", "call_id": call["call_id"], "output": str(result)}
            )
    return TURNS_PER_AGENT


async def _sdk_run(base_url: str, agents: int, concurrency: int, *, raw: bool) -> dict[str, Any]:
    client = _sdk_client(base_url)
    slots = anyio.CapacityLimiter(concurrency)
    done = [0] * agents

    async def one(index: int) -> None:
        async with slots:
            try:
                done[index] = await _sdk_agent(client, index, raw=raw)
            except Exception:  # an agent the bare loop loses is what this benchmark counts
                done[index] = -1

    async with anyio.create_task_group() as tg:
        for index in range(agents):
            tg.start_soon(one, index)
    await client.close()
    turns = sum(max(d, 0) for d in done)
    return {"turns": turns, "lost_agents": sum(1 for d in done if d != TURNS_PER_AGENT)}


# -- corral ---------------------------------------------------------------------------------------


SETTINGS: list[str] = []
"""Extra corral settings from the command line (`key=value`)."""


def _config(base_url: str, home: Path) -> Any:
    from corral import load_config

    return load_config(
        home,
        env={"CORRAL_HOME": str(home), "OPENAI_API_KEY": "bench", "HOME": str(home)},
        model=MODEL,
        base_url=base_url,
        base_instructions=INSTRUCTIONS,
        settings=("skills.enabled=false", *SETTINGS),
    )


def _tasks(agents: int) -> list[str]:
    return [f"Start at {index}." for index in range(agents)]


async def _run_agents(base_url: str, agents: int, concurrency: int, home: Path) -> dict[str, Any]:
    import corral

    config = _config(base_url, home)
    outcomes = await corral.run_agents(
        _tasks(agents),
        tools=[corral_tool()],
        cwd=home,
        config=config,
        concurrency=concurrency,
        env={},
    )
    lost = sum(1 for o in outcomes if str(o.finish.status) != "completed")
    return {"turns": (agents - lost) * TURNS_PER_AGENT, "lost_agents": lost}


async def _runtime(
    base_url: str, agents: int, concurrency: int, home: Path, *, memory: bool
) -> dict[str, Any]:
    """Every agent in one run's runtime, `concurrency` at a time: the journal's share alone."""
    from corral.agents import MemoryStore, RunRecord, Store, open_sqlite_store
    from corral.orchestrator._ratelimit import RateLimiterRegistry
    from corral.orchestrator._run import ClientPool, RuntimeOptions, open_runtime
    from corral.orchestrator.runs._setup import build_root_spec, journal_path

    config = _config(base_url, home)
    tool = corral_tool()
    clients = ClientPool(RateLimiterRegistry.from_config(config))
    slots = anyio.CapacityLimiter(concurrency)
    statuses: list[str] = []
    async with AsyncExitStack() as stack:
        store: Store = (
            MemoryStore()
            if memory
            else await stack.enter_async_context(open_sqlite_store(journal_path(config)))
        )
        options = RuntimeOptions(
            config=config,
            store=store,
            run_id="run-bench",
            clients=clients,
            tool_providers={"step": lambda scope: tool},
        )
        now = time.time()
        await store.create_run(
            RunRecord(
                run_id="run-bench",
                kind="exec",
                status="running",
                created_at=now,
                updated_at=now,
                config={},
            )
        )
        runtime = await stack.enter_async_context(open_runtime(options))

        async def one(index: int) -> None:
            async with slots:
                spec = build_root_spec(
                    config, cwd=home, env={}, run_id="run-bench", extra_tools=("step",)
                )
                handle = await runtime.start(spec, f"Start at {index}.", stay_open=False)
                await handle.ended.wait()
                statuses.append(str(handle.status))

        async with anyio.create_task_group() as tg:
            for index in range(agents):
                tg.start_soon(one, index)
    await clients.aclose()
    lost = sum(1 for s in statuses if s != "completed")
    return {"turns": (agents - lost) * TURNS_PER_AGENT, "lost_agents": lost}


def corral_tool() -> Any:
    from corral import function_tool

    # `step` is quick pure computation: the docs (`docs/python.md`) tell users to declare such a
    # tool `blocking=False`, so the benchmark does what a user is told to do.
    return function_tool(step, blocking=False)


Driver = Callable[[str, int, int, Path], Awaitable[dict[str, Any]]]
MODES: dict[str, Driver] = {
    "sdk": lambda url, n, c, home: _sdk_run(url, n, c, raw=False),
    "sdk-raw": lambda url, n, c, home: _sdk_run(url, n, c, raw=True),
    "corral": _run_agents,
    "runtime-sqlite": lambda url, n, c, home: _runtime(url, n, c, home, memory=False),
    "runtime-memory": lambda url, n, c, home: _runtime(url, n, c, home, memory=True),
    **PROCESS_MODES,
}


PRELOADED = {
    "sdk": ("openai",),
    "corral": ("corral._api", "corral.orchestrator.runs"),
    "runtime": ("corral._api", "corral.orchestrator.runs", "corral.orchestrator._run"),
}


async def _measure(mode: str, base_url: str, agents: int, concurrency: int) -> dict[str, Any]:
    driver = MODES[mode]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        # Start-up, not turns: every driver's modules are imported before the timed window.
        for module in PRELOADED[mode.split("-")[0]]:
            importlib.import_module(module)
        rss_start = _rss_mb()
        cpu, wall = time.process_time(), time.perf_counter()
        figures = await driver(base_url, agents, concurrency, home)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {**figures, "cpu_s": cpu, "wall_s": wall, "rss_start_mb": rss_start}


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "bench")  # the scripted server takes any key
    mode, base_url, agents, concurrency = sys.argv[1:5]
    loop = sys.argv[5] if len(sys.argv) > 5 else "asyncio"
    SETTINGS.extend(sys.argv[6:])
    backend_options = {"use_uvloop": True} if loop == "uvloop" else {}
    figures = anyio.run(
        _measure, mode, base_url, int(agents), int(concurrency), backend_options=backend_options
    )
    print(json.dumps({**figures, "rss_peak_mb": _rss_mb()}))


if __name__ == "__main__":
    main()
