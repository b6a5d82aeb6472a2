"""The one boundary where HTTP answers, aiohttp exceptions and in-stream error objects become ours.

Each failure is sorted into a `TransientFailure` (worth another attempt) or a `ModelError` that
ends the call now, with a message that says what the endpoint answered and what to do about it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import aiohttp

from ._errors import ModelContextWindowExceeded, ModelError, ModelRequestRejected
from ._limits import rate_limit_hint
from ._retry import TransientFailure, retry_after_seconds

_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_RATE_LIMITED = "rate_limit_exceeded"
_CONTEXT_CODES = frozenset({"context_length_exceeded", "context_window_exceeded"})
# Codex's list of in-stream errors that another attempt cannot fix.
_FATAL_CODES = frozenset(
    {"insufficient_quota", "usage_not_included", "invalid_prompt", "invalid_request_error"}
)
_STATUS_ADVICE = {
    401: "check OPENAI_API_KEY (or CORRAL_API_KEY)",
    403: "the API key has no access to this model or endpoint",
    404: "check the model name and the base URL",
}
_TRY_AGAIN = re.compile(r"try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b", re.IGNORECASE)
_MAX_MESSAGE = 500


def stream_error(error: object, endpoint: str) -> TransientFailure | ModelError:
    """An event whose `error` field is set: sorted as an error object, or retried if opaque."""
    if isinstance(error, dict):
        return failure_from_error_object(error, endpoint)
    return TransientFailure(f"the stream reported an error: {_clip(str(error))}")


def failure_from_error_object(error: object, endpoint: str) -> TransientFailure | ModelError:
    """Sort an error object sent inside a stream or body (`response.failed`, `error` events)."""
    fields: dict[str, Any] = error if isinstance(error, dict) else {}
    code = str(fields.get("code") or fields.get("type") or "error")
    message = _clip(str(fields.get("message") or "no message"))
    if code in _CONTEXT_CODES:
        return ModelContextWindowExceeded(
            f"model endpoint {endpoint} rejected the request: {message}; compact the history",
            status=None,
            code=code,
        )
    if code in _FATAL_CODES:
        return ModelRequestRejected(
            f"model endpoint {endpoint} rejected the request ({code}): {message}",
            status=None,
            code=code,
        )
    # A rate limit sent inside a 200 stream is a 429 in all but transport; a gate must see it.
    status = 429 if code == _RATE_LIMITED else None
    return TransientFailure(
        f"{code}: {message}", status=status, retry_after=_try_again_hint(message)
    )


def failure_from_status(
    status: int, headers: Mapping[str, str], body: object, reason: str, endpoint: str
) -> TransientFailure | ModelError:
    """What a non-2xx answer means: `body` is its error object (or its text)."""
    message = _server_message(body, reason)
    if status in _RETRYABLE_STATUSES or status >= 500:
        wait = retry_after_seconds(headers)
        failure = TransientFailure(f"HTTP {status}: {message}", status=status, retry_after=wait)
        if status == 429:
            failure.limits = rate_limit_hint(headers)
        return failure
    code = body.get("code") if isinstance(body, dict) else None
    code = code if isinstance(code, str) else None
    if code in _CONTEXT_CODES:
        return ModelContextWindowExceeded(
            f"model endpoint {endpoint} rejected the request (HTTP {status}): {message}; "
            "compact the history",
            status=status,
            code=code,
        )
    advice = _STATUS_ADVICE.get(status) or _redirect_advice(status, headers)
    return ModelRequestRejected(
        f"model endpoint {endpoint} rejected the request (HTTP {status}): {message}"
        + (f"; {advice}" if advice else ""),
        status=status,
        code=code,
    )


def _redirect_advice(status: int, headers: Mapping[str, str]) -> str | None:
    if not 300 <= status < 400:
        return None
    where = _clip(headers.get("location") or "nowhere")
    return (
        f"it redirects to {where}, and corral follows no redirect (the conversation would go "
        "with it): set the base URL to the address the endpoint really answers at"
    )


def connection_failure(exc: aiohttp.ClientError) -> TransientFailure:
    """A request or stream that the connection let down: refused, timed out, or dropped."""
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return TransientFailure("the request timed out")
    chain = _causes(exc)
    if any(isinstance(cause, ConnectionRefusedError) for cause in chain):
        return TransientFailure("connection refused", refused=True)
    root = chain[-1]
    detail = str(root) or type(root).__name__
    return TransientFailure(f"connection failed: {_clip(detail)}")


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it, following `__cause__`/`__context__` and exception groups."""
    found: list[BaseException] = []
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if any(current is seen for seen in found):
            continue
        found.append(current)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        # aiohttp keeps the socket's own error on the exception rather than chaining it.
        linked = (current.__context__, current.__cause__, getattr(current, "os_error", None))
        pending.extend(e for e in linked if isinstance(e, BaseException))
    return found


def _server_message(body: object, reason: str) -> str:
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str) and message:
        return _clip(message)
    if isinstance(body, str) and body.strip():
        return _clip(body.strip())
    return reason or "no message"


def _try_again_hint(message: str) -> float | None:
    match = _TRY_AGAIN.search(message)
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "ms" else value


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"
