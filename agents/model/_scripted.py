"""The in-memory twin of `ModelClient`, for tests of code above the seam.

`ScriptedModelClient` answers each request from a function and records what it was asked. It
emits the same events a streaming adapter would (text deltas, then one `ItemDone` per item), and
lets the function raise a `ModelError` to stand in for a failing endpoint.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from .._items import Item, Message, Usage
from ._errors import ModelError
from ._types import EventCallback, ItemDone, ModelRequest, ModelResponse, TextDelta

Reply = ModelResponse | list[Item] | str
Respond = Callable[[ModelRequest], Reply | Awaitable[Reply]]


class ScriptedModelClient:
    """Answers from `respond`: a string is one assistant message, a list is the output items."""

    def __init__(self, respond: Respond, *, model: str = "scripted") -> None:
        self._respond = respond
        self._model = model
        self.requests: list[ModelRequest] = []
        self.closed = False

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse:
        if self.closed:
            raise ModelError("the scripted model client is closed")
        self.requests.append(request)
        reply = self._respond(request)
        if inspect.isawaitable(reply):
            reply = await reply
        response = self._as_response(reply)
        if on_event is not None:
            for item in response.items:
                if isinstance(item, Message):
                    on_event(TextDelta(item.text))
                on_event(ItemDone(item))
        return response

    async def aclose(self) -> None:
        self.closed = True

    def _as_response(self, reply: Reply) -> ModelResponse:
        if isinstance(reply, ModelResponse):
            return reply
        items: list[Item] = (
            [Message(role="assistant", text=reply)] if isinstance(reply, str) else reply
        )
        return ModelResponse(
            items=list(items),
            usage=Usage(),
            model=self._model,
            response_id=f"scripted-{len(self.requests)}",
        )
