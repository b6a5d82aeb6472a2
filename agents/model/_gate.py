"""Passing each HTTP attempt through an `AttemptGate` and telling it how the attempt ended.

The adapters own the estimate of an attempt's tokens and the mapping from our errors to an HTTP
status; what the gate does with them (rate limits, backoff) is the gate's business.
`RecordingGate` is the in-memory twin: it admits everything and keeps what it was told.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from .._json import dumps_utf8
from ._errors import ModelError, ModelRequestRejected, ModelResponseIncomplete
from ._limits import LimitLearner
from ._retry import TransientFailure
from ._types import AttemptGate, ModelResponse

ESTIMATED_OUTPUT_TOKENS = 512
"""Charged on top of the input estimate; corrected once the provider reports usage."""
_BYTES_PER_TOKEN = 4


def encode_body(body: dict[str, Any]) -> bytes:
    """`body` as the compact UTF-8 JSON sent on the wire."""
    return dumps_utf8(body)


def estimate_tokens(body: dict[str, Any] | bytes) -> int:
    """A cheap upper-ish guess of an attempt's tokens: UTF-8 body bytes / 4 plus some output."""
    size = len(body if isinstance(body, bytes) else encode_body(body))
    return size // _BYTES_PER_TOKEN + ESTIMATED_OUTPUT_TOKENS


async def run_gated(
    gate: AttemptGate, estimated_tokens: int, attempt: Callable[[], Awaitable[ModelResponse]]
) -> ModelResponse:
    """Run one attempt inside `gate` and report its outcome; errors pass through unchanged."""
    async with gate.attempt(estimated_tokens) as slot:
        try:
            response = await attempt()
        except TransientFailure as failure:
            if failure.limits is not None and isinstance(gate, LimitLearner):
                gate.learn_limits(failure.limits)
            slot.report(status=failure.status, retry_after=failure.retry_after, usage_tokens=None)
            raise
        except ModelError as error:
            slot.report(status=_status_of(error), retry_after=None, usage_tokens=None)
            raise
        # A total of 0 means the server sent no usage; the estimate is the better guess then.
        usage = response.usage.total_tokens or None
        slot.report(status=200, retry_after=None, usage_tokens=usage)
        return response


def _status_of(error: ModelError) -> int | None:
    if isinstance(error, ModelRequestRejected):
        return error.status
    if isinstance(error, ModelResponseIncomplete):
        return 200  # the endpoint answered; the model stopped early
    return None


@dataclass
class GateAttempt:
    """What `RecordingGate` saw of one attempt; `reported` stays False if none was made."""

    estimated_tokens: int
    reported: bool = False
    status: int | None = None
    retry_after: float | None = None
    usage_tokens: int | None = None

    def report(
        self, *, status: int | None, retry_after: float | None, usage_tokens: int | None
    ) -> None:
        self.reported = True
        self.status = status
        self.retry_after = retry_after
        self.usage_tokens = usage_tokens


class RecordingGate:
    """An `AttemptGate` that admits every attempt at once and records each one in order."""

    def __init__(self) -> None:
        self.attempts: list[GateAttempt] = []
        self.open = 0

    @asynccontextmanager
    async def attempt(self, estimated_tokens: int) -> AsyncIterator[GateAttempt]:
        record = GateAttempt(estimated_tokens)
        self.attempts.append(record)
        self.open += 1
        try:
            yield record
        finally:
            self.open -= 1
