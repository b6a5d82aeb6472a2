"""What a `corral worker` process shares among its activities: journal, model clients, host,
MCP servers and skills.

One `WorkerServices` per worker process, opened by `open_worker_services` and closed with it (the
MCP servers of its config's `[mcp_servers]` start before it polls and stop when it stops). It
also holds what several activities compute the same way: an agent's tool registry (core tools,
`report_result` bound to a slot rebuilt from the ledger, then the MCP tools or `tool_search`, as
a local run equips it), each run's skills and the fan-out run's settings.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from corral.agents import (
    AgentsConfig,
    AgentSpec,
    CorralConfig,
    LedgerEntry,
    Store,
    open_store,
)
from corral.tools import ToolRegistry

from .._ratelimit import RateLimiterRegistry
from .._run import AgentServices, ClientPool, RunMemory, ToolProvider, build_registry
from ..fanout import REPORT_RESULT, FanoutSettings, ResultSchema, ResultSlot, report_result_tool
from ..fanout._plan import item_of
from ..runs import open_run_memory
from ..services._skills_service import SkillsForTask, SkillsService
from ..supervisor import collab_tool_providers
from ._wire import WireSpec

if TYPE_CHECKING:
    from ..services._mcp_tooling import McpTooling

JournalObserver = Callable[[str, list[dict[str, Any]]], None]
"""Told (agent id, event payloads) after a workflow's events were journaled by themselves."""
RUNS_KEPT = 64
"""Runs whose skills a worker keeps discovered; an older run's next agent discovers again."""
TOOL_LISTS_KEPT = 1024
"""Agents whose prepared tool list a worker remembers (for `tool_search` results)."""
ToolList = tuple[dict[str, Any], ...]
TOOLS_CHANGED = "tools_changed"


def grown_tools(core: ToolList, registry: ToolRegistry) -> ToolList | None:
    """`core` with the registry's tools it lacks appended (what `tool_search` loaded, what an
    MCP server added), or None when it lacks none. Appending keeps the request prefix valid."""
    have = {tool["name"] for tool in core}
    new = [tool for tool in registry.responses_tools() if tool["name"] not in have]
    return (*core, *new) if new else None


class RunSkills:
    """Each run's skills, discovered once at the folder of the first of its agents that this
    worker prepares (a run's agents share their root's folder), as a local run discovers them
    once when it starts."""

    def __init__(self, config: CorralConfig) -> None:
        self._config = config
        self._runs: OrderedDict[str, SkillsService] = OrderedDict()
        self._lock = anyio.Lock()

    async def for_agent(self, spec: AgentSpec) -> SkillsService:
        async with self._lock:
            found = self._runs.get(spec.run_id)
            if found is None:
                found = await SkillsService.discover(self._config, spec.cwd)
                self._runs[spec.run_id] = found
                while len(self._runs) > RUNS_KEPT:
                    self._runs.popitem(last=False)
            self._runs.move_to_end(spec.run_id)
            return found


@dataclass
class WorkerServices:
    """The process-wide services behind the activities of one worker."""

    config: CorralConfig
    store: Store
    clients: ClientPool
    host: str
    env: Mapping[str, str]
    on_journal: JournalObserver | None = None
    """Told of every batch the `corral.journal` activity wrote (e.g. approval requests)."""
    mcp: McpTooling | None = None
    """The worker's MCP servers and their tooling; None when its config names none."""
    skills: RunSkills | None = None
    """None when `[skills]` is off."""
    memory: RunMemory | None = None
    """Recalls memories into an agent's first turn; None when `[memories]` is off."""
    _settings: dict[str, FanoutSettings] = field(default_factory=dict)
    _prepared: OrderedDict[str, ToolList] = field(default_factory=OrderedDict)

    def equip(self, registry: ToolRegistry) -> ToolRegistry:
        """`registry` with the MCP tools, or `tool_search` when they are deferred."""
        if self.mcp is not None:
            self.mcp.equip(registry)
        return registry

    def agent_services(
        self, slot: ResultSlot | None, agents: AgentsConfig | None = None
    ) -> AgentServices:
        """How an agent is assembled here: `report_result` writing to `slot`, and the collab
        tools only for their schemas (the workflow carries those calls out itself), their
        descriptions naming `agents` (the run's limits; by default this worker's config's)."""
        providers: dict[str, ToolProvider] = dict(collab_tool_providers())
        if slot is not None:
            providers[REPORT_RESULT] = lambda scope: report_result_tool(slot)
        return AgentServices(
            agents=agents or self.config.agents,
            providers=providers,
            equip=self.equip,
            prices=self.config.prices,
        )

    def remember_tools(self, agent_id: str, tools: ToolList) -> None:
        """The tool list an agent's core starts with: a later `tool_search` appends to it."""
        if self.mcp is None:
            return
        self._prepared[agent_id] = tools
        while len(self._prepared) > TOOL_LISTS_KEPT:
            self._prepared.popitem(last=False)

    def prepared_tools(self, agent_id: str) -> ToolList | None:
        return self._prepared.get(agent_id)

    async def batch_tools(
        self, spec: AgentSpec, slot: ResultSlot | None, batch_seq: int
    ) -> tuple[ToolRegistry, ToolList]:
        """The registry a tool batch runs with, holding the MCP tools `tool_search` loaded for
        the agent before, and the tool list its core had before the batch (whose events start
        at `batch_seq`): the last one journaled before it, else the one it was prepared with."""
        registry = self.equip(build_registry(spec, self.agent_services(slot)))
        if self.mcp is None:
            return registry, ()
        changes = [
            (event.seq, tuple(event.payload["tools"]))
            for event in await self.store.events(spec.agent_id)
            if event.kind == TOOLS_CHANGED
        ]
        exposed = {tool.name: tool for tool in self.mcp.mcp.tools}
        for listed in changes[-1][1] if changes else ():
            tool = exposed.get(listed["name"])
            if tool is not None and tool.name not in registry:
                registry.register(tool)
        earlier = [tools for seq, tools in changes if seq < batch_seq]
        core = earlier[-1] if earlier else self.prepared_tools(spec.agent_id)
        if core is None:  # prepared by a worker since gone: build it as that one did
            core = tuple(
                self.equip(build_registry(spec, self.agent_services(slot))).responses_tools()
            )
        return registry, core

    async def skills_for(self, spec: AgentSpec, task: str) -> SkillsForTask:
        """The skills listing and `$name` bodies for `task`, ranked in the agent's run."""
        if self.skills is None:
            return SkillsForTask(None, ())
        return await (await self.skills.for_agent(spec)).for_task(task)

    def spec_of(self, data: WireSpec | Mapping[str, Any]) -> AgentSpec:
        """A spec from the wire or the journal, its endpoint key read from this worker's
        environment (and its paths resolved on this host)."""
        journaled = data.journaled() if isinstance(data, WireSpec) else data
        return AgentSpec.from_journal(journaled, env=self.env, config=self.config)

    async def settings_of(self, run_id: str) -> FanoutSettings:
        cached = self._settings.get(run_id)
        if cached is None:
            run = await self.store.get_run(run_id)
            if run is None:
                raise LookupError(f"run {run_id} is not in the journal {self.store.journal}")
            cached = self._settings[run_id] = FanoutSettings.model_validate(run.config)
        return cached

    async def slot_of(self, spec: AgentSpec) -> tuple[ResultSlot | None, list[LedgerEntry]]:
        """The agent's `report_result` slot as its ledger leaves it (None for an agent without
        that tool: it is no fan-out worker), and that ledger."""
        if REPORT_RESULT not in spec.tools:
            return None, await self.store.ledger(spec.agent_id)
        settings = await self.settings_of(spec.run_id)
        index = item_of(spec.nickname)
        slot = ResultSlot(
            index=-1 if index is None else index,
            schema=ResultSchema(settings.result_schema),
            max_tries=settings.max_result_tries,
        )
        ledger = await self.store.ledger(spec.agent_id)
        slot.replay(ledger)
        return slot, ledger


@asynccontextmanager
async def open_worker_services(
    config: CorralConfig,
    *,
    host: str,
    env: Mapping[str, str],
    on_journal: JournalObserver | None = None,
) -> AsyncIterator[WorkerServices]:
    """The journal of `config`, one client pool, its MCP servers (started; a required one that
    fails raises `McpStartupFailed`) and its skills, for as long as the worker runs."""
    clients = ClientPool(RateLimiterRegistry.from_config(config))
    try:
        async with (
            open_store(config) as store,
            _open_mcp(config) as mcp,
            open_run_memory(config, env) as memory,
        ):
            yield WorkerServices(
                config=config,
                store=store,
                clients=clients,
                host=host,
                env=env,
                on_journal=on_journal,
                mcp=mcp,
                skills=RunSkills(config) if config.skills.enabled else None,
                memory=memory,
            )
    finally:
        await clients.aclose()


def _open_mcp(config: CorralConfig) -> AbstractAsyncContextManager[McpTooling | None]:
    # Imported here, as a local run does: the MCP SDK and the search index cost a second at
    # start-up, and most workers configure no MCP server.
    from corral.observability import current_trace_context

    from ..services._mcp_tooling import open_mcp_tooling

    return open_mcp_tooling(config, trace_context=current_trace_context)
