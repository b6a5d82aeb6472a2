"""What each run kind does when the server executes it: the same functions the CLI calls.

`execute` is the one dispatch from a validated request to a job on the run's executor (exec,
fanout) or a pipeline (`run_pipeline`: review, refactor, triage, whose fan-outs go to the same
executor); handlers and the run manager never call those themselves.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from corral.agents import CorralConfig, Store, open_store

from ..runs import ExecJob, FanoutJob, RunSetup, executor_of
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
    executor = executor_of(setup)
    if isinstance(request, ExecRequest):
        if request.role == "supervisor":
            setup = replace(setup, tool_providers=collab_tool_providers())
        job = ExecJob(task=request.task, cwd=cwd, run_id=run_id, role=request.role)
        await executor.run(job, setup, config)
    elif isinstance(request, FanoutRequest):
        fanout = FanoutJob(
            items=tuple(request.items),
            template=request.template,
            result_schema=request.result_schema,
            cwd=cwd,
            concurrency=request.concurrency,
            run_id=run_id,
            max_result_tries=request.max_result_tries,
        )
        await executor.run(fanout, setup, config)
    elif store is not None:
        await run_pipeline(request, config=config, cwd=cwd, setup=setup, run_id=run_id, store=store)
    else:
        async with open_store(config) as journal:
            await run_pipeline(
                request, config=config, cwd=cwd, setup=setup, run_id=run_id, store=journal
            )
