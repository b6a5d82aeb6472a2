"""The service's errors: what `corral serve` and the API client raise.

CorralError (tools)
├── InvalidInput
│   ├── ServiceOptionsError   bad limits, or an unsafe bind without a token
│   ├── CannotListen          (orchestrator._uvicorn) the host or port cannot be used
│   ├── RunRejected           a submitted run the API refused (422, 409, 413)
│   │   ├── RequestRefused        it asked for more than [service] allows (422)
│   │   ├── IdempotencyConflict   its Idempotency-Key was used for another request (422)
│   │   └── RunBusy               the run is still executing here (409)
│   └── ApprovalRejected      an answer to an approval the API refused
│       ├── UnknownApproval   no approval has that id (404)
│       └── ApprovalClosed    it was already answered, or expired (409)
└── OperationFailed
    ├── ServiceStartFailed    uvicorn did not start listening
    ├── QueueFull             admission control refused a run (429)
    └── ServiceUnreachable    the client could not talk to the server, or got an error
"""

from __future__ import annotations

from corral.tools import InvalidInput, OperationFailed

from .._uvicorn import HttpStartFailed


class ServiceOptionsError(InvalidInput):
    """`corral serve` was started with options it cannot honour."""


class RunRejected(InvalidInput):
    """The run request is invalid; `errors` are the details shown to the caller."""

    def __init__(self, message: str, errors: list[dict[str, object]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class RequestRefused(RunRejected):
    """A request asked for more than the server's `[service]` allow-lists give (422)."""


class IdempotencyConflict(RunRejected):
    """An `Idempotency-Key` came back with a different request than the one it was used for."""


class RunBusy(RunRejected):
    """The run is still executing on this server, so it cannot be started again yet."""


class ApprovalRejected(InvalidInput):
    """An approval could not be answered."""


class UnknownApproval(ApprovalRejected):
    """No approval with that id is known to this server."""


class ApprovalClosed(ApprovalRejected):
    """The approval was answered already, or expired; it takes no further answer."""


ServiceStartFailed = HttpStartFailed
"""uvicorn did not start listening (raised by `orchestrator._uvicorn`)."""


class QueueFull(OperationFailed):
    """Too many runs are running and waiting; try again after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServiceUnreachable(OperationFailed):
    """The client got no usable answer from the server."""
