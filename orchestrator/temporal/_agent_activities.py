"""The activities of exec runs on Temporal: the run's record, its agents' setup and endings.

Spawning a worker builds its spec with the supervisor's own code (`child_spec`, its narrowed
profile, its `<subagent_context>`), and preparing an agent gives it the worker's MCP tools and
the skills matched to its task, so an agent on Temporal gets exactly what it would locally.
Preparing an agent, reading its turn context and remembering a completed run run on its host
(where its folder, and so its project, is); the rest on any worker.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from temporalio import activity

from corral.agents import (
    AgentCore,
    AgentSpec,
    RunRecord,
    Store,
    UserInput,
    replay_core,
)
from corral.tools import InvalidInput, SandboxMode

from .._run import assemble_agent, first_input, render_subagent_context, turn_context
from ..fanout._remember import Workers, remember_workers
from ..runs import ExecJob
from ..supervisor import SpawnRequest, SpawnTerms, child_spec
from ..supervisor._spawn import peer_of
from ..supervisor._tools import SpawnAgentArgs
from ._heartbeat import heartbeating
from ._journal import journal_agent, write_batch
from ._lifecycle import hook_events, journaled_opening
from ._services import WorkerServices
from ._wire import (
    AgentEndedInput,
    ExecRunInput,
    PreparedAgent,
    PrepareSpecInput,
    RememberFanoutInput,
    RememberInput,
    RunStatusInput,
    SpawnedSpec,
    SpawnSpecInput,
    TurnContextInput,
    WireSpec,
)


class AgentActivities:
    """The exec-run activities, bound to one worker's services."""

    def __init__(self, services: WorkerServices) -> None:
        self.services = services

    @property
    def shared(self) -> list[Any]:
        return [self.begin_exec, self.set_run_status, self.spawn_spec, self.agent_ended]

    @property
    def on_host(self) -> list[Any]:
        return [self.prepare_spec, self.turn_context, self.remember_run, self.remember_fanout]

    @activity.defn(name="corral.begin_exec")
    async def begin_exec(self, run: ExecRunInput) -> None:
        """The run's record, as `corral exec` journals it, unless a retry wrote it already."""
        store = self.services.store
        if await store.get_run(run.run_id) is not None:
            return
        now = time.time()
        root = run.root
        job = ExecJob(task=root.task, cwd=root.spec.cwd, role=run.role, run_id=run.run_id)
        record = RunRecord(
            run_id=run.run_id,
            kind=job.kind,
            status="running",
            created_at=now,
            updated_at=now,
            config=job.model_dump(mode="json"),
        )
        await store.create_run(record)

    @activity.defn(name="corral.set_run_status")
    async def set_run_status(self, status: RunStatusInput) -> None:
        await self.services.store.update_run(
            status.run_id, status=status.status, updated_at=time.time()
        )

    @activity.defn(name="corral.prepare_spec")
    async def prepare_spec(self, prepare: PrepareSpecInput) -> PreparedAgent:
        spec = self.services.spec_of(prepare.spec)
        store = self.services.store
        async with heartbeating():
            skills = await self.services.skills_for(spec, prepare.task)
            task = await first_input(
                spec,
                prepare.task,
                subagent_context=prepare.subagent_context,
                skills=skills.listing,
                attachments=skills.attachments,
            )
            task = await self._with_memory(spec, task)
        await journal_agent(store, spec, prepare.task)
        services = self.services.agent_services(None, prepare.limits.agents())
        core = assemble_agent(spec, services).core
        return await opened_agent(self.services, spec, core, task)

    async def _with_memory(self, spec: AgentSpec, task: UserInput) -> UserInput:
        """The first turn with the memories recalled for its task, as a local run has it."""
        memory = self.services.memory
        if memory is None:
            return task
        fragment = await memory.recall(spec, task.text, ())
        context = task.context.model_copy(update={"memory": fragment})
        return task.model_copy(update={"context": context})

    @activity.defn(name="corral.turn_context")
    async def turn_context(self, turn: TurnContextInput) -> dict[str, Any]:
        spec = self.services.spec_of(turn.spec)
        skills = await _journaled_skills(self.services.store, spec.agent_id)
        context = await turn_context(spec, turn.subagent_context, skills)
        if self.services.memory is not None:
            fragment = await self.services.memory.recall(spec, turn.query, ())
            context = context.model_copy(update={"memory": fragment})
        dumped: dict[str, Any] = context.model_dump(mode="json")
        return dumped

    @activity.defn(name="corral.remember_run")
    async def remember_run(self, remember: RememberInput) -> None:
        """Once, on the root's host, after a run completed: what it learned goes to memory
        (the same extraction as a local run's, from its history rebuilt from the journal),
        within the worker's `extraction_timeout_sec`. Memory's own boundary contains failures."""
        memory = self.services.memory
        if memory is None:
            return
        spec = self.services.spec_of(remember.spec)
        services = self.services.agent_services(None, remember.limits.agents())
        core = await replay_core(self.services.store, assemble_agent(spec, services).core.config)
        client = self.services.clients.client_for(spec.model)
        with anyio.move_on_after(self.services.config.memories.extraction_timeout_sec):
            async with heartbeating():
                await memory.after_run(spec, remember.task, core.history, client)

    @activity.defn(name="corral.remember_fanout")
    async def remember_fanout(self, remember: RememberFanoutInput) -> None:
        """Once, on a host of the run's workers, after every item of a fan-out is done: what
        the workers learned goes to memory, as a local fan-out's does (`fanout._remember`)."""
        memory = self.services.memory
        if memory is None:
            return
        prototype = self.services.spec_of(remember.worker)
        workers = Workers(self.services.store, remember.run_id, prototype, remember.template)
        client = self.services.clients.client_for(prototype.model)
        with anyio.move_on_after(self.services.config.memories.extraction_timeout_sec):
            async with heartbeating():
                await remember_workers(memory, workers, client)

    @activity.defn(name="corral.spawn_spec")
    async def spawn_spec(self, spawn: SpawnSpecInput) -> SpawnedSpec:
        """The worker's spec, or the reason it may not start (the model is told)."""
        parent = self.services.spec_of(spawn.parent)
        try:
            args = SpawnAgentArgs.model_validate(spawn.request)
            request = SpawnRequest(
                message=args.message,
                role=args.role or "general",
                model=args.model,
                sandbox=SandboxMode(args.sandbox) if args.sandbox else None,
                write_set=tuple(args.write_set or ()),
                allowed_domains=None
                if args.allowed_domains is None
                else tuple(args.allowed_domains),
            )
            spec = child_spec(_spawn_terms(spawn), parent, request)
        except InvalidInput as exc:
            return SpawnedSpec(refused=str(exc))
        siblings = [peer_of(self.services.spec_of(s)) for s in spawn.siblings]
        context = render_subagent_context(
            me=peer_of(spec), parent=peer_of(parent), task=request.message, siblings=siblings
        )
        if spawn.queued:  # journaled now, as locally: it waits in the run's tree, `pending`
            await journal_agent(self.services.store, spec, request.message, queued=True)
        return SpawnedSpec(spec=WireSpec.of(spec), subagent_context=context)

    @activity.defn(name="corral.agent_ended")
    async def agent_ended(self, ended: AgentEndedInput) -> None:
        """Journal an agent's pending events and the status its turn (or its close) left."""
        store = self.services.store
        await write_batch(store, ended.journal)
        await store.update_agent(
            ended.agent_id,
            status=ended.status,
            final_message=ended.message,
            error=ended.error,
            usage=ended.usage,
            cost_usd=ended.cost_usd,
            updated_at=time.time(),
        )


async def _journaled_skills(store: Store, agent_id: str) -> str | None:
    """The skills listing chosen at the agent's start, kept in every later turn's context (as
    locally) so a compaction puts it back."""
    for record in await store.events(agent_id):
        if record.kind == "user_input":
            skills = (record.payload.get("context") or {}).get("skills")
            return skills if isinstance(skills, str) else None
    return None


def _spawn_terms(spawn: SpawnSpecInput) -> SpawnTerms:
    """The run's limits and personality, and the nickname the workflow chose (so a retry
    picks the same)."""
    limits = spawn.limits
    return SpawnTerms(limits.agents(), limits.personality, lambda: spawn.nickname)


async def opened_agent(
    services: WorkerServices, spec: AgentSpec, core: AgentCore, first: UserInput
) -> PreparedAgent:
    """An assembled agent as the workflow receives it: its tools remembered for the tool
    activities, its start hooks fired on `first` and journaled (once, however often retried)."""
    services.remember_tools(spec.agent_id, core.config.tools)
    hooks = services.config.hooks
    opening = await journaled_opening(hooks, services.store, spec, first)
    return PreparedAgent(
        spec=WireSpec.of(spec),
        core_config=core.config.to_data(),
        first_event=opening.first,
        max_wall_time_s=spec.budgets.max_wall_time_s,
        max_cost_usd=spec.budgets.max_cost_usd,
        notes=opening.notes,
        blocked=opening.blocked,
        hook_events=hook_events(hooks),
    )
