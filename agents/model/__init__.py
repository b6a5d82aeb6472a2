"""Model clients: one request/response shape over the Responses and Chat Completions APIs."""

from ._chat import ChatCompletionsModelClient as ChatCompletionsModelClient
from ._errors import ModelConfigError as ModelConfigError
from ._errors import ModelConnectionRefused as ModelConnectionRefused
from ._errors import ModelContextWindowExceeded as ModelContextWindowExceeded
from ._errors import ModelError as ModelError
from ._errors import ModelRequestRejected as ModelRequestRejected
from ._errors import ModelResponseIncomplete as ModelResponseIncomplete
from ._errors import ModelUnavailable as ModelUnavailable
from ._factory import open_model_client as open_model_client
from ._gate import GateAttempt as GateAttempt
from ._gate import RecordingGate as RecordingGate
from ._gate import estimate_tokens as estimate_tokens
from ._limits import LimitLearner as LimitLearner
from ._limits import RateLimitHint as RateLimitHint
from ._limits import rate_limit_hint as rate_limit_hint
from ._responses import ResponsesModelClient as ResponsesModelClient
from ._retry import RetryPolicy as RetryPolicy
from ._retry import Sleep as Sleep
from ._scripted import ScriptedModelClient as ScriptedModelClient
from ._settings import ModelSettings as ModelSettings
from ._settings import is_loopback_url as is_loopback_url
from ._types import AttemptGate as AttemptGate
from ._types import AttemptSlot as AttemptSlot
from ._types import EventCallback as EventCallback
from ._types import ItemDone as ItemDone
from ._types import ModelClient as ModelClient
from ._types import ModelRequest as ModelRequest
from ._types import ModelResponse as ModelResponse
from ._types import Retrying as Retrying
from ._types import StreamEvent as StreamEvent
from ._types import TextDelta as TextDelta

__all__ = [
    "AttemptGate",
    "AttemptSlot",
    "ChatCompletionsModelClient",
    "EventCallback",
    "GateAttempt",
    "ItemDone",
    "LimitLearner",
    "ModelClient",
    "ModelConfigError",
    "ModelConnectionRefused",
    "ModelContextWindowExceeded",
    "ModelError",
    "ModelRequest",
    "ModelRequestRejected",
    "ModelResponse",
    "ModelResponseIncomplete",
    "ModelSettings",
    "ModelUnavailable",
    "RateLimitHint",
    "RecordingGate",
    "ResponsesModelClient",
    "RetryPolicy",
    "Retrying",
    "ScriptedModelClient",
    "Sleep",
    "StreamEvent",
    "TextDelta",
    "estimate_tokens",
    "is_loopback_url",
    "open_model_client",
    "rate_limit_hint",
]
