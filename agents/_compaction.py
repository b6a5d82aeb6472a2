"""Pure compaction steps: the summarisation request, and the history that replaces the old one.

The new history is the current full context, the most recent real user messages (newest first
up to 20k tokens, the oldest one that fits partly middle-truncated, then back in order), and
the summary last. Tool calls are never kept without their outputs: none are kept at all.
"""

from __future__ import annotations

from dataclasses import replace

from tools._truncate import truncate_middle

from ._fragments import SUMMARIZATION_PROMPT, compaction_summary_fragment, is_contextual
from ._items import Item, Message
from ._tokens import TokenCounter
from .model._types import ModelRequest

USER_MESSAGES_TOKEN_BUDGET = 20_000


def build_compaction_request(
    request: ModelRequest, counter: TokenCounter
) -> tuple[ModelRequest, int]:
    """The request that asks the model for a summary, and how many items the summary replaces."""
    del counter
    prompt = Message(role="user", text=SUMMARIZATION_PROMPT)
    summarise = replace(request, input=(*request.input, prompt), tools=())
    return summarise, len(request.input)


def rebuild_after_compaction(
    history: list[Item], summary: str, context: list[Message], counter: TokenCounter
) -> list[Item]:
    kept = _recent_user_messages(history, counter, USER_MESSAGES_TOKEN_BUDGET)
    summary_text = summary.strip() or "(no summary available)"
    return [*context, *kept, Message(role="user", text=compaction_summary_fragment(summary_text))]


def _recent_user_messages(history: list[Item], counter: TokenCounter, budget: int) -> list[Item]:
    real = [
        i
        for i in history
        if isinstance(i, Message) and i.role == "user" and not is_contextual(i.text)
    ]
    kept: list[Item] = []
    remaining = budget
    for message in reversed(real):
        cost = counter.count_text(message.text)
        if cost <= remaining:
            kept.append(message)
            remaining -= cost
            continue
        if remaining > 0:
            kept.append(Message(role="user", text=truncate_middle(message.text, remaining)))
        break
    kept.reverse()
    return kept
