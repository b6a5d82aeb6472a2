"""A fan-out's worker process: runs the items its parent hands it, through the same agent host.

It opens the run's journal itself (SQLite in WAL takes writers from several processes), but not
the run's lease, which the parent holds; its model clients ask the parent for every attempt's
permit, and its run budget hears what the other processes spent (`_budget`). Each item it is
given runs exactly as in one process (`WorkerPool.run_one`: restored by replay if it has an
agent, started afresh if not), and it tells the parent when the item is final. It beats on its
event loop while it serves (`_heartbeat`), so a parent can tell it is not wedged. When the
parent's end of the channel closes (the parent stopped, or died), it stops its agents and exits.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup

from corral.agents import (
    AgentStatus,
    CorralConfig,
    ItemRecord,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    RunnerHooks,
    open_model_client,
)

from .._ratelimit import normalise_base_url
from .._run import ClientPool, RunRuntime, price_for
from ..fanout._plan import FanoutSettings
from ..fanout._pool import SlotBook, WorkerPool
from ..fanout._report import REPORT_RESULT
from ..fanout._schema import ResultSchema
from ..fanout._template import Template
from ..runs import RunSetup, open_run
from ._budget import SharedBudget
from ._heartbeat import beat_interval, continue_when_orphaned, end_when_orphaned, send_beats
from ._permits import PermitClient
from ._wire import Channel, Message

INIT_TIMEOUT = 60.0
"""How long a new worker waits for its parent's first message."""


class RelayHooks(RunnerHooks):
    """Hands the parent's hooks (its progress line, its event stream) what they watch."""

    def __init__(self, channel: Channel, names: Sequence[str]) -> None:
        self._channel = channel
        self._names = frozenset(names)

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        self._post("agent_started", agent_id, parent_id, name)

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        self._post("turn_ended", agent_id, turn, str(status))

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        # Only what a progress line counts: the model and the usage of an answered call.
        if response is not None:
            usage = response.usage.model_dump(mode="json")
            self._post("model_call_ended", agent_id, request.model, usage)

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        self._post("event", agent_id, seq, kind, dict(payload))

    def _post(self, name: str, *args: Any) -> None:
        if name in self._names:
            self._channel.post({"op": "hook", "name": name, "args": list(args)})


def main(fd: int) -> None:
    """`python -m corral.orchestrator._procs FD`: serve the parent over inherited socket `fd`."""
    # A worker leads a session of its own, away from the terminal's Ctrl-C; should a SIGINT
    # reach it anyway, the parent alone decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    continue_when_orphaned()
    end_when_orphaned()
    sock = socket.socket(fileno=fd)
    sock.set_inheritable(False)  # the agents' commands must never hold the parent's channel
    anyio.run(serve_parent, sock)
    # The run is closed and journaled by now; what is left of interpreter shutdown (exit hooks
    # of libraries that this process never used) is seconds the parent would wait for.
    sys.stderr.flush()
    os._exit(0)


async def serve_parent(sock: socket.socket) -> None:
    channel = await Channel.from_socket(sock)
    async with anyio.create_task_group() as tg:
        tg.start_soon(channel.run)
        inbox = channel.messages()
        with anyio.fail_after(INIT_TIMEOUT):
            init = await anext(inbox, None)
        if init is not None and init.get("op") == "init":
            worker = _Worker(channel, init)
            timeout = worker.config.agents.fanout_heartbeat_timeout_sec
            tg.start_soon(send_beats, channel, beat_interval(timeout))
            await worker.run(inbox)
        with anyio.move_on_after(INIT_TIMEOUT, shield=True):
            await channel.flush_and_close()
        tg.cancel_scope.cancel()


class _Worker:
    def __init__(self, channel: Channel, init: Message) -> None:
        self.channel = channel
        self.config = CorralConfig.model_validate(init["config"])
        self.run_id = str(init["run_id"])
        self.env: Mapping[str, str] | None = init.get("env")
        self.base_url: str | None = init.get("base_url")
        self.init = init
        self.permits = PermitClient(channel)
        self.budget_seen: dict[str, float] = {}

    async def run(self, inbox: AsyncIterator[Message]) -> None:
        clients = ClientPool(factory=self._client)
        relayed = self.init.get("relay_hooks") or []
        hooks = RelayHooks(self.channel, relayed) if relayed else RunnerHooks()
        async with open_run(self.config, self.run_id, await self._setup(hooks, clients)) as runtime:
            budget = self._budget(runtime)
            pool = await self._pool(runtime)
            self.channel.post({"op": "ready"})
            async with anyio.create_task_group() as tg:
                await self._serve(inbox, tg, pool, budget)
                tg.cancel_scope.cancel()
        await clients.aclose()

    async def _setup(self, hooks: RunnerHooks, clients: ClientPool) -> RunSetup:
        self.book = await self._book()
        setup = RunSetup(
            hooks=hooks,
            env=self.env,
            clients=clients,
            tool_providers={REPORT_RESULT: self.book.provide},
            hold_lease=False,
        )
        return setup

    async def _book(self) -> SlotBook:
        from corral.agents import open_store

        async with open_store(self.config, read_only=True) as store:
            run = await store.get_run(self.run_id)
            self.agents = {a.agent_id: a for a in await store.list_agents(self.run_id)}
        if run is None:
            raise RuntimeError(f"run {self.run_id} is not in the journal")
        self.settings = FanoutSettings.model_validate(run.config)
        return SlotBook(ResultSchema(self.settings.result_schema), self.settings.max_result_tries)

    def _budget(self, runtime: RunRuntime) -> SharedBudget:
        old = runtime.budget
        budget = SharedBudget(old.limits, deadline=self.init.get("deadline", old.deadline))
        if self.init.get("share_budget"):
            budget.post = self.channel.post
        runtime.budget = budget  # before any agent starts, so every agent charges this one
        return budget

    async def _pool(self, runtime: RunRuntime) -> WorkerPool:
        env = self.env if self.env is not None else _environ()
        prototype = self.settings.prototype(env, self.base_url, self.config)
        return WorkerPool(
            runtime=runtime,
            book=self.book,
            template=Template(self.settings.template),
            prototype=prototype,
            price=price_for(self.config.prices, prototype.model.model),
            env=env,
            base_url=self.base_url,
        )

    def _client(self, settings: ModelSettings) -> Any:
        gate = self.permits.gate_for(normalise_base_url(settings.base_url or ""))
        return open_model_client(settings, gate=gate)

    async def _serve(
        self, inbox: AsyncIterator[Message], tg: TaskGroup, pool: WorkerPool, budget: SharedBudget
    ) -> None:
        async for message in inbox:
            op = message.get("op")
            if op == "item":
                tg.start_soon(self._item, pool, message)
            elif op in ("grant", "refuse", "revoke"):
                self.permits.answer(message)
            elif op == "budget":
                budget.others_spent(message, self.budget_seen)
            elif op == "stop":
                return

    async def _item(self, pool: WorkerPool, message: Message) -> None:
        record = ItemRecord.model_validate(message["record"])
        owner = message.get("owner")
        if owner is not None and owner not in self.agents:
            # An agent journaled since this process started: a lost process's item, dealt again.
            self.agents = {a.agent_id: a for a in await pool.store.list_agents(self.run_id)}
        if owner is not None and owner in self.agents:
            pool.owners[record.index] = self.agents[owner]
        else:
            pool.owners.pop(record.index, None)
        await pool.run_one(record)
        self.channel.post({"op": "finished", "index": record.index})


def _environ() -> Mapping[str, str]:
    import os

    return os.environ
