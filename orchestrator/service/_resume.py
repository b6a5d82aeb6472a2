"""Carrying on an exec run a stopped server left unfinished, through the journal's resume.

The same function as `corral resume`: the run is rebuilt agent by agent and carried on. Fan-outs
(and the review and triage pipelines on top of them) need none of this: started again under the
same run id with the same inputs, they carry on what the journal holds and rebuild their report.
A refactor cannot be carried on: its worktrees are gone.
"""

from __future__ import annotations

from dataclasses import replace

from corral.agents import CorralConfig, ItemRecord, RunRecord, Store

from ..fanout import FanoutSettings
from ..runs import NotResumable, RunSetup, resume_single
from ..supervisor import collab_tool_providers
from ._models import FanoutRequest


async def resume_run(run_id: str, *, config: CorralConfig, setup: RunSetup, store: Store) -> None:
    """Carry journaled exec run `run_id` on to its end; `NotResumable` for other kinds."""
    record = await store.get_run(run_id)
    kind = record.kind if record is not None else "unjournaled"
    if kind != "exec":
        raise NotResumable(
            f"run {run_id} is a {kind} run, which cannot be carried on after a restart; "
            "submit it again"
        )
    # Any run may hold workers; a tool is only built for agents whose spec names it.
    setup = replace(setup, tool_providers=collab_tool_providers())
    await resume_single(config, run_id, setup=setup)


def journaled_fanout(record: RunRecord, items: list[ItemRecord]) -> FanoutRequest:
    """The request a journaled fan-out was started with, rebuilt from its settings and items,
    so a retry of its failed items runs with the same folder, template and schema."""
    settings = FanoutSettings.model_validate(record.config)
    return FanoutRequest.model_validate(
        {
            "kind": "fanout",
            "items": [item.input for item in items],
            "template": settings.template,
            "schema": settings.result_schema,
            "cd": settings.cwd,
            "concurrency": settings.concurrency,
            "max_result_tries": settings.max_result_tries,
            "run_id": record.run_id,
        }
    )
