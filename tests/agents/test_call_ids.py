"""Repeated or missing call ids, made unique by the core the same way on every replay."""

from __future__ import annotations

import pytest

from corral.agents._call_ids import CallIds
from corral.agents._core import AgentCore
from corral.agents._events import CallModel, Event, ModelCompleted, ModelItem, RunTools, ToolResult
from corral.agents._items import FunctionCall, FunctionCallOutput, Message, Usage

from .test_core import answer, call, make_core, only, say, task


def ids_of(actions: list[object]) -> list[str]:
    run = only(actions)
    assert isinstance(run, RunTools)
    return [c.call_id for c in run.calls]


def answer_all(core: AgentCore, run: list[object], text: str = "ok") -> CallModel:
    ids = ids_of(run)
    actions: list[object] = []
    for call_id in ids:
        actions = list(core.handle(ToolResult(call_id=call_id, output=f"{text} {call_id}")))
    follow = only(actions)
    assert isinstance(follow, CallModel)
    return follow


def test_a_call_id_used_in_an_earlier_turn_gets_a_numbered_suffix() -> None:
    core = make_core()
    core.handle(task())
    answer_all(core, answer(core, call("call_0")))
    answer_all(core, answer(core, call("call_0")))
    assert ids_of(answer(core, call("call_0"))) == ["call_0~3"]


def test_the_result_is_matched_and_sent_back_under_the_rewritten_id() -> None:
    core = make_core()
    core.handle(task())
    answer_all(core, answer(core, call("call_0")))
    follow = answer_all(core, answer(core, call("call_0")))
    calls = [i.call_id for i in follow.request.input if isinstance(i, FunctionCall)]
    outputs = [
        (i.call_id, i.output) for i in follow.request.input if isinstance(i, FunctionCallOutput)
    ]
    assert calls == ["call_0", "call_0~2"]
    assert outputs == [("call_0", "ok call_0"), ("call_0~2", "ok call_0~2")]


def test_ids_repeated_within_one_response_are_made_unique_in_order() -> None:
    core = make_core()
    core.handle(task())
    assert ids_of(answer(core, call("c"), call("c"), call("c"))) == ["c", "c~2", "c~3"]


def test_missing_ids_are_numbered_from_one() -> None:
    core = make_core()
    core.handle(task())
    assert ids_of(answer(core, call(""), call(""))) == ["call~1", "call~2"]


def test_an_id_that_spells_a_rewritten_one_is_rewritten_too() -> None:
    core = make_core()
    core.handle(task())
    assert ids_of(answer(core, call("x"), call("x~2"), call("x"))) == ["x", "x~2", "x~3"]


def test_a_replay_of_the_same_events_gives_every_call_the_same_id() -> None:
    events: list[Event] = [task()]
    core = make_core()
    core.handle(events[0])
    for _ in range(3):
        items = [call("call_0"), call("")]
        for item in items:
            events.append(ModelItem(item=item))
            core.handle(events[-1])
        events.append(ModelCompleted(usage=Usage(input_tokens=10)))
        for action in core.handle(events[-1]):
            assert isinstance(action, RunTools)
            for c in action.calls:
                events.append(ToolResult(call_id=c.call_id, output="r"))
                core.handle(events[-1])
    replayed = make_core()
    for event in events:
        replayed.handle(event)
    assert replayed.history == core.history
    ids = [i.call_id for i in core.history if isinstance(i, FunctionCall)]
    assert len(ids) == len(set(ids)) == 6


def test_the_drivers_preview_is_what_the_core_then_takes_in() -> None:
    core = make_core()
    core.handle(task())
    answer_all(core, answer(core, call("call_0")))
    preview = core.unique_call_id(call("call_0"))
    assert preview == call("call_0~2")
    assert core.unique_call_id(say("hi")) == say("hi")
    # Feeding the preview changes nothing more: the rewrite is idempotent.
    assert ids_of(answer(core, preview)) == ["call_0~2"]


@pytest.mark.parametrize("count", [1, 50, 500])
def test_rewriting_stays_unique_for_a_model_that_repeats_one_id(count: int) -> None:
    ids = CallIds()
    admitted = [ids.admit(call("call_0")) for _ in range(count)]
    names = [c.call_id for c in admitted if isinstance(c, FunctionCall)]
    assert len(set(names)) == count
    assert names[:2] == ["call_0", "call_0~2"][:count]


def test_items_that_are_not_calls_pass_unchanged() -> None:
    ids = CallIds()
    message = Message(role="assistant", text="hello")
    assert ids.admit(message) is message
