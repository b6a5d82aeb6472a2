"""Errors of the scripted model server, under corral's shared roots in `tools._errors`.

Start-up mistakes are the caller's (`InvalidInput`, exit code 2); failures while answering a
request become OpenAI-style error bodies and never escape the request that caused them::

    CorralError
    ├── InvalidInput
    │   ├── PolicyLoadError       the --policy file, module or function is not there
    │   ├── ServerOptionsError    flags out of range or in conflict, an unreadable cassette
    │   └── PortInUse             the port is taken by another process
    └── OperationFailed
        ├── ServerStartFailed     uvicorn did not come up within its deadline
        └── PolicyFailed          the policy raised or returned the wrong type (HTTP 500)
"""

from __future__ import annotations

from tools import InvalidInput, OperationFailed


class PolicyLoadError(InvalidInput):
    """The policy named by `PATH.py:FUNC` (or `module:FUNC`) cannot be loaded."""


class ServerOptionsError(InvalidInput):
    """The server's options are out of range or contradict each other."""


class PortInUse(InvalidInput):
    """The requested port is already bound by another socket."""


class ServerStartFailed(OperationFailed):
    """The HTTP server did not start."""


class PolicyFailed(OperationFailed):
    """The policy raised, or returned something that is not an answer; the request gets a 500."""
