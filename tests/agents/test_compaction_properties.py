"""Properties of the compacted history over random histories (hypothesis): tool calls never part
from their outputs, the summary comes last, the current context is put back, and the kept user
messages are the most recent ones within the 20k-token budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from corral.agents._compaction import (
    USER_MESSAGES_TOKEN_BUDGET,
    _is_contextual,
    closed_prefix_len,
    describe_dropped,
    rebuild_history,
)
from corral.agents._fragments import (
    ALL_KINDS,
    COMPACTION_SUMMARY,
    ENVIRONMENT_CONTEXT,
    PERMISSIONS,
    SKILL,
    SUBAGENT_NOTIFICATION,
    USER_INSTRUCTIONS,
    is_contextual,
)
from corral.agents._items import FunctionCall, FunctionCallOutput, Item, Message, Reasoning
from corral.agents._tokens import ByteEstimator

COUNTER = ByteEstimator()
SUMMARY = "the work so far"
CONTEXT = [
    Message(role="developer", text=PERMISSIONS.render("\nworkspace-write, current\n")),
    Message(role="user", text=ENVIRONMENT_CONTEXT.render("\n<cwd>/now</cwd>\n")),
]
OLD_FRAGMENTS = [
    Message(role="developer", text=PERMISSIONS.render("\nread-only, old\n")),
    Message(role="user", text=ENVIRONMENT_CONTEXT.render("\n<cwd>/then</cwd>\n")),
    Message(role="user", text=USER_INSTRUCTIONS.render("/w\n\n<INSTRUCTIONS>\nx\n")),
    Message(role="user", text=SUBAGENT_NOTIFICATION.render("child done")),
    Message(role="user", text=SKILL.render("\nskill body\n")),
    Message(role="user", text=COMPACTION_SUMMARY.render("\nan older summary\n")),
]
# Derandomized: the same 200 histories every run, as every test here is deterministic.
PROPERTY_SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None)


@dataclass(frozen=True)
class Calls:
    """A model response's calls, then the outputs of `answered` of them."""

    ids: tuple[str, ...]
    answered: tuple[bool, ...]


def _user_text(size: int, fill: str, serial: int) -> str:
    return f"[{serial}]" + fill * size


# Sizes in characters of 1 to 4 UTF-8 bytes: a few of the big ones overrun the 20k-token budget.
user_messages = st.builds(
    lambda size, fill: ("user", size, fill),
    st.one_of(st.integers(0, 400), st.integers(15_000, 45_000)),
    st.sampled_from(["a", "é", "€", "😀"]),
)
segments = st.one_of(
    user_messages,
    user_messages,
    user_messages,
    st.builds(lambda n: ("assistant", n, ""), st.integers(0, 300)),
    st.builds(lambda i: ("fragment", i, ""), st.integers(0, len(OLD_FRAGMENTS) - 1)),
    st.just(("developer", 0, "")),
    st.just(("reasoning", 0, "")),
    st.builds(lambda k, answered: ("calls", k, answered), st.integers(1, 3), st.integers(0, 7)),
)


def build_history(plan: Sequence[tuple[str, int, str | int]]) -> list[Item]:
    history: list[Item] = []
    for serial, (kind, size, extra) in enumerate(plan, start=1):
        if kind == "user":
            history.append(Message(role="user", text=_user_text(size, str(extra), serial)))
        elif kind == "assistant":
            history.append(Message(role="assistant", text=f"said {serial} " + "b" * size))
        elif kind == "fragment":
            history.append(OLD_FRAGMENTS[size])
        elif kind == "developer":
            history.append(Message(role="developer", text=f"plain note {serial}"))
        elif kind == "reasoning":
            history.append(Reasoning(id=f"rs{serial}", summary="thinking"))
        else:
            history.extend(_calls(serial, size, int(extra)))
    return history


def _calls(serial: int, count: int, answered_mask: int) -> list[Item]:
    ids = [f"c{serial}_{n}" for n in range(count)]
    items: list[Item] = [FunctionCall(call_id=i, name="shell", arguments="{}") for i in ids]
    for n, call_id in enumerate(ids):
        if answered_mask >> n & 1:
            items.append(FunctionCallOutput(call_id=call_id, output=f"out {call_id}"))
    return items


histories = st.lists(segments, max_size=24).map(build_history)


def real_user_texts(items: Sequence[Item]) -> list[str]:
    """What a person said: generated user messages open with `[serial]`, fragments with markers."""
    return [i.text for i in items if isinstance(i, Message) and i.text.startswith("[")]


def assert_pairs_whole(items: Sequence[Item]) -> None:
    seen_calls: set[str] = set()
    answered: set[str] = set()
    for item in items:
        if isinstance(item, FunctionCall):
            seen_calls.add(item.call_id)
        elif isinstance(item, FunctionCallOutput):
            assert item.call_id in seen_calls, f"output {item.call_id} kept without its call"
            answered.add(item.call_id)
    assert seen_calls == answered, f"calls kept without outputs: {seen_calls - answered}"


def assert_head(head: Sequence[Item], covered: Sequence[Item]) -> None:
    assert list(head[: len(CONTEXT)]) == CONTEXT, "the current context comes first"
    last = head[-1]
    assert isinstance(last, Message) and COMPACTION_SUMMARY.matches(last.text)
    assert last.text.rstrip().endswith(SUMMARY + "\n" + COMPACTION_SUMMARY.end.rstrip())
    kept = head[len(CONTEXT) : -1]
    assert all(isinstance(i, Message) and i.role == "user" for i in kept)
    texts = real_user_texts(kept)
    assert len(texts) == len(kept), "no stale fragment is kept"
    assert sum(COUNTER.count_text(t) for t in texts) <= USER_MESSAGES_TOKEN_BUDGET
    assert_most_recent(texts, real_user_texts(covered))


def assert_most_recent(kept: list[str], real: list[str]) -> None:
    whole = [t for t in kept if t in real]
    cut = [t for t in kept if t not in real]
    assert kept == cut + whole and len(cut) <= 1, "at most the oldest kept message is cut"
    assert real[len(real) - len(whole) :] == whole, "the newest messages, in order"
    rest = real[: len(real) - len(whole)]
    if cut:
        assert "tokens truncated" in cut[0] and cut[0][:4] == rest[-1][:4]
    elif rest:
        room = USER_MESSAGES_TOKEN_BUDGET - sum(COUNTER.count_text(t) for t in whole)
        assert COUNTER.count_text(rest[-1]) > room, "a message that fitted was left out"


marker_texts = st.builds(
    lambda kind, body, pad, shout, opened, closed: (
        pad
        + ((kind.start.upper() if shout else kind.start) if opened else "")
        + body
        + (kind.end if closed else "")
        + pad
    ),
    st.sampled_from(ALL_KINDS),
    st.builds(lambda text, times: text * times, st.text(max_size=30), st.integers(1, 8)),
    st.sampled_from(["", " ", "\n\t"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@PROPERTY_SETTINGS
@given(marker_texts)
def test_the_fast_fragment_check_agrees_with_the_full_one(text: str) -> None:
    assert _is_contextual(text) == is_contextual(text)


@PROPERTY_SETTINGS
@given(histories)
def test_a_full_compaction_keeps_context_recent_user_messages_and_the_summary_last(
    history: list[Item],
) -> None:
    rebuilt = rebuild_history(history, SUMMARY, CONTEXT, COUNTER)
    assert not any(isinstance(i, FunctionCall | FunctionCallOutput) for i in rebuilt)
    assert_head(rebuilt, history)


@PROPERTY_SETTINGS
@given(histories, st.data())
def test_a_compaction_of_a_closed_prefix_never_splits_a_call_from_its_output(
    history: list[Item], data: st.DataObject
) -> None:
    closed = [n for n in range(len(history) + 1) if closed_prefix_len(history[:n]) == n]
    covered = data.draw(st.sampled_from(closed))
    rebuilt = rebuild_history(history, SUMMARY, CONTEXT, COUNTER, covered)
    assert_pairs_whole(rebuilt)
    summaries = [n for n, item in enumerate(rebuilt) if _is_new_summary(item)]
    assert len(summaries) == 1
    head = rebuilt[: summaries[0] + 1]
    assert_head(head, history[:covered])
    tail = rebuilt[len(head) :]
    assert [i for i in history[covered:] if i in tail] == tail, "the rest keeps its order"
    kept_from_rest = [i for i in history[covered:] if not _tool_item(i)]
    assert [i for i in tail if not _tool_item(i)] == kept_from_rest, "nothing but tools goes"


@PROPERTY_SETTINGS
@given(histories)
def test_what_is_dropped_is_counted_exactly(history: list[Item]) -> None:
    covered = closed_prefix_len(history)
    dropped = describe_dropped(history, COUNTER, covered)
    rebuilt = rebuild_history(history, SUMMARY, CONTEXT, COUNTER, covered)
    kept_whole = len(rebuilt) - len(CONTEXT) - 1 - dropped.truncated_user_messages
    assert dropped.count + kept_whole == len(history)
    assert sum(dropped.by_type.values()) == dropped.count
    kept_calls = {i.call_id for i in rebuilt if isinstance(i, FunctionCall)}
    all_calls = [i.call_id for i in history if isinstance(i, FunctionCall)]
    assert sorted(dropped.call_ids) == sorted(c for c in all_calls if c not in kept_calls)


def _is_new_summary(item: Item) -> bool:
    return isinstance(item, Message) and item.text.rstrip().endswith(
        SUMMARY + "\n" + COMPACTION_SUMMARY.end
    )


def _tool_item(item: Item) -> bool:
    return isinstance(item, FunctionCall | FunctionCallOutput)
