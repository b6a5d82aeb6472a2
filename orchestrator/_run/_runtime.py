"""`RunRuntime`: many agents of one run under one task group.

It starts agents (a root, fan-out workers, spawned children), drives each one's turns, routes
messages and completion notices between parents and children, charges the run's shared budget
and cancels whole subtrees (`orchestrator.supervisor` checks the depth limit). Workers past the
thread limit wait in their parent's queue and start here as slots free (`_admission`); an
agent whose driver raises ends `failed` and its parent is told.
Every agent uses the process's shared model clients (and through them the shared rate limiters)
and the one journal.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from corral.agents import (
    HOOK_NOTE,
    INTERRUPTED_FOR_INPUT,
    RUN_CANCELLED,
    AgentHooks,
    AgentRunner,
    AgentSpec,
    AgentStatus,
    CompactionGate,
    CorralConfig,
    Finish,
    Item,
    RunnerHooks,
    RunnerLimits,
    SafeHooks,
    Store,
    TurnContext,
    Usage,
    UserInput,
    Waiting,
    build_tool_context,
    continue_agent,
    replay_core,
)
from corral.tools import (
    HookRun,
    InvalidInput,
    ToolRegistry,
    ToolServices,
)

from . import _lifecycle as lifecycle
from ._admission import Capacity, capacity_of, never_started, no_more_input, ready_to_start
from ._assemble import (
    AgentServices,
    ToolProvider,
    assemble_agent,
    build_registry,
    first_input,
    host_abilities,
    turn_context,
)
from ._budget import RunBudget
from ._clients import ClientPool
from ._fragments import render_notification
from ._handle import AT_ONCE, AgentHandle, FinishCallback, Restoring
from ._names import nickname
from ._notes import describe_crash, journaled_context, started_note
from ._recall import RunMemory
from ._sessions import open_sessions, stop_sessions

if TYPE_CHECKING:
    # Only named here: the skills index (numpy, bm25s) is loaded when a run discovers skills.
    from ..services._skills_service import SkillsService

SHUTDOWN_TIMEOUT = 10.0
PENDING = str(AgentStatus.PENDING)
CLOSED = "closed"
"""The journal's status of an agent that `close` shut down (a record status, not a core one)."""
logger = logging.getLogger(__name__)


class SpawnRefused(InvalidInput):
    """A spawn was refused: a limit was reached or the request was invalid."""


@dataclass
class RuntimeOptions:
    """What every agent of the run shares."""

    config: CorralConfig
    store: Store
    run_id: str
    clients: ClientPool
    hooks: RunnerHooks = field(default_factory=RunnerHooks)
    services: ToolServices = field(default_factory=ToolServices)
    tool_providers: Mapping[str, ToolProvider] = field(default_factory=dict)
    skills: SkillsService | None = None
    compactor: CompactionGate | None = None
    """Bounds how many agents of the process summarise at once."""
    equip: Callable[[ToolRegistry], None] | None = None
    """Adds the process's shared tools (MCP, `tool_search`) to each agent's registry."""
    clock: Callable[[], float] = time.time
    memory: RunMemory | None = None
    """Recalls memories into each turn (`[memories]`); None when memory is off."""


class RunRuntime:
    """Owns the agents of one run. Use `open_runtime`; never outlives its task group."""

    def __init__(self, options: RuntimeOptions, tg: TaskGroup) -> None:
        self.options = options
        self.config = options.config
        self.store = options.store
        self.run_id = options.run_id
        self.budget = RunBudget.starting_now(options.config.budgets)
        self._tg = tg
        self._agents: dict[str, AgentHandle] = {}
        self._names = 0
        self._changed = anyio.Event()
        services = options.services
        self.user_hooks = AgentHooks(services.hooks, self._record_hook, services.sandbox)

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
    ) -> AgentHandle:
        """Journal a new agent and start its first turn on `task`; a `queued` worker waits in
        its parent's queue until the thread limit lets it start (see `capacity`)."""
        # The context first: an unreadable AGENTS.md must not leave a half-started agent behind.
        first, listing = await self._first_input(spec, task, subagent_context)
        handle = self._adopt(spec, task, parent, stay_open, on_finish)
        handle.subagent_context = subagent_context
        handle.skills = listing
        if queued and parent is not None:
            handle.first, handle.queued = first, True
            await self._journal_agent(spec, task, status=PENDING)
            await self.note(spec.agent_id, "agent_queued", started_note(spec))
            self._admit_waiting(parent)  # a slot may have freed while this one was journaled
            return handle
        await self._journal_agent(spec, task)
        await self.note(spec.agent_id, "agent_started", started_note(spec))
        self._tg.start_soon(self._agent_loop, handle, first, name=f"agent {spec.agent_id}")
        return handle

    def capacity(self, parent: AgentHandle) -> Capacity:
        """How many of `parent`'s workers run and wait, and the thread limit."""
        return capacity_of(parent, self.config.agents)

    def _admit_waiting(self, parent: AgentHandle | None) -> None:
        """Start the queued workers of `parent` that its free slots allow, in order."""
        if parent is None:
            return
        for child in ready_to_start(parent, self.config.agents):
            child.queued = False
            name = f"agent {child.agent_id}"
            self._tg.start_soon(self._agent_loop, child, child.first, False, True, name=name)

    async def note(self, agent_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Journal a note (one of `NOTE_KINDS`): shown to event streams, skipped by replay."""
        record = await self.store.append_event(agent_id, kind, payload, at=self.options.clock())
        SafeHooks(self.options.hooks).event(agent_id, record.seq, kind, record.payload)

    async def _record_hook(self, agent_id: str, run: HookRun) -> None:
        await self.note(agent_id, HOOK_NOTE, run.model_dump(mode="json"))

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

    async def with_memory(self, spec: AgentSpec, context: TurnContext, query: str) -> TurnContext:
        """`context` with the memories recalled for a turn on `query`, if memory is on."""
        memory = self.options.memory
        if memory is None:
            return context
        fragment = await memory.recall(spec, query, self.run_history())
        return context.model_copy(update={"memory": fragment})

    def run_history(self) -> list[Item]:
        """Every item of every agent of the run so far (what the run changed is in it)."""
        return [item for handle in self._agents.values() for item in handle.runner.core.history]

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
        if handle.parent is not None and handle.status is AgentStatus.PENDING:
            handle.queued = True  # it was waiting for a slot: it waits again, in its old place
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

    async def _journal_agent(self, spec: AgentSpec, task: str, status: str | None = None) -> None:
        record = spec.journal_record(task, now=self.options.clock())
        if status is not None:
            record = record.model_copy(update={"status": status})
        await self.store.create_agent(record)

    # -- the life of an agent ---------------------------------------------------------------

    async def _agent_loop(
        self,
        handle: AgentHandle,
        first: UserInput | None,
        resume: bool = False,
        admitted: bool = False,
    ) -> None:
        try:
            with anyio.CancelScope() as scope:
                handle.agent_scope = scope
                if handle.closed:  # closed before this task got to run
                    return
                if admitted and not await self._begin_admitted(handle):
                    return
                opening: UserInput | str | None = first
                if first is not None:
                    opening = await lifecycle.fire_start_hooks(self.user_hooks, handle.spec, first)
                if first is not None or resume:
                    await self._turn(handle, opening)
                while await self._more_to_do(handle):
                    text = "\n\n".join(handle.inbox)
                    handle.inbox.clear()
                    context = await turn_context(
                        handle.spec, handle.subagent_context, handle.skills
                    )
                    context = await self.with_memory(handle.spec, context, text)
                    skills = self.options.skills
                    attachments = skills.mentioned(text) if skills is not None else ()
                    message = UserInput(text=text, context=context, attachments=attachments)
                    await self._turn(
                        handle,
                        await lifecycle.fire_prompt_hooks(self.user_hooks, handle.spec, message),
                    )
        except InvalidInput as exc:
            # No bug: the agent's context was refused (an AGENTS.md grown past the instructions
            # cap). It ends failed with the one-line reason; what it did stays journaled.
            await self._crashed(handle, exc, internal=False)
        except Exception as exc:  # the boundary of one agent's driver: a bug ends it, not the run
            logger.exception("agent %s stopped on an internal error", handle.agent_id)
            await self._crashed(handle, exc)
        finally:
            await stop_sessions(self.options.services, handle.agent_id)
            handle.ended.set()
            self._broadcast()

    async def _begin_admitted(self, handle: AgentHandle) -> bool:
        """Journal that a queued worker starts now; False if the run's budget forbids it."""
        exhausted = self.budget.exhausted
        if exhausted is not None:
            finish = Finish(status=AgentStatus.BUDGET_EXCEEDED, error=never_started(exhausted))
            await self._record_end(handle, finish)
            await self._finished(handle, finish)
            return False
        now = self.options.clock()
        await self.store.update_agent(handle.agent_id, status="running", updated_at=now)
        await self.note(handle.agent_id, "agent_started", started_note(handle.spec))
        return True

    async def _crashed(self, handle: AgentHandle, exc: Exception, *, internal: bool = True) -> None:
        """Record an agent whose driver raised as failed and tell its parent, as any end is."""
        error = f"internal error: {describe_crash(exc)}" if internal else str(exc)
        finish = Finish(status=AgentStatus.FAILED, error=error)
        with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_TIMEOUT):
            try:
                await self._record_end(handle, finish)
            except Exception:  # the journal may be what failed; the parent must hear of it anyway
                logger.exception("could not journal the end of agent %s", handle.agent_id)
            await self._finished(handle, finish)

    async def _record_end(self, handle: AgentHandle, finish: Finish) -> None:
        await self.store.update_agent(
            handle.agent_id,
            status=str(finish.status),
            error=finish.error,
            updated_at=self.options.clock(),
        )

    async def _more_to_do(self, handle: AgentHandle) -> bool:
        # Past the run's budget a turn could only be refused: its messages are dropped unread.
        while not handle.inbox or self.budget.exhausted is not None:
            handle.inbox.clear()
            if handle.closed or not handle.stay_open:
                return False
            if handle.parent is None and not handle.has_running_descendants():
                return False
            await handle.wait_for_wake()
        return not handle.closed

    async def _turn(self, handle: AgentHandle, first: UserInput | str | None) -> None:
        if isinstance(first, str):  # a hook blocked the prompt: the turn ends before it starts
            await self._record_end(handle, blocked := Finish(AgentStatus.FAILED, error=first))
            await self._finished(handle, blocked)
            return
        self._set_status(handle, AgentStatus.RUNNING)
        finish: Finish | None = None
        with anyio.CancelScope() as scope:
            handle.turn_scope = scope
            if first is None:
                finish = await continue_agent(handle.runner)
            else:
                finish = await handle.runner.drive(await handle.runner.feed(first))
        handle.turn_scope, handle.runner.interrupt_reason = None, RUN_CANCELLED
        if finish is None:
            finish = Finish(status=AgentStatus.INTERRUPTED, error="interrupted")
        await self._finished(handle, finish)

    async def _finished(self, handle: AgentHandle, finish: Finish) -> None:
        if finish.status is AgentStatus.INTERRUPTED and handle.inbox and not handle.closed:
            return  # interrupted to take new input: still working, nothing to report
        handle.final_message = finish.message
        handle.error = finish.error
        await lifecycle.fire_finish_hooks(self.user_hooks, handle.spec, finish)
        handle.ending = True
        try:
            await self._announce(handle, finish)
        finally:
            handle.ending = False
        # After the note, so the journal never shows more workers running than the limit allows.
        self._admit_waiting(handle.parent)

    async def _announce(self, handle: AgentHandle, finish: Finish) -> None:
        """Set the final status, tell the fan-out and the parent, and journal the end."""
        self._set_status(handle, finish.status)
        if handle.on_finish is not None:
            await handle.on_finish(handle, finish)
        parent = handle.parent
        if parent is not None and not parent.closed and not parent.ended.is_set():
            text = render_notification(
                agent_id=handle.agent_id,
                nickname=handle.nickname,
                status=str(finish.status),
                message=finish.message or finish.error,
            )
            if not await parent.runner.notify_if_busy(text):
                parent.inbox.append(text)
            parent.wake()
        # Last: a stop that cancels this write must not keep the parent from hearing of it.
        await self.note(
            handle.agent_id, "agent_finished", {"status": str(finish.status), "error": finish.error}
        )

    def _set_status(self, handle: AgentHandle, status: AgentStatus) -> None:
        handle.status = status
        self._broadcast()

    def _broadcast(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

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
    whose agents' command sessions are stopped with them."""
    async with open_sessions(options.services) as services:
        options = replace(options, services=services)
        async with anyio.create_task_group() as tg:
            runtime = RunRuntime(options, tg)
            try:
                yield runtime
            finally:
                tg.cancel_scope.cancel()
