"""What each run kind does when the server executes it: the same functions the CLI calls.

`execute` is the one dispatch from a validated request to `run_single_agent`, `run_fanout` or a
pipeline (`run_pipeline`: review, refactor, triage); handlers and the run manager never call
those themselves.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from corral.agents import CorralConfig, Store, open_sqlite_store

from ..fanout import run_fanout
from ..runs import RunSetup, journal_path, run_single_agent
from ..supervisor import collab_tool_providers
from ._models import ExecRequest, FanoutRequest, PipelineRequest
from ._pipelines import run_pipeline

ServiceRequest = ExecRequest | FanoutRequest | PipelineRequest
"""Every request kind the server executes."""


async def execute(
    request: ServiceRequest,
    *,
    config: CorralConfig,
    cwd: Path,
    setup: RunSetup,
    run_id: str,
    store: Store | None = None,
) -> None:
    """Carry out a new run of `request` under `run_id`, journaling it as the CLI would.

    A pipeline's report is kept in `store` (by default the journal `config` names)."""
    if isinstance(request, ExecRequest):
        if request.role == "supervisor":
            setup = replace(setup, tool_providers=collab_tool_providers())
        await run_single_agent(
            config, request.task, cwd=cwd, setup=setup, run_id=run_id, role=request.role
        )
    elif isinstance(request, FanoutRequest):
        await run_fanout(
            config,
            request.items,
            request.template,
            request.result_schema,
            cwd=cwd,
            setup=setup,
            concurrency=request.concurrency,
            run_id=run_id,
            max_result_tries=request.max_result_tries,
        )
    elif store is not None:
        await run_pipeline(request, config=config, cwd=cwd, setup=setup, run_id=run_id, store=store)
    else:
        async with open_sqlite_store(journal_path(config)) as journal:
            await run_pipeline(
                request, config=config, cwd=cwd, setup=setup, run_id=run_id, store=journal
            )
