"""Answers for stdio lines that are not JSON-RPC, which the SDK's stdio transport drops unanswered.

JSON-RPC 2.0 wants an error for each: -32700 when the line is not JSON, -32600 when it is JSON
but no request, notification or response; with the request's id when one can be read from it
(so a client waiting on that id hears why), else `null`. A line past the size cap (`_lines`) is
a parse error with `null`: it was dropped unread, so no id can be known. A malformed response
(to a request of the server's) gets no answer, as JSON-RPC never answers responses. Over
streamable HTTP the SDK answers these itself (400 with the same codes). Everything that
parses is passed on untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ._lines import MAX_MESSAGE_BYTES, OVERLONG

MAX_DETAIL = 200
TOO_LONG = (
    f"Parse error: the line is longer than {MAX_MESSAGE_BYTES // 2**20} MiB and was dropped "
    "unread; send smaller messages"
)


def malformed_reply(exc: Exception) -> SessionMessage | None:
    """The JSON-RPC error that answers a line the transport could not read as a message; None
    for a malformed response, which is not answered."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and errors[0].get("input") == OVERLONG:  # `_lines` dropped it: nothing to read
        error = types.ErrorData(code=types.PARSE_ERROR, message=TOO_LONG)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))
    if not errors or any(e["type"] == "json_invalid" for e in errors):
        detail = str(errors[0]["msg"]) if errors else str(exc)
        error = types.ErrorData(
            code=types.PARSE_ERROR,
            message=f"Parse error: the line is not JSON ({detail[:MAX_DETAIL]}); "
            "send one JSON-RPC message per line",
        )
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))
    # The whole message is the input of the errors nearest the top (a field it lacks).
    wholes = [e for e in errors if isinstance(e.get("input"), dict)]
    sent: dict[str, Any] = min(wholes, key=lambda e: len(e["loc"]))["input"] if wholes else {}
    if "method" not in sent and ("result" in sent or "error" in sent):
        return None
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    message = f"Invalid Request: not a JSON-RPC 2.0 message ({where}: {first['msg']})"
    error = types.ErrorData(code=types.INVALID_REQUEST, message=message[: MAX_DETAIL * 2])
    answer = types.JSONRPCError(jsonrpc="2.0", id=_request_id(sent), error=error)
    return SessionMessage(answer)


def _request_id(sent: dict[str, Any]) -> str | int | None:
    """The message's `id`, when it has a usable one."""
    found = sent.get("id")
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


class _Receiver(Protocol):
    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...


class AnsweringMalformed:
    """A read stream that answers malformed lines through `send` and hands on the rest."""

    def __init__(self, inner: _Receiver, send: Callable[[SessionMessage], Awaitable[None]]) -> None:
        self._inner = inner
        self._send = send

    @property
    def last_context(self) -> Any:
        # The SDK reads the sender's context from the stream it was given, when there is one.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = malformed_reply(item)
            if reply is not None:
                await self._send(reply)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
