"""The life of each agent of a run: its loop of turns, and its end.

`AgentLives` drives an agent through its turns until it has nothing more to do, journals how
each turn ended, tells its fan-out and its parent, and lets a queued sibling take its slot; an
agent that ends takes the workers it left open with it (`_end_workers`). It also recalls
memories into each turn and journals the notes every agent writes. How agents are started,
restored and supervised is `RunRuntime`'s (`_runtime`), which builds on this.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from anyio.abc import TaskGroup

from corral.agents import (
    HOOK_NOTE,
    RUN_CANCELLED,
    Action,
    AgentHooks,
    AgentSpec,
    AgentStatus,
    Finish,
    SafeHooks,
    TurnContext,
    UserInput,
    continue_agent,
)
from corral.tools import HookRun, InvalidInput

from . import _lifecycle as lifecycle
from ._admission import never_started, ready_to_start
from ._assemble import turn_context
from ._budget import RunBudget
from ._fragments import render_notification
from ._handle import AgentHandle
from ._notes import describe_crash, started_note
from ._options import RuntimeOptions
from ._sessions import stop_sessions

SHUTDOWN_TIMEOUT = 10.0
logger = logging.getLogger(__name__)


class AgentLives:
    """The run's agents as they live; `RunRuntime` adds how they start and are supervised."""

    def __init__(self, options: RuntimeOptions, tg: TaskGroup) -> None:
        self.options = options
        self.config = options.config
        self.store = options.store
        self.run_id = options.run_id
        self.budget = RunBudget.starting_now(options.config.budgets)
        self._tg = tg
        self._agents: dict[str, AgentHandle] = {}
        self._changed = anyio.Event()
        services = options.services
        self.user_hooks = AgentHooks(services.hooks, self._record_hook, services.sandbox)

    # -- what every agent's turns share -------------------------------------------------------

    async def note(self, agent_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Journal a note (one of `NOTE_KINDS`): shown to event streams, skipped by replay."""
        record = await self.store.append_event(agent_id, kind, payload, at=self.options.clock())
        SafeHooks(self.options.hooks).event(agent_id, record.seq, kind, record.payload)

    async def _record_hook(self, agent_id: str, run: HookRun) -> None:
        await self.note(agent_id, HOOK_NOTE, run.model_dump(mode="json"))

    async def with_memory(self, spec: AgentSpec, context: TurnContext, query: str) -> TurnContext:
        """`context` with the memories recalled for a turn on `query`, if memory is on."""
        memory = self.options.memory
        if memory is None:
            return context
        histories = [handle.runner.core.history for handle in self._agents.values()]
        fragment = await memory.recall(spec, query, histories)
        return context.model_copy(update={"memory": fragment})

    def _admit_waiting(self, parent: AgentHandle | None) -> None:
        """Start the queued workers of `parent` that its free slots allow, in order."""
        if parent is None:
            return
        for child in ready_to_start(parent, self.config.agents):
            child.queued = False
            name = f"agent {child.agent_id}"
            self._tg.start_soon(self._agent_loop, child, child.first, False, True, name=name)

    # -- the life of an agent ---------------------------------------------------------------

    async def _agent_loop(
        self,
        handle: AgentHandle,
        first: UserInput | None,
        resume: bool = False,
        admitted: bool = False,
    ) -> None:
        run_stopping = False
        try:
            with anyio.CancelScope() as scope:
                handle.agent_scope = scope
                if handle.closed or handle.orphaned:  # closed or orphaned before it got to run
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
        except anyio.get_cancelled_exc_class():
            # The run is stopping: its cancellation reaches every agent, and a queued worker
            # stays journaled `pending`, so `corral resume` queues it again.
            run_stopping = True
            raise
        finally:
            handle.leaving = True  # before any await: no worker may be adopted from here on
            await stop_sessions(self.options.services, handle.agent_id)
            if not run_stopping:
                await self._end_workers(handle)
            handle.ended.set()
            self._let_go(handle)
            self._broadcast()

    def _let_go(self, handle: AgentHandle) -> None:
        """An agent whose loop has ended never runs again here: free what only its turns
        used. Its history stays while memory is on, which reads every agent's at the end."""
        handle.agent_scope = None
        if self.options.memory is None:
            handle.runner.retire()

    async def _end_workers(self, handle: AgentHandle) -> None:
        """An agent that ends takes its open workers with it, as on Temporal, before its own
        `ended` is set: one at work is interrupted (`RUN_CANCELLED`), one queued ends without
        starting, an idle one just ends. Each end is journaled, and each worker's `ended` set."""
        workers = [a for a in handle.subtree()[1:] if not (a.ended.is_set() or a.closed)]
        workers = [a for a in workers if not a.orphaned]  # an ancestor already ends them
        if not workers:
            return
        unstarted: list[AgentHandle] = []
        # All at once, before any await: no sibling's end may admit a queued one meanwhile, and
        # a worker ending its own workers never waits for one that only this call would end.
        for agent in workers:
            agent.orphaned = True
            if agent.waiting_to_start:
                unstarted.append(agent)
                agent.status, agent.error = AgentStatus.INTERRUPTED, never_started(RUN_CANCELLED)
                agent.ended.set()  # its loop never started, so nothing else will say it ended
            elif agent.agent_scope is not None:
                agent.agent_scope.cancel()
            agent.wake()
        with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_TIMEOUT):
            for agent in workers:
                await agent.ended.wait()
                if agent in unstarted or not agent.status.is_final:
                    await self._record_orphan_end(agent)
        self._broadcast()

    async def _record_orphan_end(self, agent: AgentHandle) -> None:
        """Journal how a worker whose ancestor ended stopped (its runner has journaled the
        interrupted turn, if it was in one), and note its end for the event streams."""
        if not agent.status.is_final:
            agent.status, agent.error = AgentStatus.INTERRUPTED, RUN_CANCELLED
        finish = Finish(status=agent.status, error=agent.error)
        try:
            await self._record_end(agent, finish)
            await self.note(
                agent.agent_id,
                "agent_finished",
                {"status": str(finish.status), "error": finish.error},
            )
        except Exception:  # the journal may be what failed; every other worker must still end
            logger.exception("could not journal the end of agent %s", agent.agent_id)

    async def _begin_admitted(self, handle: AgentHandle) -> bool:
        """Journal that a queued worker starts now; False if the run's budget forbids it."""
        exhausted = self.budget.exhausted
        if exhausted is not None:
            finish = Finish(status=AgentStatus.BUDGET_EXCEEDED, error=never_started(exhausted))
            await self._record_end(handle, finish)
            await self._finished(handle, finish)
            return False
        # Its status and the note of its start in one write.
        now, note = self.options.clock(), started_note(handle.spec)
        (record,) = await self.store.append_events(
            handle.agent_id,
            [("agent_started", note)],
            at=now,
            agent_update={"status": "running", "updated_at": now},
        )
        SafeHooks(self.options.hooks).event(
            handle.agent_id, record.seq, record.kind, record.payload
        )
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
                finish = await handle.runner.drive(await self._take_input(handle, first))
        handle.turn_scope, handle.runner.interrupt_reason = None, RUN_CANCELLED
        if finish is None:
            finish = Finish(status=AgentStatus.INTERRUPTED, error="interrupted")
        await self._finished(handle, finish)

    async def _take_input(self, handle: AgentHandle, message: UserInput) -> list[Action]:
        """Feed `message` to the agent, unless it is the task journaled with its row."""
        journaled, handle.journaled_first = handle.journaled_first, None
        if journaled is not None and journaled[0] is message:
            return await handle.runner.take_journaled(message, journaled[1])
        return await handle.runner.feed(message)

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
