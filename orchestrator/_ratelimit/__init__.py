"""A shared rate limiter per model endpoint: requests and tokens per minute, Retry-After pauses
that hold every worker when the endpoint says its limit is used up, and a concurrency window
that backs off on 429s and recovers.

Create one `RateLimiterRegistry` per process and pass `gate=registry.limiter_for(base_url)` to
`agents.model.open_model_client`; every attempt of every worker then goes through it.
"""

from ._bucket import TokenBucket as TokenBucket
from ._clock import SYSTEM_CLOCK as SYSTEM_CLOCK
from ._clock import Clock as Clock
from ._clock import ManualClock as ManualClock
from ._clock import SystemClock as SystemClock
from ._errors import RateLimitConfigError as RateLimitConfigError
from ._errors import RateLimitWaitTimeout as RateLimitWaitTimeout
from ._limiter import DEFAULT_BURST_SECONDS as DEFAULT_BURST_SECONDS
from ._limiter import DEFAULT_MAX_CONCURRENCY as DEFAULT_MAX_CONCURRENCY
from ._limiter import DEFAULT_WAIT_TIMEOUT as DEFAULT_WAIT_TIMEOUT
from ._limiter import EndpointLimiter as EndpointLimiter
from ._limiter import LimiterStats as LimiterStats
from ._limiter import WaitObserver as WaitObserver
from ._registry import RateLimiterRegistry as RateLimiterRegistry
from ._registry import normalise_base_url as normalise_base_url
from ._window import AimdWindow as AimdWindow

__all__ = [
    "DEFAULT_BURST_SECONDS",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_WAIT_TIMEOUT",
    "SYSTEM_CLOCK",
    "AimdWindow",
    "Clock",
    "EndpointLimiter",
    "LimiterStats",
    "ManualClock",
    "RateLimitConfigError",
    "RateLimitWaitTimeout",
    "RateLimiterRegistry",
    "SystemClock",
    "TokenBucket",
    "WaitObserver",
    "normalise_base_url",
]
