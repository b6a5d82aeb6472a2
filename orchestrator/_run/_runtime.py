"""`RunRuntime`: many agents of one run under one task group.

It starts agents (a root, fan-out workers, spawned children), restores journaled ones, routes
messages between parents and children and cancels whole subtrees (`orchestrator.supervisor`
checks the depth limit). Workers past the thread limit wait in their parent's queue and start
as slots free (`_admission`). Each agent's loop of turns, its end (an agent whose driver raises
ends `failed` and its parent is told) and the run's shared budget are `AgentLives`' (`_life`).
Every agent uses the process's shared model clients (and through them the shared rate limiters)
and the one journal.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
from anyio.abc import TaskGroup

from corral.agents import (
    INTERRUPTED_FOR_INPUT,
    RUN_CANCELLED,
    AgentRunner,
    AgentSpec,
    AgentStatus,
    JournalEvent,
    RunnerLimits,
    SafeHooks,
    Usage,
    UserInput,
    Waiting,
    build_tool_context,
    event_to_payload,
    replay_core,
)
from corral.tools import InvalidInput, ToolRegistry

from .._collector import paced_collector
from . import _lifecycle as lifecycle
from ._admission import Capacity, capacity_of, no_more_input
from ._assemble import (
    AgentServices,
    assemble_agent,
    build_registry,
    first_input,
    host_abilities,
)
from ._handle import AT_ONCE, AgentHandle, FinishCallback, Restoring
from ._life import SHUTDOWN_TIMEOUT, AgentLives
from ._names import nickname
from ._notes import journaled_context, started_note
from ._options import RuntimeOptions
from ._sessions import open_sessions

PENDING = str(AgentStatus.PENDING)
CLOSED = "closed"
"""The journal's status of an agent that `close` shut down (a record status, not a core one)."""


class SpawnRefused(InvalidInput):
    """A spawn was refused: a limit was reached or the request was invalid."""


class RunRuntime(AgentLives):
    """Owns the agents of one run. Use `open_runtime`; never outlives its task group."""

    def __init__(self, options: RuntimeOptions, tg: TaskGroup) -> None:
        super().__init__(options, tg)
        self._names = 0

    # -- lookup -----------------------------------------------------------------------------

    def get(self, agent_id: str) -> AgentHandle | None:
        return self._agents.get(agent_id)

    @property
    def agents(self) -> list[AgentHandle]:
        return list(self._agents.values())

    def next_nickname(self) -> str:
        name = nickname(self._names)
        self._names += 1
        return name

    # -- starting agents --------------------------------------------------------------------

    async def start(
        self,
        spec: AgentSpec,
        task: str,
        *,
        parent: AgentHandle | None = None,
        stay_open: bool = True,
        on_finish: FinishCallback | None = None,
        subagent_context: str | None = None,
        queued: bool = False,
        notes: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> AgentHandle:
        """Journal a new agent and start its first turn on `task`; a `queued` worker waits in
        its parent's queue until the thread limit lets it start (see `capacity`). `notes` are
        journaled with the agent's row, so they come before anything its turn writes (a
        fan-out's `item_started`)."""
        # The context first: an unreadable AGENTS.md must not leave a half-started agent behind.
        first, listing = await self._first_input(spec, task, subagent_context)
        if parent is not None and (parent.leaving or parent.closed):
            raise SpawnRefused(
                f"agent {parent.nickname or parent.agent_id} has ended: a worker can only be "
                "started under an agent that is still running"
            )
        handle = self._adopt(spec, task, parent, stay_open, on_finish)
        handle.subagent_context = subagent_context
        handle.skills = listing
        if queued and parent is not None:
            handle.first, handle.queued = first, True
            await self._journal_agent(spec, task, "agent_queued", status=PENDING, notes=notes)
            self._admit_waiting(parent)  # a slot may have freed while this one was journaled
            return handle
        # A root agent's task goes with its row when no hook can change it first (a worker's
        # is written as it starts: one ended before it began is queued again on resume).
        task_now = parent is None and self.user_hooks.runner is None
        journaled = await self._journal_agent(
            spec, task, "agent_started", first if task_now else None, notes=notes
        )
        if journaled is not None:
            handle.journaled_first = (first, journaled)
        self._tg.start_soon(self._agent_loop, handle, first, name=f"agent {spec.agent_id}")
        return handle

    def capacity(self, parent: AgentHandle) -> Capacity:
        """How many of `parent`'s workers run and wait, and the thread limit."""
        return capacity_of(parent, self.config.agents)

    async def _first_input(
        self, spec: AgentSpec, task: str, subagent_context: str | None
    ) -> tuple[UserInput, str | None]:
        """The task with its full context, and the skills listing chosen for it."""
        skills = self.options.skills
        found = await skills.for_task(task) if skills is not None else None
        listing = found.listing if found is not None else None
        attachments = found.attachments if found is not None else ()
        first = await first_input(
            spec, task, subagent_context=subagent_context, skills=listing, attachments=attachments
        )
        context = await self.with_memory(spec, first.context, task)
        return first.model_copy(update={"context": context}), listing

    async def restore(
        self,
        spec: AgentSpec,
        task: str,
        status: AgentStatus,
        *,
        parent: AgentHandle | None = None,
        stay_open: bool = True,
        on_finish: FinishCallback | None = None,
        how: Restoring = AT_ONCE,
    ) -> AgentHandle:
        """Rebuild a journaled agent by replay and carry on whatever it had not finished.

        Messages in `how.inbox` become its next turn once it has caught up. A `closed` agent is
        rebuilt only as a place in the tree: it does not run again. With `launch=False` the
        agent waits for `launch(handle)`: a whole tree is rebuilt before any of it runs, so a
        parent never sees a half-restored child.
        """
        handle = self._adopt(spec, task, parent, stay_open, on_finish, status=status)
        if how.closed:
            handle.closed = True
            handle.status = AgentStatus.INTERRUPTED
            handle.ended.set()
            return handle
        handle.inbox.extend(how.inbox)
        pinned = await journaled_context(self.store, spec.agent_id)
        handle.subagent_context = pinned.get("subagent_context")
        handle.skills = pinned.get("skills")
        handle.runner.core = core = await replay_core(self.store, handle.runner.core.config)
        await self._carry_over_spending(handle)
        handle.final_message = core.final_message
        if core.waiting_for is Waiting.INPUT:  # journaled, but stopped before its task was
            handle.first, handle.skills = await self._first_input(
                spec, task, handle.subagent_context
            )
        if how.launch:
            self.launch(handle)
        return handle

    def launch(self, handle: AgentHandle) -> None:
        """Start a restored agent: its unfinished turn, its pending task, or its inbox."""
        if handle.closed:
            return
        unstarted = handle.first is not None and handle.status is AgentStatus.INTERRUPTED
        if handle.parent is not None and (handle.status is AgentStatus.PENDING or unstarted):
            # It was waiting for a slot (or ended before its task began, when its parent did):
            # it waits again, in its old place.
            handle.status, handle.error, handle.queued = AgentStatus.PENDING, None, True
            self._admit_waiting(handle.parent)
            return
        first = handle.first
        resume = first is None and handle.status is not AgentStatus.COMPLETED
        if resume:  # it carries on now: it holds its slot before any queued sibling is admitted
            self._set_status(handle, AgentStatus.RUNNING)
        name = f"agent {handle.agent_id}"
        self._tg.start_soon(self._agent_loop, handle, first, resume, name=name)

    async def _carry_over_spending(self, handle: AgentHandle) -> None:
        """A restored agent keeps what it spent: in its own cost and in the run's budget."""
        record = await self.store.get_agent(handle.agent_id)
        spent = record.cost_usd if record is not None else 0.0
        handle.runner.spent_usd = spent
        core = handle.runner.core
        self.budget.add_prior(core.total_usage, spent, core.tool_calls, core.model_requests)

    def _adopt(
        self,
        spec: AgentSpec,
        task: str,
        parent: AgentHandle | None,
        stay_open: bool,
        on_finish: FinishCallback | None,
        *,
        status: AgentStatus = AgentStatus.PENDING,
    ) -> AgentHandle:
        # The status is set before the parent can see the child: a restored child that had
        # finished must never look running, or its parent would wait for it forever.
        handle = AgentHandle(
            spec=spec,
            runner=self._runner(spec),
            task=task,
            parent=parent,
            stay_open=stay_open,
            on_finish=on_finish,
            status=status,
        )
        self._agents[spec.agent_id] = handle
        SafeHooks(self.options.hooks).agent_started(spec.agent_id, spec.parent_id, spec.nickname)
        if parent is not None:
            parent.children.append(handle)
        return handle

    def _runner(self, spec: AgentSpec) -> AgentRunner:
        agent = assemble_agent(spec, self._agent_services())
        return AgentRunner(
            core=agent.core,
            model=self.options.clients.client_for(spec.model),
            registry=agent.registry,
            tool_context=build_tool_context(spec, self.options.services),
            store=self.store,
            hooks=self.options.hooks,
            limits=RunnerLimits(
                shared=self._charge,
                projected=self.budget.projected,
                run_deadline=self.budget.wall_time(),
            ),
            clock=self.options.clock,
            compaction_gate=self.options.compactor,
            on_compaction=functools.partial(lifecycle.fire_compaction_hooks, self.user_hooks, spec),
            interrupt_reason=RUN_CANCELLED,
        )

    def registry_for(self, spec: AgentSpec) -> ToolRegistry:
        """The core tools named in the spec, then the run's own tools, in the spec's order."""
        return build_registry(spec, self._agent_services())

    def _agent_services(self) -> AgentServices:
        options = self.options
        return AgentServices(
            agents=self.config.agents,
            providers=options.tool_providers,
            collab=self,
            equip=options.equip,
            prices=self.config.prices,
            host=host_abilities(sessions=options.services.exec_sessions is not None),
        )

    def _charge(self, usage: Usage, cost: float, tool_calls: int) -> str | None:
        return self.budget.charge(usage, cost, tool_calls)

    async def _journal_agent(
        self,
        spec: AgentSpec,
        task: str,
        note: str,
        first: UserInput | None = None,
        status: str | None = None,
        notes: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> JournalEvent | None:
        """The agent's row, the note of its start (or queueing), the caller's `notes` and, if
        given, its first input: one write. Answers the first input's event."""
        record = spec.journal_record(task, now=self.options.clock())
        if status is not None:
            record = record.model_copy(update={"status": status})
        events = [(note, started_note(spec)), *notes]
        if first is not None:
            events.append((first.kind, event_to_payload(first)))
        added = await self.store.create_agent(record, events=events)
        hooks = SafeHooks(self.options.hooks)
        for event in added[: 1 + len(notes)]:
            hooks.event(spec.agent_id, event.seq, event.kind, event.payload)
        return added[-1] if first is not None else None

    # -- what supervisors do to their children ------------------------------------------------

    async def send_input(self, target: AgentHandle, message: str, *, interrupt: bool) -> None:
        """Give `target` a message: now if it is working (after an interrupt, if asked)."""
        if target.closed or target.ended.is_set():
            raise SpawnRefused(f"agent {target.nickname} ({target.agent_id}) is closed")
        if (exhausted := self.budget.exhausted) is not None:
            raise SpawnRefused(no_more_input(target.nickname, exhausted))
        if interrupt and target.turn_scope is not None:
            target.runner.interrupt_reason = INTERRUPTED_FOR_INPUT
            target.turn_scope.cancel()
        elif not interrupt and await target.runner.notify_if_busy(message):
            return
        target.inbox.append(message)
        # Working again from now on, so a `wait` right after this sees no stale final status.
        self._set_status(target, AgentStatus.RUNNING)
        target.wake()

    async def wait(
        self, targets: Sequence[AgentHandle], within: float
    ) -> tuple[dict[str, AgentHandle], bool]:
        """Wait until at least one target is final (or closed); answer those that are."""
        with anyio.move_on_after(within):
            while True:
                done = {t.agent_id: t for t in targets if t.status.is_final or t.closed}
                if done:
                    return done, False
                changed = self._changed
                await changed.wait()
        return {}, True

    async def close(self, target: AgentHandle) -> AgentStatus:
        """Shut down `target` and every descendant; answer the status it had."""
        previous = target.status
        for agent in reversed(target.subtree()):
            if agent.waiting_to_start:
                agent.ended.set()  # its loop never started, so nothing else will say it ended
            agent.closed = True
            if agent.agent_scope is not None:
                agent.agent_scope.cancel()
            agent.wake()
        for agent in target.subtree():
            with anyio.move_on_after(SHUTDOWN_TIMEOUT, shield=True):
                await agent.ended.wait()
            if not agent.status.is_final:
                agent.status = AgentStatus.INTERRUPTED
            # Journaled, so a resumed run leaves closed agents closed.
            await self.store.update_agent(
                agent.agent_id, status=CLOSED, updated_at=self.options.clock()
            )
        self._broadcast()
        self._admit_waiting(target.parent)
        return previous


@asynccontextmanager
async def open_runtime(options: RuntimeOptions) -> AsyncIterator[RunRuntime]:
    """A runtime whose agents all end (cancelled if still open) when the block exits, and
    whose agents' command sessions are stopped with them; the garbage collector is paced for
    many agents meanwhile (`paced_collector`)."""
    with paced_collector():
        async with open_sessions(options.services) as services:
            options = replace(options, services=services)
            async with anyio.create_task_group() as tg:
                runtime = RunRuntime(options, tg)
                try:
                    yield runtime
                finally:
                    tg.cancel_scope.cancel()
