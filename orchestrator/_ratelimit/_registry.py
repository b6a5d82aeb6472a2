"""One `EndpointLimiter` per model endpoint, shared by every worker of the process.

The `[rate_limits]` table is keyed by base URL or `default`; an endpoint with neither still gets
a limiter, with no configured limits, so its 429s still pause and back off every worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from corral.agents._config import CorralConfig, RateLimit

from ._clock import SYSTEM_CLOCK, Clock
from ._errors import RateLimitConfigError
from ._limiter import DEFAULT_BURST_SECONDS, DEFAULT_WAIT_TIMEOUT, EndpointLimiter, WaitObserver

DEFAULT_KEY = "default"


class RateLimiterRegistry:
    """Hands out the one limiter of each endpoint; create one per process and share it."""

    def __init__(
        self,
        limits: Mapping[str, RateLimit] | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
        burst_seconds: float = DEFAULT_BURST_SECONDS,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
        on_wait: WaitObserver | None = None,
    ) -> None:
        self._limits = {_config_key(key): limit for key, limit in (limits or {}).items()}
        self._clock = clock
        self._burst_seconds = burst_seconds
        self._wait_timeout = wait_timeout
        self._limiters: dict[str, EndpointLimiter] = {}
        self.on_wait = on_wait
        """Told of every attempt that waited, on any endpoint; may be set after limiters exist."""

    @classmethod
    def from_config(
        cls, config: CorralConfig, *, clock: Clock = SYSTEM_CLOCK
    ) -> RateLimiterRegistry:
        """A registry for `config.rate_limits`; raises `RateLimitConfigError` for a bad key."""
        return cls(config.rate_limits, clock=clock)

    def limiter_for(self, base_url: str) -> EndpointLimiter:
        """The limiter of the endpoint at `base_url` (a resolved `ModelSettings.base_url`)."""
        endpoint = normalise_base_url(base_url)
        limiter = self._limiters.get(endpoint)
        if limiter is None:
            limiter = EndpointLimiter(
                endpoint,
                self.limit_for(endpoint),
                clock=self._clock,
                burst_seconds=self._burst_seconds,
                wait_timeout=self._wait_timeout,
                on_wait=self._waited,
            )
            self._limiters[endpoint] = limiter
        return limiter

    def _waited(self, endpoint: str, began_wall: float, waited: float) -> None:
        if self.on_wait is not None:
            self.on_wait(endpoint, began_wall, waited)

    def limit_for(self, base_url: str) -> RateLimit:
        """The configured limits of `base_url`, else the `default` ones, else none."""
        endpoint = normalise_base_url(base_url)
        return self._limits.get(endpoint) or self._limits.get(DEFAULT_KEY) or RateLimit()


def normalise_base_url(url: str) -> str:
    """`url` with its scheme and host in lower case and no trailing slash, for matching."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _config_key(key: str) -> str:
    if key == DEFAULT_KEY:
        return key
    parts = urlsplit(key.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RateLimitConfigError(
            f"[rate_limits] key {key!r} is not a base URL; use the endpoint's base URL, "
            'e.g. [rate_limits."https://api.openai.com/v1"], or [rate_limits.default]'
        )
    return normalise_base_url(key)
