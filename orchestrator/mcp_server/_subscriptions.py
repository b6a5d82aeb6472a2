"""Telling subscribed clients that a run's resources changed, in both protocol eras.

On 2026-07-28 connections a client listens with `subscriptions/listen` and the SDK's
`ListenHandler` delivers what `publish` puts on the bus; on handshake-era connections a client
calls `resources/subscribe` and each such session is sent `notifications/resources/updated`.
`watch_run` publishes a run's state and results URIs whenever its journal moves, at most once
per `UPDATE_INTERVAL`, and once more when it ends.
"""

from __future__ import annotations

import logging
from typing import Final

import anyio
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from ..service import RunEntry
from ._views import run_uri

logger = logging.getLogger(__name__)

UPDATE_INTERVAL: Final = 0.5
"""Seconds between two updates of one run: a 1,000-item run sends no 1,000 notices a second."""
SEND_TIMEOUT: Final = 5.0
MAX_SUBSCRIPTIONS: Final = 10_000
"""Handshake-era subscriptions held at once, over all connections: a client cannot fill memory."""


class Subscriptions:
    """Who wants to hear about which run URIs; shared by every connection of one server."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._legacy: dict[str, dict[int, ServerSession]] = {}
        """URI -> the subscribed connections (by identity), each with a session to send on."""

    def subscribe(self, uri: str, session: ServerSession) -> None:
        """Send `session`'s connection a notice when `uri` changes; `MCPError` past the cap."""
        if sum(map(len, self._legacy.values())) >= MAX_SUBSCRIPTIONS:
            raise MCPError(INTERNAL_ERROR, f"the server holds {MAX_SUBSCRIPTIONS} subscriptions")
        self._legacy.setdefault(uri, {})[_connection_of(session)] = session

    def unsubscribe(self, uri: str, session: ServerSession) -> None:
        self._legacy.get(uri, {}).pop(_connection_of(session), None)

    async def publish(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        for session in list(self._legacy.get(uri, {}).values()):
            try:
                with anyio.fail_after(SEND_TIMEOUT):
                    await session.send_resource_updated(uri)
            except Exception as exc:  # a gone client must not stop the others' notices
                logger.debug("dropping a subscriber of %s: %r", uri, exc)
                self.unsubscribe(uri, session)


def _connection_of(session: ServerSession) -> int:
    # The SDK makes a session per request; the connection under it is what subscribed.
    return id(getattr(session, "_connection", session))


async def watch_run(entry: RunEntry, subscriptions: Subscriptions) -> None:
    """Publish `entry`'s URIs as its journal grows, until it has ended."""
    uris = [run_uri(entry.run_id), run_uri(entry.run_id, "results")]
    seen = -1
    while not entry.log.ended:
        count = len(entry.log.events)
        if count != seen:
            seen = count
            for uri in uris:
                await subscriptions.publish(uri)
            await anyio.sleep(UPDATE_INTERVAL)  # a rate limit on notices, not a wait for state
        await entry.log.wait_beyond(count, UPDATE_INTERVAL)
    for uri in [*uris, run_uri(entry.run_id, "report")]:
        await subscriptions.publish(uri)
