"""Resume by replay: rebuild a core from the journal and carry on from its first open action.

A tool call whose result reached the ledger is never run again: its recorded output is fed
back. A call that was started but has no recorded end (the process died while it ran) is run
again when its tool has no side effects (`Tool.side_effects` is False: reads, `report_result`,
whose whole result is in its journaled arguments); otherwise the model is told it was
interrupted and that its outcome is unknown.
"""

from __future__ import annotations

from ._core import AgentCore, CoreConfig
from ._core_config import Waiting
from ._events import (
    NOTE_KINDS,
    Action,
    AgentStatus,
    Finish,
    ResponseDiscarded,
    Resume,
    RunTools,
    ToolResult,
    event_from_payload,
)
from ._fragments import tool_call_interrupted_fragment
from ._items import FunctionCall
from ._outputs import is_elided, lost_output
from ._runner import AgentRunner
from ._store import LedgerEntry, Store


async def replay_core(store: Store, config: CoreConfig) -> AgentCore:
    """A fresh core fed the journaled events of `config.agent_id` (notes skipped), no actions."""
    core = AgentCore(config)
    for record in await store.events(config.agent_id):
        if record.kind not in NOTE_KINDS:
            core.handle(event_from_payload(record.payload))
    core.restart_growth_baseline()
    return core


async def continue_agent(runner: AgentRunner) -> Finish:
    """Carry a replayed agent on to its end."""
    core = runner.core
    if core.waiting_for is Waiting.DONE:
        if core.status is AgentStatus.COMPLETED:
            return Finish(status=core.status, message=core.final_message)
        return await runner.drive(await runner.feed(Resume()))
    if core.waiting_for is Waiting.INPUT:
        return Finish(status=AgentStatus.FAILED, error="the agent never received its task")
    if core.waiting_for is Waiting.MODEL and core.partial_response:
        await runner.feed(ResponseDiscarded())
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
        elif _answered(entry):
            actions = await runner.feed(_recorded_result(call, entry))
        elif _safe_to_repeat(runner, call):
            runner.run_again(call.call_id, ledger_state=entry.state)
            to_run.append(call)
        else:
            actions = await runner.feed(await _unknown_outcome(runner, call, entry))
    return [RunTools(tuple(to_run))] if to_run else actions


def _answered(entry: LedgerEntry) -> bool:
    """Whether the ledger holds the call's answer (a large one is kept in the journal event
    alone, which a crash between the two writes may have lost)."""
    return entry.state == "finished" and entry.output is not None and not is_elided(entry.output)


def _safe_to_repeat(runner: AgentRunner, call: FunctionCall) -> bool:
    # A tool this process does not know (an MCP server not up yet) counts as side-effecting.
    tool = runner.registry.get(call.name)
    return tool is not None and not tool.side_effects


def _recorded_result(call: FunctionCall, entry: LedgerEntry) -> ToolResult:
    output = entry.output or ""
    return ToolResult(call_id=call.call_id, output=output, success=bool(entry.success))


async def _unknown_outcome(
    runner: AgentRunner, call: FunctionCall, entry: LedgerEntry
) -> ToolResult:
    if entry.state == "finished":  # it ended, but its large output did not reach the journal
        text = lost_output(call.call_id, call.name, bool(entry.success))
        return ToolResult(call_id=call.call_id, output=text, success=False)
    text = tool_call_interrupted_fragment(call.call_id, call.name)
    await runner.store.ledger_finish(
        runner.agent_id, call.call_id, output=text, success=False, at=runner.clock()
    )
    return ToolResult(call_id=call.call_id, output=text, success=False)
