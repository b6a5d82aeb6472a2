"""The errors of the MCP manager, under corral's roots::

    McpError
    ├── McpConfigInvalid      (InvalidInput) a server name or setting the caller got wrong
    ├── McpConnectFailed      (OperationFailed) one server could not be started or reached
    ├── McpStartupFailed      (OperationFailed) a `required` server did not come up
    └── McpUnavailable        (OperationFailed) a server cannot serve a request right now

A server that fails or stops is a state (`failed`, `restarting`), not an exception, and a tool
call that cannot be served becomes a failed `ToolOutput` the model can read.
"""

from __future__ import annotations

from corral.tools import CorralError, InvalidInput, OperationFailed


class McpError(CorralError):
    """Base of the MCP manager's errors."""


class McpConfigInvalid(McpError, InvalidInput):
    """An MCP server name or setting is invalid; the message names it and says what to do."""


class McpConnectFailed(McpError, OperationFailed):
    """A server could not be started, reached or greeted; the supervisor reports it as a state."""


class McpStartupFailed(McpError, OperationFailed):
    """A server marked `required = true` did not start; the message says why."""


class McpUnavailable(McpError, OperationFailed):
    """A server is starting, restarting or failed, so it cannot answer a request now."""
