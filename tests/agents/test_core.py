"""The agent core, driven by hand: events in, actions out, no fakes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from corral.agents._core import ABORTED_OUTPUT, AgentCore, CoreConfig
from corral.agents._environment import EnvironmentContext
from corral.agents._errors import CoreStateError
from corral.agents._events import (
    AgentStatus,
    BudgetExceeded,
    CallModel,
    Compact,
    CompactionDone,
    CompactionFailed,
    Event,
    Finish,
    Interrupt,
    ModelCompleted,
    ModelFailed,
    ModelItem,
    Notify,
    Resume,
    RunTools,
    ToolResult,
    ToolsChanged,
    TurnContext,
    UserInput,
    event_from_payload,
    event_to_payload,
)
from corral.agents._fragments import (
    ENVIRONMENT_CONTEXT,
    PERMISSIONS,
    SUMMARIZATION_PROMPT,
    TURN_ABORTED,
)
from corral.agents._items import FunctionCall, FunctionCallOutput, Message, Usage

TOOLS = ({"type": "function", "name": "shell", "description": "run", "parameters": {}},)
PERMS = PERMISSIONS.render("\nread-only\n")


def make_core(**overrides: object) -> AgentCore:
    config = CoreConfig(agent_id="agent-1", model="m", instructions="be useful", tools=TOOLS)
    return AgentCore(config.__class__(**{**config.__dict__, **overrides}))


def context(cwd: str = "/w", date: str = "2026-11-29") -> TurnContext:
    env = EnvironmentContext(cwd=Path(cwd), shell="bash", current_date=date, timezone="Etc/UTC")
    return TurnContext(environment=env, permissions=PERMS)


def task(text: str = "do it", **kw: str) -> UserInput:
    return UserInput(text=text, context=context(**kw))


def answer(core: AgentCore, *items: Message | FunctionCall, tokens: int = 100) -> list[object]:
    for item in items:
        assert core.handle(ModelItem(item=item)) == []
    return list(core.handle(ModelCompleted(usage=Usage(input_tokens=tokens, output_tokens=10))))


def only(actions: Sequence[object]) -> object:
    assert len(actions) == 1, actions
    return actions[0]


def call(call_id: str, name: str = "shell") -> FunctionCall:
    return FunctionCall(call_id=call_id, name=name, arguments="{}")


def say(text: str) -> Message:
    return Message(role="assistant", text=text)


def test_first_turn_sends_permissions_then_environment_then_the_task() -> None:
    core = make_core()
    action = only(list(core.handle(task())))
    assert isinstance(action, CallModel)
    request = action.request
    assert request.instructions == "be useful"
    assert request.prompt_cache_key == "agent-1"
    assert list(request.tools) == list(TOOLS)
    roles = [(i.role, i.text[:22]) for i in request.input if isinstance(i, Message)]
    assert roles[0] == ("developer", PERMS[:22])
    assert ENVIRONMENT_CONTEXT.matches(request.input[1].text)  # type: ignore[union-attr]
    assert request.input[-1] == Message(role="user", text="do it")


def test_a_text_answer_finishes_the_agent_with_that_message() -> None:
    core = make_core()
    core.handle(task())
    finish = only(answer(core, say("all done")))
    assert finish == Finish(status=AgentStatus.COMPLETED, message="all done")
    assert core.status is AgentStatus.COMPLETED


def test_function_calls_run_together_and_outputs_are_recorded_in_call_order() -> None:
    core = make_core()
    first = only(list(core.handle(task())))
    assert isinstance(first, CallModel)
    run = only(answer(core, call("a"), call("b")))
    assert run == RunTools((call("a"), call("b")))
    assert core.handle(ToolResult(call_id="b", output="B")) == []
    follow = only(list(core.handle(ToolResult(call_id="a", output="A"))))
    assert isinstance(follow, CallModel)
    tail = list(follow.request.input[-2:])
    assert tail == [
        FunctionCallOutput(call_id="a", output="A"),
        FunctionCallOutput(call_id="b", output="B"),
    ]


def test_every_request_extends_the_previous_one() -> None:
    core = make_core()
    first = only(list(core.handle(task())))
    assert isinstance(first, CallModel)
    answer(core, call("a"))
    second = only(list(core.handle(ToolResult(call_id="a", output="ok"))))
    assert isinstance(second, CallModel)
    before = [i.to_wire() for i in first.request.input]
    after = [i.to_wire() for i in second.request.input]
    assert after[: len(before)] == before


def test_a_later_turn_sends_only_the_environment_diff() -> None:
    core = make_core()
    core.handle(task())
    answer(core, say("one"))
    second = only(list(core.handle(task("again", cwd="/w/sub"))))
    assert isinstance(second, CallModel)
    new = second.request.input[-2:]
    assert isinstance(new[0], Message) and "<cwd>/w/sub</cwd>" in new[0].text
    assert new[1] == Message(role="user", text="again")
    assert (
        sum(
            1
            for i in second.request.input
            if isinstance(i, Message) and PERMISSIONS.matches(i.text)
        )
        == 1
    )


def test_an_unchanged_context_adds_nothing_on_a_later_turn() -> None:
    core = make_core()
    core.handle(task())
    answer(core, say("one"))
    before = len(core.history)
    core.handle(task("again"))
    assert core.history[before:] == [Message(role="user", text="again")]


def test_input_during_a_model_call_is_sent_with_the_next_request() -> None:
    core = make_core()
    core.handle(task())
    assert core.handle(task("also this")) == []
    follow = only(answer(core, say("first answer")))
    assert isinstance(follow, CallModel)
    assert follow.request.input[-1] == Message(role="user", text="also this")


def test_a_notification_while_idle_joins_history_and_while_busy_waits() -> None:
    core = make_core()
    assert core.handle(Notify(text="<subagent_notification>x</subagent_notification>")) == []
    core.handle(task())
    core.handle(Notify(text="<subagent_notification>y</subagent_notification>"))
    follow = only(answer(core, call("a")))
    assert isinstance(follow, RunTools)
    nxt = only(list(core.handle(ToolResult(call_id="a", output="ok"))))
    assert isinstance(nxt, CallModel)
    assert nxt.request.input[-1].text.endswith("y</subagent_notification>")  # type: ignore[union-attr]


def test_a_model_failure_finishes_with_the_error() -> None:
    core = make_core()
    core.handle(task())
    finish = only(list(core.handle(ModelFailed(error="HTTP 500 after 5 attempts"))))
    assert finish == Finish(status=AgentStatus.FAILED, error="HTTP 500 after 5 attempts")


def test_an_interrupt_during_tools_records_aborted_outputs_and_a_marker() -> None:
    core = make_core()
    core.handle(task())
    answer(core, call("a"), call("b"))
    core.handle(ToolResult(call_id="a", output="done"))
    finish = only(list(core.handle(Interrupt())))
    assert isinstance(finish, Finish) and finish.status is AgentStatus.INTERRUPTED
    outputs = [i for i in core.history if isinstance(i, FunctionCallOutput)]
    assert [o.output for o in outputs] == ["done", ABORTED_OUTPUT]
    last = core.history[-1]
    assert isinstance(last, Message) and TURN_ABORTED.matches(last.text)


def test_an_interrupt_while_idle_does_nothing() -> None:
    assert make_core().handle(Interrupt()) == []


def test_resume_after_an_interrupt_calls_the_model_again() -> None:
    core = make_core()
    core.handle(task())
    core.handle(Interrupt())
    again = only(list(core.handle(Resume())))
    assert isinstance(again, CallModel)
    assert core.status is AgentStatus.RUNNING


def test_resume_of_a_completed_agent_does_nothing() -> None:
    core = make_core()
    core.handle(task())
    answer(core, say("done"))
    assert core.handle(Resume()) == []


def test_the_turn_budget_ends_the_agent_before_the_next_request() -> None:
    core = make_core(max_turns=1)
    core.handle(task())
    answer(core, call("a"))
    finish = only(list(core.handle(ToolResult(call_id="a", output="ok"))))
    assert isinstance(finish, Finish) and finish.status is AgentStatus.BUDGET_EXCEEDED
    assert "turn budget" in (finish.error or "")


def test_the_tool_call_budget_refuses_calls_past_the_limit() -> None:
    core = make_core(max_tool_calls=1)
    core.handle(task())
    finish = only(answer(core, call("a"), call("b")))
    assert isinstance(finish, Finish) and finish.status is AgentStatus.BUDGET_EXCEEDED
    outputs = [i for i in core.history if isinstance(i, FunctionCallOutput)]
    assert len(outputs) == 2, "every call keeps an output so history stays valid"


def test_the_token_budget_counts_reported_usage() -> None:
    core = make_core(max_tokens=150)
    core.handle(task())
    answer(core, call("a"), tokens=200)
    finish = only(list(core.handle(ToolResult(call_id="a", output="ok"))))
    assert isinstance(finish, Finish) and "token budget" in (finish.error or "")


def test_a_budget_signal_from_the_driver_finishes_the_agent() -> None:
    core = make_core()
    core.handle(task())
    finish = only(list(core.handle(BudgetExceeded(reason="cost budget exceeded"))))
    assert finish == Finish(status=AgentStatus.BUDGET_EXCEEDED, error="cost budget exceeded")


def test_context_tokens_are_reported_usage_plus_an_estimate_of_newer_items() -> None:
    core = make_core()
    core.handle(task())
    answer(core, call("a"), tokens=1000)
    core.handle(ToolResult(call_id="a", output="x" * 400))
    output_item = core.history[-1]
    expected_extra = -(-len(json.dumps(output_item.to_wire(), separators=(",", ":")).encode()) // 4)
    assert core.context_tokens() == 1010 + expected_extra


def test_large_tool_outputs_are_cut_in_the_middle_with_a_marker() -> None:
    core = make_core(tool_output_token_limit=50)
    core.handle(task())
    answer(core, call("a"))
    core.handle(ToolResult(call_id="a", output="h" * 1000 + "t" * 1000))
    output = core.history[-1]
    assert isinstance(output, FunctionCallOutput)
    assert output.output.startswith("h") and output.output.endswith("t")
    assert "tokens truncated" in output.output and len(output.output) < 400


def test_a_full_context_is_compacted_before_the_next_request() -> None:
    core = make_core(context_window=1000)
    core.handle(task("the original task"))
    answer(core, call("a"), tokens=950)
    compact = only(list(core.handle(ToolResult(call_id="a", output="big"))))
    assert isinstance(compact, Compact)
    assert compact.request.tools == core.tools, "the same tools keep the cached prefix"
    assert compact.request.tool_choice == "none"
    assert compact.request.input[-1] == Message(role="user", text=SUMMARIZATION_PROMPT)
    follow = only(list(core.handle(CompactionDone(summary="we ran a; next: b"))))
    assert isinstance(follow, CallModel)
    texts = [i.text for i in follow.request.input if isinstance(i, Message)]
    assert PERMISSIONS.matches(texts[0]), "the context is re-injected first"
    assert "the original task" in texts
    assert "we ran a; next: b" in texts[-1], "the summary comes last"
    assert not any(isinstance(i, FunctionCall | FunctionCallOutput) for i in follow.request.input)


def test_a_failed_compaction_fails_the_agent() -> None:
    core = make_core(context_window=1000)
    core.handle(task())
    answer(core, call("a"), tokens=950)
    core.handle(ToolResult(call_id="a", output="big"))
    finish = only(list(core.handle(CompactionFailed(error="model down"))))
    assert finish == Finish(status=AgentStatus.FAILED, error="compaction failed: model down")


def test_pending_actions_reissue_the_open_model_call_or_the_missing_tools() -> None:
    core = make_core()
    core.handle(task())
    core.handle(ModelItem(item=say("partial")))
    pending = only(core.pending_actions())
    assert isinstance(pending, CallModel)
    assert pending.request.input[-1] == Message(role="user", text="do it")
    answer(core, call("a"), call("b"))
    core.handle(ToolResult(call_id="a", output="A"))
    assert core.pending_actions() == [RunTools((call("b"),))]


def test_a_tool_result_for_an_unknown_call_is_a_state_error() -> None:
    core = make_core()
    core.handle(task())
    answer(core, call("a"))
    with pytest.raises(CoreStateError, match="unknown call id"):
        core.handle(ToolResult(call_id="zzz", output=""))


def test_an_event_out_of_order_is_a_state_error() -> None:
    with pytest.raises(CoreStateError, match="waits for input"):
        make_core().handle(ModelCompleted(usage=Usage()))


@pytest.mark.parametrize(
    "event",
    [
        task(),
        ModelItem(item=call("a")),
        ModelCompleted(usage=Usage(input_tokens=3, cached_input_tokens=1), model="m"),
        ModelFailed(error="e"),
        ToolResult(call_id="a", output="o", success=False),
        CompactionDone(summary="s"),
        CompactionFailed(error="e"),
        BudgetExceeded(reason="r"),
        Interrupt(),
        Notify(text="n"),
        ToolsChanged(tools=({"type": "function", "name": "x"},)),
        Resume(),
    ],
)
def test_every_event_survives_the_journal_round_trip(event: Event) -> None:
    payload = json.loads(json.dumps(event_to_payload(event)))
    assert event_from_payload(payload) == event


def test_a_tools_change_applies_from_the_next_request_and_only_appends() -> None:
    core = make_core()
    core.handle(task())
    answer(core, call("a"))
    grown = (*TOOLS, {"type": "function", "name": "mcp__time__now", "parameters": {}})
    assert core.handle(ToolsChanged(tools=grown)) == []
    follow = only(list(core.handle(ToolResult(call_id="a", output="ok"))))
    assert isinstance(follow, CallModel)
    assert list(follow.request.tools) == list(grown)
