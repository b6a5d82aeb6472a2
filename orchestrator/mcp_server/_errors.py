"""The MCP server's errors, under corral's one hierarchy.

CorralError (tools)
├── InvalidInput
│   ├── McpServerOptionsError   `corral mcp-server` was started with options it cannot honour
│   └── ToolInputRefused        a tool call's arguments were refused (shown to the client as a
│       │                       tool error, never a protocol error)
│       └── ItemsFileRefused    `items_file` is outside the server's working folder, or unreadable
└── OperationFailed             (the run manager's: a full queue, a journal that failed)
"""

from __future__ import annotations

from corral.tools import InvalidInput


class McpServerOptionsError(InvalidInput):
    """`corral mcp-server` was started with options it cannot honour."""


class ToolInputRefused(InvalidInput):
    """A tool call asked for something the server will not do; the message says what to do."""


class ItemsFileRefused(ToolInputRefused):
    """The `items_file` a call named cannot be read: outside the working folder, or not items."""
