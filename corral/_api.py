"""The few calls a Python user starts from: load the config, run one agent or many with their
own function tools, run a fan-out. Each is a thin door onto `corral.orchestrator`, which holds
the machinery; nothing here keeps state between calls."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from corral.agents import CorralConfig, open_sqlite_store
from corral.agents import load_config as _load_layers
from corral.orchestrator._ratelimit import RateLimiterRegistry
from corral.orchestrator._run import ClientPool, ToolScope
from corral.orchestrator.fanout import FanoutOutcome
from corral.orchestrator.runs import (
    ExecJob,
    FanoutJob,
    LocalExecutor,
    RunSetup,
    SingleOutcome,
    journal_path,
)
from corral.tools import Tool, function_tool

ToolLike = Tool[Any] | Callable[..., Any]
"""A `Tool`, or a plain Python function made into one by `function_tool`."""
DEFAULT_AGENTS_AT_ONCE = 8


def load_config(
    cwd: Path | str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    settings: Sequence[str] = (),
    **overrides: Any,
) -> CorralConfig:
    """The configuration a run in `cwd` would see: defaults, `$CORRAL_HOME/config.toml`, the
    project's `.corral/config.toml`, `CORRAL_*` variables, then `overrides` (top-level keys such
    as `model="gpt-5.4-mini"`, `base_url=...`) and `settings` (`"key=value"`, values in TOML)."""
    folder = Path(cwd) if cwd is not None else Path.cwd()
    return _load_layers(cwd=folder, env=env, overrides=overrides, cli_settings=settings).config


async def run_agent(
    task: str,
    *,
    tools: Sequence[ToolLike] = (),
    cwd: Path | str | None = None,
    config: CorralConfig | None = None,
    role: str = "general",
    env: Mapping[str, str] | None = None,
) -> SingleOutcome:
    """Run one agent on `task` with the core tools plus `tools`, and wait until it is done.

    The run is journaled like `corral exec`'s (`corral status RUN`, `corral resume RUN`)."""
    folder, config = _prepare(cwd, config, env)
    setup = RunSetup(env=env, tool_providers=_providers(tools))
    return await LocalExecutor().run(ExecJob(task=task, cwd=folder, role=role), setup, config)


async def run_agents(
    tasks: Sequence[str],
    *,
    tools: Sequence[ToolLike] = (),
    cwd: Path | str | None = None,
    config: CorralConfig | None = None,
    concurrency: int = DEFAULT_AGENTS_AT_ONCE,
    env: Mapping[str, str] | None = None,
) -> list[SingleOutcome]:
    """Run one agent per task, `concurrency` at a time, sharing one rate limiter per endpoint;
    the outcomes come back in the order of `tasks`."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    folder, config = _prepare(cwd, config, env)
    limiters = RateLimiterRegistry.from_config(config)
    # One journal connection and one client pool for all the runs: one writer commits every
    # run's writes in shared transactions, and connections are reused from run to run.
    clients = ClientPool(limiters)
    try:
        async with open_sqlite_store(journal_path(config)) as journal:
            setup = RunSetup(
                env=env,
                tool_providers=_providers(tools),
                limiters=limiters,
                clients=clients,
                journal=journal,
            )
            return await _run_each(tasks, folder, setup, config, concurrency)
    finally:
        await clients.aclose()


async def _run_each(
    tasks: Sequence[str], folder: Path, setup: RunSetup, config: CorralConfig, concurrency: int
) -> list[SingleOutcome]:
    outcomes: list[SingleOutcome | None] = [None] * len(tasks)
    slots = anyio.CapacityLimiter(concurrency)

    async def one(index: int, task: str) -> None:
        async with slots:
            job = ExecJob(task=task, cwd=folder)
            outcomes[index] = await LocalExecutor().run(job, setup, config)

    async with anyio.create_task_group() as tg:
        for index, task in enumerate(tasks):
            tg.start_soon(one, index, task)
    return [outcome for outcome in outcomes if outcome is not None]


async def run_fanout(
    items: Sequence[Mapping[str, Any]],
    template: str,
    schema: Mapping[str, Any],
    *,
    cwd: Path | str | None = None,
    config: CorralConfig | None = None,
    concurrency: int | None = None,
    out: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> FanoutOutcome:
    """One worker per item on `template` (`{field}` filled from the item), each handing in a
    result valid under the JSON Schema `schema`; as `corral fanout` does."""
    folder, config = _prepare(cwd, config, env)
    job = FanoutJob(
        items=tuple(items),
        template=template,
        result_schema=schema,
        cwd=folder,
        concurrency=concurrency,
        out=out,
    )
    return await LocalExecutor().run(job, RunSetup(env=env), config)


def _prepare(
    cwd: Path | str | None, config: CorralConfig | None, env: Mapping[str, str] | None
) -> tuple[Path, CorralConfig]:
    folder = Path(os.path.abspath(cwd if cwd is not None else Path.cwd()))
    return folder, config if config is not None else load_config(folder, env=env)


def _providers(tools: Sequence[ToolLike]) -> dict[str, Callable[[ToolScope], Tool[Any]]]:
    built = [tool if isinstance(tool, Tool) else function_tool(tool) for tool in tools]
    providers: dict[str, Callable[[ToolScope], Tool[Any]]] = {}
    for tool in built:
        if tool.name in providers:
            raise ValueError(f"two tools are named {tool.name!r}; give one of them another name")
        providers[tool.name] = _same(tool)
    return providers


def _same(tool: Tool[Any]) -> Callable[[ToolScope], Tool[Any]]:
    """A provider that gives every agent the caller's own tool."""

    def provide(scope: ToolScope) -> Tool[Any]:
        del scope
        return tool

    return provide
