"""Open the model client that a `ModelSettings` asks for.

The one place that maps `settings.api` to an adapter class; callers hold the result as a
`ModelClient` and close it with `aclose()`.
"""

from __future__ import annotations

import anyio

from ._chat import ChatCompletionsModelClient
from ._responses import ResponsesModelClient
from ._retry import Sleep
from ._settings import ModelSettings
from ._types import AttemptGate, ModelClient


def open_model_client(
    settings: ModelSettings, *, sleep: Sleep = anyio.sleep, gate: AttemptGate | None = None
) -> ModelClient:
    """A client for `settings.api`; `sleep` is the backoff sleep (tests pass a recorder).

    `gate`, when given, is entered around every HTTP attempt: pass the process's rate limiter
    for `settings.base_url` so that all workers share it.
    """
    if settings.api == "chat":
        return ChatCompletionsModelClient(settings, sleep=sleep, gate=gate)
    return ResponsesModelClient(settings, sleep=sleep, gate=gate)
