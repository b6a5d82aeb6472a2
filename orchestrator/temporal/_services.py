"""What a `corral worker` process shares among its activities: journal, model clients, host.

One `WorkerServices` per worker process, opened by `open_worker_services` and closed with it. It
also holds what several activities compute the same way: an agent's tool registry (core tools
plus `report_result` bound to a slot rebuilt from the ledger) and the fan-out run's settings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

from agents import AgentsConfig, AgentSpec, CorralConfig, LedgerEntry, Store, open_sqlite_store
from tools import ToolRegistry, build_core_registry, core_tool_names

from .._ratelimit import RateLimiterRegistry
from .._run import ClientPool
from .._single import journal_path
from ..fanout import REPORT_RESULT, FanoutSettings, ResultSchema, ResultSlot, report_result_tool
from ..fanout._plan import item_of
from ..supervisor import collab_tool_providers

JournalObserver = Callable[[str, list[dict[str, Any]]], None]
"""Told (agent id, event payloads) after a workflow's events were journaled by themselves."""


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
    _settings: dict[str, FanoutSettings] = field(default_factory=dict)

    def spec_of(self, data: Mapping[str, Any]) -> AgentSpec:
        """A journaled spec, its endpoint key read from this worker's environment."""
        return AgentSpec.from_journal(data, env=self.env)

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


def registry_for(
    spec: AgentSpec, slot: ResultSlot | None, collab: AgentsConfig | None = None
) -> ToolRegistry:
    """The spec's core tools in its order, then `report_result` writing to `slot`, then (with
    `collab`, the run's limits) the collab tools it names: only their schemas, for the core's
    tool list, since the workflow carries those calls out itself."""
    core = set(core_tool_names())
    registry = build_core_registry(
        [n for n in spec.tools if n in core],
        max_timeout_ms=spec.shell.max_timeout_ms,
        default_timeout_ms=spec.shell.default_timeout_ms,
        output_max_tokens=spec.shell.output_max_tokens,
        approval_timeout=spec.shell.approval_timeout_sec,
    )
    if slot is not None and REPORT_RESULT in spec.tools:
        registry.register(report_result_tool(slot))
    if collab is not None:
        providers = collab_tool_providers()
        # The tools only read `config.agents` (their descriptions name the limits) when built.
        runtime = cast(Any, SimpleNamespace(config=SimpleNamespace(agents=collab)))
        for name in spec.tools:
            if name in providers:
                registry.register(providers[name](runtime, spec.agent_id))
    return registry


@asynccontextmanager
async def open_worker_services(
    config: CorralConfig,
    *,
    host: str,
    env: Mapping[str, str],
    on_journal: JournalObserver | None = None,
) -> AsyncIterator[WorkerServices]:
    """The journal of `config` and one client pool, for as long as the worker runs."""
    clients = ClientPool(RateLimiterRegistry.from_config(config))
    try:
        async with open_sqlite_store(journal_path(config)) as store:
            yield WorkerServices(
                config=config,
                store=store,
                clients=clients,
                host=host,
                env=env,
                on_journal=on_journal,
            )
    finally:
        await clients.aclose()
