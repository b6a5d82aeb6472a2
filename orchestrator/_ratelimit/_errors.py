"""Errors of the per-endpoint rate limiter, under corral's shared roots::

    CorralError
    ├── InvalidInput
    │   └── RateLimitConfigError     a `[rate_limits]` key or a limiter option is unusable
    └── OperationFailed
        └── ModelError
            └── RateLimitWaitTimeout an attempt found no slot at its endpoint within the deadline

`RateLimitWaitTimeout` is a `ModelError` because it ends a model call, and callers that handle a
failed model call should handle it the same way.
"""

from __future__ import annotations

from corral.agents.model import ModelError
from corral.tools import InvalidInput


class RateLimitConfigError(InvalidInput):
    """The rate-limit configuration cannot be used; the message says which key to fix."""


class RateLimitWaitTimeout(ModelError):
    """An attempt waited longer than the limiter's deadline; `limit` names what held it."""

    def __init__(self, *, endpoint: str, limit: str, detail: str, waited: float) -> None:
        super().__init__(
            f"no slot for a request to model endpoint {endpoint} within {waited:g} s: held by "
            f"{detail}; raise [rate_limits] for this endpoint, run fewer agents at once, "
            "or wait for the provider's limit to reset"
        )
        self.endpoint = endpoint
        self.limit = limit
        self.detail = detail
        self.waited = waited
