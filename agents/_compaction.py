"""Pure compaction steps: the summarisation request, the history that replaces the old one, and
the record of what a compaction dropped.

A compaction covers a prefix of the history in which every tool call has its output. The
covered part becomes the current full context, the most recent real user messages (newest first
up to 20k tokens, the oldest one that fits partly middle-truncated, then back in order) and the
summary; no tool call of the covered part is kept, so none is ever split from its output. What
came after the covered prefix (an early, background compaction leaves such a tail) follows
the summary unchanged, except that a call and its output are kept only together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel, ConfigDict, Field

from corral.tools._truncate import truncate_middle

from ._fragments import ALL_KINDS, SUMMARIZATION_PROMPT, compaction_summary_fragment, is_contextual
from ._items import FunctionCall, FunctionCallOutput, Item, Message, Reasoning
from ._tokens import TokenCounter
from .model._types import ModelRequest

USER_MESSAGES_TOKEN_BUDGET = 20_000
# Room for the `…N tokens truncated…` marker, so a cut message still fits what was left.
_MARKER_TOKENS = 12
_LONGEST_MARKER = max(len(m) for kind in ALL_KINDS for m in (kind.start, kind.end))


class DroppedItems(BaseModel):
    """What one compaction removed from the history, as the journal records it.

    `by_type` counts dropped items by kind (`user_message`, `assistant_message`,
    `developer_message`, `context_fragment`, `function_call`, `function_call_output`,
    `reasoning`); context fragments are dropped and their current versions put back.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    count: int = 0
    by_type: dict[str, int] = Field(default_factory=dict)
    call_ids: tuple[str, ...] = ()
    truncated_user_messages: int = 0


@dataclass(frozen=True)
class _Kept:
    index: int
    message: Message
    truncated: bool


def build_compaction_request(request: ModelRequest, covered: int | None = None) -> ModelRequest:
    """The request that asks the model to summarise the first `covered` items (default: all).

    The summary is asked for with the agent's own instructions and tools and `tool_choice`
    "none": the model may not call them, and the request starts with the very bytes of the
    agent's last one, so the provider's prompt cache still holds its prefix.
    """
    items = tuple(request.input if covered is None else request.input[:covered])
    prompt = Message(role="user", text=SUMMARIZATION_PROMPT)
    return replace(request, input=(*items, prompt), tool_choice="none")


def closed_prefix_len(history: Sequence[Item]) -> int:
    """The length of the longest prefix in which every tool call has its output."""
    open_calls: set[str] = set()
    best = 0
    for index, item in enumerate(history, start=1):
        if isinstance(item, FunctionCall):
            open_calls.add(item.call_id)
        elif isinstance(item, FunctionCallOutput):
            open_calls.discard(item.call_id)
        if not open_calls:
            best = index
    return best


def describe_dropped(
    history: Sequence[Item], counter: TokenCounter, covered: int | None = None
) -> DroppedItems:
    """What `rebuild_history` drops when it compacts the first `covered` items (default: all)."""
    covered = len(history) if covered is None else covered
    kept = _recent_user_messages(history[:covered], counter, USER_MESSAGES_TOKEN_BUDGET)
    whole = {k.index for k in kept if not k.truncated}
    dropped = [item for index, item in enumerate(history[:covered]) if index not in whole]
    tail = history[covered:]
    dropped.extend(tail[index] for index in sorted(_unpaired(tail)))
    return DroppedItems(
        count=len(dropped),
        by_type=dict(Counter(_type_of(item) for item in dropped)),
        call_ids=tuple(i.call_id for i in dropped if isinstance(i, FunctionCall)),
        truncated_user_messages=sum(1 for k in kept if k.truncated),
    )


def rebuild_history(
    history: Sequence[Item],
    summary: str,
    context: Sequence[Message],
    counter: TokenCounter,
    covered: int | None = None,
) -> list[Item]:
    """The compacted history: the covered prefix condensed, then the rest as it was."""
    covered = len(history) if covered is None else covered
    head = rebuild_after_compaction(list(history[:covered]), summary, list(context), counter)
    tail = history[covered:]
    unpaired = _unpaired(tail)
    return [*head, *(item for index, item in enumerate(tail) if index not in unpaired)]


def rebuild_after_compaction(
    history: list[Item], summary: str, context: list[Message], counter: TokenCounter
) -> list[Item]:
    """Context first, then the recent real user messages, then the summary."""
    kept = _recent_user_messages(history, counter, USER_MESSAGES_TOKEN_BUDGET)
    summary_text = summary.strip() or "(no summary available)"
    summary_message = Message(role="user", text=compaction_summary_fragment(summary_text))
    return [*context, *(k.message for k in kept), summary_message]


def _recent_user_messages(
    history: Sequence[Item], counter: TokenCounter, budget: int
) -> list[_Kept]:
    # Images a tool showed (`view_image`) are not what a person said: the summary covers them.
    real = [
        (index, item)
        for index, item in enumerate(history)
        if isinstance(item, Message)
        and item.role == "user"
        and not item.images
        and not _is_contextual(item.text)
    ]
    kept: list[_Kept] = []
    remaining = budget
    for index, message in reversed(real):
        cost = counter.count_text(message.text)
        if cost <= remaining:
            kept.append(_Kept(index, message, truncated=False))
            remaining -= cost
            continue
        cut = _truncated(message, counter, remaining)
        if cut is not None:
            kept.append(_Kept(index, cut, truncated=True))
        break
    kept.reverse()
    return kept


def _truncated(message: Message, counter: TokenCounter, budget: int) -> Message | None:
    if budget <= _MARKER_TOKENS:
        return None
    text = truncate_middle(message.text, budget - _MARKER_TOKENS)
    # A counter other than the 4-bytes rule may count the cut text higher; never overspend.
    if counter.count_text(text) > budget:
        return None
    return Message(role="user", text=text)


def _unpaired(items: Sequence[Item]) -> set[int]:
    """The positions of calls whose output does not follow among `items`, and of outputs whose
    call does not come before."""
    calls_seen: set[str] = set()
    answered: set[str] = set()
    unpaired: set[int] = set()
    for index, item in enumerate(items):
        if isinstance(item, FunctionCall):
            calls_seen.add(item.call_id)
        elif isinstance(item, FunctionCallOutput):
            if item.call_id in calls_seen:
                answered.add(item.call_id)
            else:
                unpaired.add(index)
    for index, item in enumerate(items):
        if isinstance(item, FunctionCall) and item.call_id not in answered:
            unpaired.add(index)
    return unpaired


def _is_contextual(text: str) -> bool:
    """`is_contextual`, but only the ends are looked at: markers sit there, and case-folding a
    long non-ASCII message whole costs tens of milliseconds."""
    trimmed = text.strip()
    if len(trimmed) > 2 * _LONGEST_MARKER:
        trimmed = trimmed[:_LONGEST_MARKER] + trimmed[-_LONGEST_MARKER:]
    return is_contextual(trimmed)


def _type_of(item: Item) -> str:
    if isinstance(item, Message):
        return "context_fragment" if _is_contextual(item.text) else f"{item.role}_message"
    if isinstance(item, Reasoning):
        return "reasoning"
    return item.type
