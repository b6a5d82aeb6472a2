"""The errors a model client raises, rooted in `tools._errors`.

Adapters translate every HTTP failure and aiohttp exception here, once, so code above the seam
never sees a third-party error type::

    OperationFailed
    └── ModelError                        a model call went wrong
        ├── ModelRequestRejected          the endpoint refused this request (4xx): not retried
        │   └── ModelContextWindowExceeded    the input is longer than the model's window
        ├── ModelResponseIncomplete       the model stopped early (max tokens, content filter)
        └── ModelUnavailable              every attempt failed with a transient error
            └── ModelConnectionRefused    nothing listens at the endpoint
    InvalidInput
    └── ModelConfigError                  bad model settings (missing key, malformed URL)
"""

from __future__ import annotations

from corral.tools._errors import InvalidInput, OperationFailed


class ModelError(OperationFailed):
    """A model call failed; the message says which endpoint and why."""


class ModelRequestRejected(ModelError):
    """The endpoint answered 4xx (not 408/409/429): sending the same request again is futile."""

    def __init__(self, message: str, *, status: int | None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class ModelContextWindowExceeded(ModelRequestRejected):
    """The request does not fit the model's context window; compact the history and retry."""


class ModelResponseIncomplete(ModelError):
    """The model ended its response early; `reason` is the provider's (e.g. max_output_tokens)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ModelUnavailable(ModelError):
    """Every attempt failed with a retryable error; `cause` describes the last one."""

    def __init__(self, message: str, *, attempts: int, last_status: int | None, cause: str) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_status = last_status
        self.cause = cause


class ModelConnectionRefused(ModelUnavailable):
    """The endpoint refused every connection: no server is listening at the base URL."""


class ModelConfigError(InvalidInput):
    """The model settings are unusable; the message says which setting to fix."""
