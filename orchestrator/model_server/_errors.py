"""Errors of the scripted model server, under corral's shared roots in `tools._errors`.

Start-up mistakes are the caller's (`InvalidInput`, exit code 2); failures while answering a
request become OpenAI-style error bodies and never escape the request that caused them::

    CorralError
    ├── InvalidInput
    │   ├── PolicyLoadError       the --policy file, module or function is not there
    │   ├── ServerOptionsError    flags out of range or in conflict, an unreadable cassette
    │   └── PortInUse             the port is taken (from orchestrator._uvicorn)
    └── OperationFailed
        ├── ServerStartFailed     uvicorn did not come up (orchestrator._uvicorn's HttpStartFailed)
        └── PolicyFailed          the policy raised or returned the wrong type (HTTP 500)
"""

from __future__ import annotations

from corral.tools import InvalidInput, OperationFailed

from .._uvicorn import HttpStartFailed
from .._uvicorn import PortInUse as _PortInUse


class PolicyLoadError(InvalidInput):
    """The policy named by `PATH.py:FUNC` (or `module:FUNC`) cannot be loaded."""


class ServerOptionsError(InvalidInput):
    """The server's options are out of range or contradict each other."""


PortInUse = _PortInUse
ServerStartFailed = HttpStartFailed


class PolicyFailed(OperationFailed):
    """The policy raised, or returned something that is not an answer; the request gets a 500."""
