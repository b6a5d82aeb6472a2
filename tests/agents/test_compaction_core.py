"""Compaction in the agent core, driven by hand: early background summaries, their fallbacks,
manual compaction, and the record of what was dropped."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from corral.agents._compaction import DroppedItems, rebuild_after_compaction
from corral.agents._core import AgentCore, CoreConfig
from corral.agents._environment import EnvironmentContext
from corral.agents._errors import CoreStateError
from corral.agents._events import (
    AgentStatus,
    AwaitPreparedCompaction,
    CallModel,
    Compact,
    CompactionDone,
    CompactionFailed,
    CompactionPrepared,
    CompactRequested,
    Event,
    Finish,
    ModelCompleted,
    ModelItem,
    PrepareCompaction,
    RunTools,
    ToolResult,
    TurnContext,
    UserInput,
    event_from_payload,
    event_to_payload,
)
from corral.agents._fragments import COMPACTION_SUMMARY, PERMISSIONS, SUMMARIZATION_PROMPT
from corral.agents._items import FunctionCall, FunctionCallOutput, Item, Message, Usage
from corral.agents._tokens import ByteEstimator

PERMS = PERMISSIONS.render("\nread-only\n")
T = TypeVar("T")


def make_core(window: int = 1000, **overrides: object) -> AgentCore:
    config = CoreConfig(agent_id="a", model="m", instructions="be useful", context_window=window)
    return AgentCore(CoreConfig(**{**config.__dict__, **overrides}))


def task(text: str = "do it") -> UserInput:
    env = EnvironmentContext(
        cwd=Path("/w"), shell="bash", current_date="2026-11-29", timezone="Etc/UTC"
    )
    return UserInput(text=text, context=TurnContext(environment=env, permissions=PERMS))


def call(call_id: str) -> FunctionCall:
    return FunctionCall(call_id=call_id, name="shell", arguments="{}")


def answer(core: AgentCore, *items: Item, tokens: int) -> list[object]:
    for item in items:
        core.handle(ModelItem(item=item))
    return list(core.handle(ModelCompleted(usage=Usage(input_tokens=tokens, output_tokens=10))))


def one(actions: Sequence[object], kind: type[T]) -> T:
    found = [a for a in actions if isinstance(a, kind)]
    assert len(found) == 1, actions
    return found[0]


def only_action(actions: Sequence[object]) -> object:
    assert len(actions) == 1, actions
    return actions[0]


def summary_text(item: Item) -> str:
    assert isinstance(item, Message) and COMPACTION_SUMMARY.matches(item.text), item
    return item.text


def prepared(prep: PrepareCompaction, summary: str) -> CompactionPrepared:
    return CompactionPrepared(
        prepared_id=prep.prepared_id,
        covered_items=prep.covered_items,
        summary=summary,
        dropped=prep.dropped,
    )


def test_crossing_the_early_limit_before_tools_asks_for_a_background_summary_of_the_past() -> None:
    core = make_core(tools=({"type": "function", "name": "shell", "parameters": {}},))
    core.handle(task())
    actions = answer(core, call("a"), tokens=820)
    prep = one(actions, PrepareCompaction)
    assert isinstance(actions[-1], RunTools), "the tools still run"
    assert prep.covered_items == 3, "permissions, environment and the task; not the open call"
    assert prep.request.input[-1] == Message(role="user", text=SUMMARIZATION_PROMPT)
    assert list(prep.request.input[:3]) == core.history[:3]
    assert prep.request.tools == core.tools, "the same tools keep the cached prefix"
    assert prep.request.tool_choice == "none"


def test_a_ready_background_summary_replaces_what_it_covered_and_keeps_what_came_after() -> None:
    core = make_core()
    core.handle(task())
    prep = one(answer(core, call("a"), tokens=820), PrepareCompaction)
    assert core.handle(prepared(prep, "we started; next: read a")) == []
    follow = one(core.handle(ToolResult(call_id="a", output="A")), CallModel)
    items = list(follow.request.input)
    assert PERMISSIONS.matches(items[0].text)  # type: ignore[union-attr]
    assert items[2] == Message(role="user", text="do it")
    assert "we started; next: read a" in summary_text(items[3])
    assert items[4:] == [call("a"), FunctionCallOutput(call_id="a", output="A")]
    assert core.compactions == 1 and core.last_compaction == prep.dropped


def test_a_summary_still_running_at_the_threshold_is_awaited_then_applied() -> None:
    core = make_core()
    core.handle(task())
    prep = one(answer(core, call("a"), tokens=850), PrepareCompaction)
    wait = one(core.handle(ToolResult(call_id="a", output="x" * 400)), AwaitPreparedCompaction)
    assert (wait.prepared_id, wait.covered_items) == (prep.prepared_id, prep.covered_items)
    assert core.waiting_for == "compaction"
    assert core.pending_actions() == [wait]
    follow = one(core.handle(prepared(prep, "summary one")), CallModel)
    assert "summary one" in summary_text(follow.request.input[3])
    assert follow.request.input[-1] == FunctionCallOutput(call_id="a", output="x" * 400)


def test_a_failed_background_summary_falls_back_to_compacting_in_the_foreground() -> None:
    core = make_core()
    core.handle(task())
    prep = one(answer(core, call("a"), tokens=850), PrepareCompaction)
    failed = CompactionPrepared(
        prepared_id=prep.prepared_id, covered_items=prep.covered_items, error="model down"
    )
    assert core.handle(failed) == []
    compact = one(core.handle(ToolResult(call_id="a", output="x" * 400)), Compact)
    assert compact.request.input[-2] == FunctionCallOutput(call_id="a", output="x" * 400)
    follow = one(core.handle(CompactionDone(summary="all of it")), CallModel)
    assert "all of it" in summary_text(follow.request.input[-1])
    assert not any(isinstance(i, FunctionCall) for i in follow.request.input)


def test_a_lost_summary_while_awaited_falls_back_to_compacting_in_the_foreground() -> None:
    core = make_core()
    core.handle(task())
    prep = one(answer(core, call("a"), tokens=850), PrepareCompaction)
    core.handle(ToolResult(call_id="a", output="x" * 400))
    lost = CompactionPrepared(
        prepared_id=prep.prepared_id, covered_items=prep.covered_items, error="lost"
    )
    compact = one(core.handle(lost), Compact)
    assert compact.dropped.call_ids == ("a",)
    assert core.waiting_for == "compaction"


def test_a_summary_that_arrives_after_the_turn_ended_is_stale_and_ignored() -> None:
    core = make_core()
    core.handle(task())
    prep = one(answer(core, call("a"), tokens=820), PrepareCompaction)
    one(core.handle(ToolResult(call_id="a", output="A")), CallModel)
    finish = one(answer(core, Message(role="assistant", text="done"), tokens=830), Finish)
    assert finish.status is AgentStatus.COMPLETED
    before = list(core.history)
    assert core.handle(prepared(prep, "too late")) == []
    assert core.history == before and core.compactions == 0


def test_a_summary_is_asked_for_once_per_compaction() -> None:
    core = make_core()
    core.handle(task())
    one(answer(core, call("a"), tokens=820), PrepareCompaction)
    core.handle(ToolResult(call_id="a", output="A"))
    again = answer(core, call("b"), tokens=830)
    assert not any(isinstance(a, PrepareCompaction) for a in again)


def test_passing_the_early_limit_with_tool_outputs_prepares_beside_the_next_request() -> None:
    core = make_core()
    core.handle(task())
    assert len(answer(core, call("a"), tokens=700)) == 1
    actions = list(core.handle(ToolResult(call_id="a", output="y" * 600)))
    prep = one(actions, PrepareCompaction)
    assert isinstance(actions[-1], CallModel)
    assert prep.covered_items == len(core.history), "everything so far is closed"


def test_early_compaction_can_be_turned_off() -> None:
    core = make_core(early_compact_percent=None)
    core.handle(task())
    assert [type(a) for a in answer(core, call("a"), tokens=850)] == [RunTools]
    assert isinstance(only_action(core.handle(ToolResult(call_id="a", output="x" * 400))), Compact)


def test_the_early_limit_follows_a_lowered_threshold() -> None:
    config = CoreConfig(agent_id="a", model="m", instructions="", auto_compact_token_limit=45_000)
    assert config.compact_limit == 45_000
    assert config.early_compact_limit == 40_000
    assert CoreConfig(agent_id="a", model="m", instructions="").early_compact_limit == 217_600


def test_a_summary_for_other_items_than_asked_is_a_state_error() -> None:
    core = make_core()
    core.handle(task())
    prep = one(answer(core, call("a"), tokens=820), PrepareCompaction)
    wrong = CompactionPrepared(prepared_id=prep.prepared_id, covered_items=99, summary="s")
    with pytest.raises(CoreStateError, match="covered 3 items, not 99"):
        core.handle(wrong)


def test_the_compact_action_records_what_it_drops() -> None:
    core = make_core(early_compact_percent=None)
    core.handle(task("first"))
    answer(core, Message(role="assistant", text="ok"), call("a"), call("b"), tokens=300)
    core.handle(ToolResult(call_id="a", output="A"))
    core.handle(ToolResult(call_id="b", output="B"))
    answer(core, call("c"), tokens=890)
    compact = one(core.handle(ToolResult(call_id="c", output="C")), Compact)
    assert compact.dropped == DroppedItems(
        count=9,
        by_type={
            "context_fragment": 2,
            "assistant_message": 1,
            "function_call": 3,
            "function_call_output": 3,
        },
        call_ids=("a", "b", "c"),
    ), "the task is kept; everything else goes"
    assert compact.dropped_items == 9


def test_manual_compaction_of_an_idle_agent_rebuilds_its_history_and_stays_idle() -> None:
    core = make_core(window=272_000)
    core.handle(task("first"))
    answer(core, call("a"), tokens=100)
    core.handle(ToolResult(call_id="a", output="A"))
    answer(core, Message(role="assistant", text="done"), tokens=120)
    compact = one(core.handle(CompactRequested()), Compact)
    assert compact.dropped.call_ids == ("a",)
    assert core.handle(CompactionDone(summary="did a", dropped=compact.dropped)) == []
    assert core.waiting_for == "done" and core.status is AgentStatus.COMPLETED
    assert [i.text for i in core.history if isinstance(i, Message)][2:] == [
        "first",
        summary_text(core.history[-1]),
    ]
    assert core.handle(CompactRequested()) == [], "nothing new to compact"


def test_a_failed_manual_compaction_leaves_the_history_as_it_was() -> None:
    core = make_core(window=272_000)
    core.handle(task())
    answer(core, Message(role="assistant", text="done"), tokens=100)
    before = list(core.history)
    one(core.handle(CompactRequested()), Compact)
    assert core.handle(CompactionFailed(error="down")) == []
    assert core.history == before and core.status is AgentStatus.COMPLETED


def test_manual_compaction_of_a_running_agent_is_refused() -> None:
    core = make_core()
    core.handle(task())
    with pytest.raises(CoreStateError, match="needs an idle agent"):
        core.handle(CompactRequested())


@pytest.mark.parametrize(
    "event",
    [
        CompactionDone(summary="s", dropped=DroppedItems(count=2, by_type={"reasoning": 2})),
        CompactionPrepared(
            prepared_id=3,
            covered_items=7,
            summary="s",
            usage=Usage(input_tokens=5),
            dropped=DroppedItems(count=1, call_ids=("c",)),
        ),
        CompactionPrepared(prepared_id=3, covered_items=7, error="e"),
        CompactRequested(),
    ],
)
def test_compaction_events_survive_the_journal_round_trip(event: Event) -> None:
    payload = json.loads(json.dumps(event_to_payload(event)))
    assert event_from_payload(payload) == event


def test_images_a_tool_showed_are_not_kept_as_recent_user_messages_after_compaction() -> None:
    said = Message(role="user", text="look at the plot")
    shown = Message(role="user", text="", images=("data:image/png;base64,AAAA",))
    rebuilt = rebuild_after_compaction([said, shown], "a plot was viewed", [], ByteEstimator())
    assert said in rebuilt
    assert shown not in rebuilt
