"""One model client per endpoint, shared by every agent of the process.

Clients hold connection pools; sharing them keeps the number of sockets bounded however many
agents run. Each endpoint's client is gated by that endpoint's shared rate limiter.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from agents import ModelClient, ModelSettings, open_model_client

ClientFactory = Callable[[ModelSettings], ModelClient]


class ClientPool:
    """Hands out one client per (API, base URL, key); closes them all on `aclose`."""

    def __init__(self, factory: ClientFactory = open_model_client) -> None:
        self._factory = factory
        self._clients: dict[tuple[Any, ...], ModelClient] = {}
        self._stack = AsyncExitStack()

    def client_for(self, settings: ModelSettings) -> ModelClient:
        key = (settings.api, settings.base_url, settings.api_key)
        client = self._clients.get(key)
        if client is None:
            client = self._factory(settings)
            self._stack.push_async_callback(client.aclose)
            self._clients[key] = client
        return client

    async def aclose(self) -> None:
        await self._stack.aclose()
