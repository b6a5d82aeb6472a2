"""Carrying on a run a stopped server left unfinished, through the journal's resume.

The same functions as `corral resume`: an exec run is rebuilt agent by agent and carried on; a
fan-out (and the review and triage pipelines, which journal as fan-outs) keeps every finished
item and carries the others on. A refactor cannot be carried on: its worktrees are gone.
"""

from __future__ import annotations

from dataclasses import replace

from agents import CorralConfig, Store

from .._single import NotResumable, RunSetup, resume_single
from ..fanout import FANOUT, resume_fanout
from ..supervisor import collab_tool_providers


async def resume_run(run_id: str, *, config: CorralConfig, setup: RunSetup, store: Store) -> None:
    """Carry journaled run `run_id` on to its end; `NotResumable` for kinds that cannot be."""
    record = await store.get_run(run_id)
    kind = record.kind if record is not None else "unjournaled"
    if kind == "exec":
        # Any run may hold workers; a tool is only built for agents whose spec names it.
        setup = replace(setup, tool_providers=collab_tool_providers())
        await resume_single(config, run_id, setup=setup)
    elif kind == FANOUT:
        await resume_fanout(config, run_id, setup=setup)
    else:
        raise NotResumable(
            f"run {run_id} is a {kind} run, which cannot be carried on after a restart; "
            "submit it again"
        )
