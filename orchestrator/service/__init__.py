"""`corral serve`: the HTTP API over the same run functions as the CLI, and a client for it.

`CorralService` serves the API (bearer-token auth, runs with admission control, resumable SSE
event streams read from the journal, approvals answered over the API); `CorralClient` talks to
it.
`running_manager` and the names below it in `__all__` are what the MCP server builds on: the
same run manager, request models, policy and token check.
"""

from ._auth import ApiToken as ApiToken
from ._auth import BearerAuth as BearerAuth
from ._auth import check_bind as check_bind
from ._auth import is_loopback as is_loopback
from ._auth import resolve_token as resolve_token
from ._client import CorralClient as CorralClient
from ._client import ServerEvent as ServerEvent
from ._entries import RunEntry as RunEntry
from ._entries import ServiceLimits as ServiceLimits
from ._errors import ApprovalClosed as ApprovalClosed
from ._errors import ApprovalRejected as ApprovalRejected
from ._errors import IdempotencyConflict as IdempotencyConflict
from ._errors import QueueFull as QueueFull
from ._errors import RequestRefused as RequestRefused
from ._errors import RunRejected as RunRejected
from ._errors import ServiceOptionsError as ServiceOptionsError
from ._errors import ServiceStartFailed as ServiceStartFailed
from ._errors import ServiceUnreachable as ServiceUnreachable
from ._errors import UnknownApproval as UnknownApproval
from ._execute import ServiceRequest as ServiceRequest
from ._models import ExecRequest as ExecRequest
from ._models import FanoutRequest as FanoutRequest
from ._models import RefactorRequest as RefactorRequest
from ._models import ReviewRequest as ReviewRequest
from ._models import TriageRequest as TriageRequest
from ._pipelines import REPORT_KEY as REPORT_KEY
from ._policy import ServicePolicy as ServicePolicy
from ._runs import RunManager as RunManager
from ._server import CorralService as CorralService
from ._server import ServiceOptions as ServiceOptions
from ._server import running_manager as running_manager

__all__ = [
    "REPORT_KEY",
    "ApiToken",
    "ApprovalClosed",
    "ApprovalRejected",
    "BearerAuth",
    "CorralClient",
    "CorralService",
    "ExecRequest",
    "FanoutRequest",
    "IdempotencyConflict",
    "QueueFull",
    "RefactorRequest",
    "RequestRefused",
    "ReviewRequest",
    "RunEntry",
    "RunManager",
    "RunRejected",
    "ServerEvent",
    "ServiceLimits",
    "ServiceOptions",
    "ServiceOptionsError",
    "ServicePolicy",
    "ServiceRequest",
    "ServiceStartFailed",
    "ServiceUnreachable",
    "TriageRequest",
    "UnknownApproval",
    "check_bind",
    "is_loopback",
    "resolve_token",
    "running_manager",
]
