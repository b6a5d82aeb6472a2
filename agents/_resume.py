"""Resume by replay: rebuild a core from the journal and carry on from its first open action.

A tool call whose result reached the ledger is never run again: its recorded output is fed
back. A call that was started but has no recorded end (the process died while it ran) is not
re-run either: the model is told it was interrupted and that its outcome is unknown.
"""

from __future__ import annotations

from ._core import AgentCore, CoreConfig
from ._events import (
    NOTE_KINDS,
    Action,
    AgentStatus,
    Finish,
    Resume,
    RunTools,
    ToolResult,
    event_from_payload,
)
from ._fragments import tool_call_interrupted_fragment
from ._items import FunctionCall
from ._runner import AgentRunner
from ._store import LedgerEntry, Store


async def replay_core(store: Store, config: CoreConfig) -> AgentCore:
    """A fresh core fed the journaled events of `config.agent_id` (notes skipped), no actions."""
    core = AgentCore(config)
    for record in await store.events(config.agent_id):
        if record.kind not in NOTE_KINDS:
            core.handle(event_from_payload(record.payload))
    return core


async def continue_agent(runner: AgentRunner) -> Finish:
    """Carry a replayed agent on to its end."""
    core = runner.core
    if core.waiting_for == "done":
        if core.status is AgentStatus.COMPLETED:
            return Finish(status=core.status, message=core.final_message)
        return await runner.drive(await runner.feed(Resume()))
    if core.waiting_for == "input":
        return Finish(status=AgentStatus.FAILED, error="the agent never received its task")
    actions = core.pending_actions()
    if actions and isinstance(actions[0], RunTools):
        actions = await _settle_journaled_calls(runner, actions[0].calls)
    return await runner.drive(actions)


async def _settle_journaled_calls(
    runner: AgentRunner, calls: tuple[FunctionCall, ...]
) -> list[Action]:
    ledger = {e.call_id: e for e in await runner.store.ledger(runner.agent_id)}
    to_run: list[FunctionCall] = []
    actions: list[Action] = []
    for call in calls:
        entry = ledger.get(call.call_id)
        if entry is None:
            to_run.append(call)
            continue
        actions = await runner.feed(await _result_from_ledger(runner, call, entry))
    return [RunTools(tuple(to_run))] if to_run else actions


async def _result_from_ledger(
    runner: AgentRunner, call: FunctionCall, entry: LedgerEntry
) -> ToolResult:
    if entry.state == "finished" and entry.output is not None:
        return ToolResult(call_id=call.call_id, output=entry.output, success=bool(entry.success))
    text = tool_call_interrupted_fragment(call.call_id, call.name)
    await runner.store.ledger_finish(
        runner.agent_id, call.call_id, output=text, success=False, at=runner.clock()
    )
    return ToolResult(call_id=call.call_id, output=text, success=False)
