"""The activities of a corral worker: every piece of I/O an agent's workflow asks for.

Model calls and journal writes may run on any worker (the shared queue); preparing an agent and
running its tools run on the host that holds its workspace (that host's queue), with the
worker's MCP tools (or `tool_search`) beside the core ones. Each activity journals what it
produced before answering, so the workflow feeds its core only journaled events; a batch that
gave the agent new tools answers a `tools_changed` event too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.to_thread
from pydantic import TypeAdapter
from temporalio import activity
from temporalio.exceptions import ApplicationError

from corral.agents import (
    AgentSpec,
    FunctionCall,
    LedgerEntry,
    Message,
    ModelCompleted,
    ModelError,
    ModelFailed,
    ModelItem,
    ModelRequest,
    ToolResult,
    ToolsChanged,
    build_tool_context,
    event_from_payload,
    event_to_payload,
    is_elided,
    journaled_result,
    ledger_output,
    lost_output,
)
from corral.tools import (
    HookRunner,
    ToolCall,
    ToolOutput,
    ToolRegistry,
    ToolServices,
    run_tool_calls,
)

from .._run import assemble_agent, cost_of, first_input, price_for
from ..fanout import FanoutItem, Template
from ..fanout._plan import worker_spec
from ._agent_activities import AgentActivities, opened_agent
from ._heartbeat import heartbeating
from ._held import CURRENT_CALL, HeldApprover
from ._journal import (
    JOURNAL_DIVERGED,
    begin_run,
    journal_agent,
    usage_counts,
    write_batch,
    written_from,
)
from ._lifecycle import LifecycleActivities
from ._services import ToolList, WorkerServices, grown_tools
from ._tracing import ToolSpans, chat_span
from ._wire import (
    FanoutRunInput,
    FinishInput,
    HostLostInput,
    JournalBatch,
    ModelCallInput,
    ModelCallOutput,
    PreparedAgent,
    PrepareInput,
    SkippedItems,
    ToolBatchInput,
    ToolBatchOutput,
)

REQUEST_ADAPTER = TypeAdapter(ModelRequest)
CALL_ADAPTER = TypeAdapter(FunctionCall)
INTERRUPTED = "the tool call was interrupted before it finished; its effects are unknown"


class CorralActivities:
    """Activity implementations bound to one worker's services."""

    def __init__(self, services: WorkerServices) -> None:
        self.services = services
        self.agents = AgentActivities(services)
        self.lifecycle = LifecycleActivities(services)

    @property
    def shared(self) -> list[Any]:
        """The activities any worker may run."""
        return [
            *self.agents.shared,
            self.claim_host,
            self.begin_run,
            self.call_model,
            self.journal,
            self.agent_events,
            self.finish_item,
            self.host_lost,
            self.fail_items,
            self.finish_run,
        ]

    @property
    def on_host(self) -> list[Any]:
        """The activities that must run where the agent's workspace is."""
        return [self.prepare_agent, self.run_tools, *self.agents.on_host, *self.lifecycle.on_host]

    @activity.defn(name="corral.claim_host")
    async def claim_host(self) -> str:
        return self.services.host

    @activity.defn(name="corral.begin_run")
    async def begin_run(self, run: FanoutRunInput) -> list[int]:
        return await begin_run(self.services.store, run)

    @activity.defn(name="corral.journal")
    async def journal(self, batch: JournalBatch) -> None:
        await write_batch(self.services.store, batch)
        observer = self.services.on_journal
        if observer is not None:
            observer(batch.agent_id, list(batch.events))

    @activity.defn(name="corral.agent_events")
    async def agent_events(self, agent_id: str) -> list[dict[str, Any]]:
        """Everything journaled for the agent, in order: a workflow that continued as new
        rebuilds its core from it."""
        return [event.payload for event in await self.services.store.events(agent_id)]

    @activity.defn(name="corral.prepare_agent")
    async def prepare_agent(self, prepare: PrepareInput) -> PreparedAgent:
        item = prepare.item
        prototype = self.services.spec_of(item.worker)
        spec = worker_spec(prototype, prepare.agent_id, item.index)
        task = Template(item.template).fill(FanoutItem(item.index, item.index + 1, item.data))
        async with heartbeating():
            first_event = await first_input(spec, task)
        store = self.services.store
        await journal_agent(store, spec, task)
        slot, _ = await self.services.slot_of(spec)
        # No skills: a local fan-out's workers get none either (`run_fanout` discovers none).
        core = assemble_agent(spec, self.services.agent_services(slot)).core
        await store.update_item(spec.run_id, item.index, status="running", agent_id=spec.agent_id)
        return await opened_agent(self.services, spec, core, first_event)

    @activity.defn(name="corral.call_model")
    async def call_model(self, call: ModelCallInput) -> ModelCallOutput:
        store = self.services.store
        after = await write_batch(store, call.journal)
        spec = self.services.spec_of(call.spec)
        earlier = () if call.summary else await written_from(store, call.journal.agent_id, after)
        if earlier:  # asking again would answer another response than the journal holds
            return self._answered_before(spec, earlier)
        request = REQUEST_ADAPTER.validate_python(call.request)
        client = self.services.clients.client_for(spec.model)
        with chat_span(call.journal.agent_id, request) as chat:
            try:
                async with heartbeating():
                    response = await client.complete(request)
            except ModelError as exc:
                chat.failed(exc)
                return await self._model_failed(call, after, str(exc))
            price = price_for(self.services.config.prices, response.model or spec.model.model)
            cost = cost_of(response.usage, price)
            chat.succeeded(response, cost)
        usage = response.usage.model_dump(mode="json")
        if call.summary:
            return ModelCallOutput(summary=_last_text(response.items), usage=usage, cost_usd=cost)
        events = [event_to_payload(ModelItem(item=item)) for item in response.items]
        done = ModelCompleted(usage=response.usage, model=response.model)
        events.append(event_to_payload(done))
        batch = JournalBatch(agent_id=call.journal.agent_id, first_seq=after, events=tuple(events))
        await write_batch(store, batch)
        return ModelCallOutput(events=tuple(events), usage=usage, cost_usd=cost)

    def _answered_before(
        self, spec: AgentSpec, earlier: tuple[dict[str, Any], ...]
    ) -> ModelCallOutput:
        """The output of an earlier attempt of this call, from the events it journaled."""
        last = event_from_payload(earlier[-1])
        if isinstance(last, ModelFailed):
            return ModelCallOutput(events=earlier, error=last.error)
        if not isinstance(last, ModelCompleted):
            raise ApplicationError(
                f"agent {spec.agent_id}'s journal holds a {last.kind!r} event where a model "
                "response ends",
                type=JOURNAL_DIVERGED,
                non_retryable=True,
            )
        price = price_for(self.services.config.prices, last.model or spec.model.model)
        usage = last.usage.model_dump(mode="json")
        return ModelCallOutput(events=earlier, usage=usage, cost_usd=cost_of(last.usage, price))

    async def _model_failed(self, call: ModelCallInput, after: int, error: str) -> ModelCallOutput:
        if call.summary:
            return ModelCallOutput(error=error)
        failed = (event_to_payload(ModelFailed(error=error)),)
        batch = JournalBatch(agent_id=call.journal.agent_id, first_seq=after, events=failed)
        await write_batch(self.services.store, batch)
        return ModelCallOutput(events=failed, error=error)

    @activity.defn(name="corral.run_tools")
    async def run_tools(self, batch: ToolBatchInput) -> ToolBatchOutput:
        """Run the batch's calls, except those held for approval (handed back as asks)."""
        store = self.services.store
        after = await write_batch(store, batch.journal)
        spec = self.services.spec_of(batch.spec)
        calls = [CALL_ADAPTER.validate_python(c) for c in batch.calls]
        slot, ledger = await self.services.slot_of(spec)
        answered = {a.call_id for a in batch.answers}
        known = {e.call_id: e for e in ledger if e.call_id not in answered}
        journaled = {
            c.call_id: _from_ledger(spec, c, known[c.call_id]) for c in calls if c.call_id in known
        }
        fresh = [c for c in calls if c.call_id not in known]
        approver = HeldApprover(spec.agent_id, batch.answers)
        rerun = {e.call_id for e in ledger if e.call_id in answered}
        registry, core_tools = await self.services.batch_tools(spec, slot, after)
        async with heartbeating():
            journaled.update(await self._run_fresh(spec, fresh, registry, approver, rerun))
        results = tuple(
            event_to_payload(journaled[c.call_id]) for c in calls if c.call_id not in approver.asks
        )
        events = (*_tools_changed(core_tools, registry), *results)
        done = JournalBatch(agent_id=spec.agent_id, first_seq=after, events=events)
        await write_batch(store, done)
        asks = tuple(approver.asks.values())
        return ToolBatchOutput(events=events, host=self.services.host, asks=asks)

    async def _run_fresh(
        self,
        spec: AgentSpec,
        calls: Sequence[FunctionCall],
        registry: ToolRegistry,
        approver: HeldApprover,
        rerun: set[str],
    ) -> dict[str, ToolResult]:
        """The journaled result of each call run (not of those held for approval); the ledger
        keeps what it keeps locally (`ledger_output`), so the journal holds a large output once."""
        store = self.services.store
        spans = ToolSpans()
        journaled: dict[str, ToolResult] = {}

        async def started(call: ToolCall) -> None:
            spans.start(call)
            CURRENT_CALL.set(call.call_id)
            if call.call_id in rerun:  # held for approval last time: its entry is there
                return
            await store.ledger_start(
                LedgerEntry.of_call(call, spec.agent_id, started_at=time.time())
            )

        async def ended(call: ToolCall, output: ToolOutput) -> None:
            spans.end(call, output)
            if call.call_id in approver.asks:  # not run: it waits for an answer
                return
            result = journaled[call.call_id] = _journaled(spec, call.call_id, output)
            with anyio.CancelScope(shield=True):
                await store.ledger_finish(
                    spec.agent_id,
                    call.call_id,
                    output=ledger_output(result),
                    success=output.success,
                    at=time.time(),
                )

        tool_calls = [ToolCall(c.call_id, c.name, c.arguments) for c in calls]
        hooks = self.services.config.hooks
        runner = None if hooks.empty else HookRunner(hooks)
        context = build_tool_context(spec, ToolServices(approver=approver, hooks=runner))
        try:
            await run_tool_calls(registry, tool_calls, context, on_start=started, on_result=ended)
        finally:
            spans.close()
        return journaled

    @activity.defn(name="corral.finish_item")
    async def finish_item(self, finish: FinishInput) -> str:
        store = self.services.store
        await write_batch(store, finish.journal)
        spec = self.services.spec_of(await _agent_config(store, finish.agent_id))
        slot, _ = await self.services.slot_of(spec)
        assert slot is not None, "fan-out workers always have report_result"
        now = time.time()
        await store.update_agent(
            finish.agent_id,
            status=finish.status,
            final_message=finish.message,
            error=finish.error,
            usage=finish.usage,
            cost_usd=finish.cost_usd,
            updated_at=now,
        )
        fields: dict[str, Any] = {"usage": usage_counts(finish.usage), "cost_usd": finish.cost_usd}
        if slot.has_result:
            fields.update(status="done", result=slot.result, error=None)
        else:
            fields.update(status="failed", error=slot.failure(finish.status, finish.error))
        await store.update_item(finish.run_id, finish.index, **fields)
        return str(fields["status"])

    @activity.defn(name="corral.fail_items")
    async def fail_items(self, skipped: SkippedItems) -> None:
        """Journal the items a fan-out did not start as failed, each with its reason."""
        for index, error in skipped.errors.items():
            await self.services.store.update_item(
                skipped.run_id, index, status="failed", error=error
            )

    @activity.defn(name="corral.host_lost")
    async def host_lost(self, lost: HostLostInput) -> None:
        """The item's host stopped answering: its agent is closed, and the journal says why."""
        error = (
            f"host {lost.host} stopped answering ({lost.reason}); item {lost.index} restarts "
            "from its beginning on another host with a fresh workspace"
        )
        store = self.services.store
        if await store.get_agent(lost.agent_id) is not None:
            await store.update_agent(
                lost.agent_id, status="interrupted", error=error, updated_at=time.time()
            )
        await store.update_item(lost.run_id, lost.index, status="pending")

    @activity.defn(name="corral.finish_run")
    async def finish_run(self, run_id: str) -> list[dict[str, Any]]:
        store = self.services.store
        records = await store.items(run_id)
        ok = all(r.status == "done" for r in records)
        await store.update_run(run_id, status="done" if ok else "failed", updated_at=time.time())
        return [r.model_dump(mode="json") for r in records]


async def _agent_config(store: Any, agent_id: str) -> dict[str, Any]:
    record = await store.get_agent(agent_id)
    if record is None:
        raise LookupError(f"agent {agent_id} is not in the journal")
    data = dict(record.config)
    data.pop("task", None)
    return data


def _tools_changed(core_tools: ToolList, registry: ToolRegistry) -> tuple[dict[str, Any], ...]:
    """A `tools_changed` event when the batch gave the agent tools its core lacks; it comes
    before the results, so the request the core builds after the last one offers them."""
    grown = grown_tools(core_tools, registry) if core_tools else None
    return () if grown is None else (event_to_payload(ToolsChanged(tools=grown)),)


def _journaled(spec: AgentSpec, call_id: str, output: ToolOutput) -> ToolResult:
    """The result to journal, cut as the local runner cuts it (`journaled_result`)."""
    return journaled_result(
        call_id,
        output,
        token_limit=spec.tool_output_token_limit,
        max_bytes=spec.max_tool_output_bytes,
    )


def _from_ledger(spec: AgentSpec, call: FunctionCall, entry: LedgerEntry) -> ToolResult:
    """The result of a call a failed attempt of this batch ran already, from its ledger entry."""
    if entry.state != "finished" or entry.output is None:
        return _journaled(spec, call.call_id, ToolOutput.error(INTERRUPTED))
    if is_elided(entry.output):  # a large output, kept only in the journal event it never reached
        text = lost_output(call.call_id, call.name, bool(entry.success))
        return _journaled(spec, call.call_id, ToolOutput.error(text))
    output = ToolOutput(entry.output) if entry.success else ToolOutput.error(entry.output)
    return _journaled(spec, call.call_id, output)


def _last_text(items: Sequence[object]) -> str:
    texts = [i.text for i in items if isinstance(i, Message) and i.role == "assistant"]
    return texts[-1] if texts else ""
