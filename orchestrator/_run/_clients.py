"""One model client per endpoint, shared by every agent of the process.

Clients hold connection pools; sharing them keeps the number of sockets bounded however many
agents run. Each endpoint's client is gated by that endpoint's shared rate limiter.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from corral.agents import ModelClient, ModelSettings, open_model_client

from .._ratelimit import RateLimiterRegistry

ClientFactory = Callable[[ModelSettings], ModelClient]


class ClientPool:
    """Hands out one client per (API, base URL, key, query, headers); closes them all on
    `aclose`.

    Every client is gated by its endpoint's limiter from `limiters`, so all agents that reach
    one endpoint share its request and token budgets and its 429 pauses.
    """

    def __init__(
        self,
        limiters: RateLimiterRegistry | None = None,
        *,
        factory: ClientFactory | None = None,
    ) -> None:
        self.limiters = limiters or RateLimiterRegistry()
        self._factory = factory or self._gated
        self._clients: dict[tuple[Any, ...], ModelClient] = {}
        self._stack = AsyncExitStack()

    def client_for(self, settings: ModelSettings) -> ModelClient:
        key = settings.client_identity()
        client = self._clients.get(key)
        if client is None:
            client = self._factory(settings)
            self._stack.push_async_callback(client.aclose)
            self._clients[key] = client
        return client

    def _gated(self, settings: ModelSettings) -> ModelClient:
        return open_model_client(settings, gate=self.limiters.limiter_for(settings.base_url or ""))

    async def aclose(self) -> None:
        await self._stack.aclose()
