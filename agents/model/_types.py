"""The model-client seam: one request and response shape for every provider API.

`ModelRequest` is the Responses-API request corral builds; adapters translate it for their API.
`ModelResponse` carries the normalised output items and usage. Streaming progress reaches the
caller through an optional event callback while the final response is assembled. An optional
`AttemptGate` (a rate limiter, say) is entered around every HTTP attempt and told how it went.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .._items import Item, Usage


@dataclass(frozen=True)
class ModelRequest:
    """One model call. `tools` are Responses-API function tool dicts, in their final order."""

    model: str
    instructions: str
    input: Sequence[Item]
    tools: Sequence[dict[str, Any]] = ()
    prompt_cache_key: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    parallel_tool_calls: bool = True
    tool_choice: str = "auto"
    stream: bool = True
    reasoning_effort: str | None = None

    def to_responses_body(self) -> dict[str, Any]:
        """The request body in Responses-API form, keys in a fixed order."""
        body: dict[str, Any] = {
            "model": self.model,
            "instructions": self.instructions,
            "input": [item.to_wire() for item in self.input],
            "tools": list(self.tools),
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "store": False,
            "stream": self.stream,
        }
        if self.prompt_cache_key is not None:
            body["prompt_cache_key"] = self.prompt_cache_key
        if self.metadata:
            body["metadata"] = dict(self.metadata)
        if self.reasoning_effort is not None:
            body["reasoning"] = {"effort": self.reasoning_effort}
        return body


@dataclass(frozen=True)
class ModelResponse:
    """The completed answer: output items in order, usage, and the provider's ids."""

    items: list[Item]
    usage: Usage
    model: str = ""
    response_id: str = ""
    attempts: int = 1


@dataclass(frozen=True)
class TextDelta:
    """A piece of assistant text as it streams in."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ItemDone:
    """An output item finished streaming (it may still be discarded if the stream breaks)."""

    item: Item
    kind: Literal["item_done"] = "item_done"


@dataclass(frozen=True)
class Retrying:
    """An attempt failed and will be retried after `delay` seconds; earlier deltas are void.

    `status` is the HTTP status of the failure (None for a connection or stream failure) and
    `retry_after` the wait the server asked for, if it asked.
    """

    attempt: int
    delay: float
    reason: str
    status: int | None = None
    retry_after: float | None = None
    kind: Literal["retrying"] = "retrying"


StreamEvent = TextDelta | ItemDone | Retrying
EventCallback = Callable[[StreamEvent], None]


class ModelClient(Protocol):
    """Calls a model. Retries are the client's own business; errors are `ModelError`s."""

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse: ...

    async def aclose(self) -> None: ...


class AttemptSlot(Protocol):
    """One admitted attempt; the adapter reports how it ended before leaving the gate."""

    def report(
        self, *, status: int | None, retry_after: float | None, usage_tokens: int | None
    ) -> None:
        """`status`: 200 on success, the HTTP status of a failure, None for a connection error;
        `retry_after`: the server's requested wait in seconds; `usage_tokens`: the total the
        provider billed, on success."""
        ...


class AttemptGate(Protocol):
    """Admits each HTTP attempt to an endpoint, retries included; a rate limiter implements it."""

    def attempt(self, estimated_tokens: int) -> AbstractAsyncContextManager[AttemptSlot]:
        """Wait until the attempt may go out; the slot is held until the block exits."""
        ...
