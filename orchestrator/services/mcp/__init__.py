"""The MCP manager: every configured MCP server, shared by all agents of the process.

Servers are started concurrently, their tools exposed as `mcp__<server>__<tool>` corral tools,
their lists refetched when they announce a change, and a server that stops is restarted.
"""

from ._connection import ProtocolMode as ProtocolMode
from ._errors import McpConfigInvalid as McpConfigInvalid
from ._errors import McpConnectFailed as McpConnectFailed
from ._errors import McpError as McpError
from ._errors import McpStartupFailed as McpStartupFailed
from ._errors import McpUnavailable as McpUnavailable
from ._manager import McpArguments as McpArguments
from ._manager import McpManager as McpManager
from ._manager import McpServerStatus as McpServerStatus
from ._manager import OfferedTool as OfferedTool
from ._manager import TraceContext as TraceContext
from ._manager import no_trace_context as no_trace_context
from ._manager import open_mcp_manager as open_mcp_manager
from ._names import MAX_NAME_BYTES as MAX_NAME_BYTES
from ._names import NameBook as NameBook
from ._names import qualify as qualify
from ._names import sanitize_part as sanitize_part
from ._resources import RESOURCE_TOOL_NAMES as RESOURCE_TOOL_NAMES
from ._resources import resource_tools as resource_tools
from ._results import result_to_output as result_to_output
from ._schema import sanitize_input_schema as sanitize_input_schema
from ._server import RestartPolicy as RestartPolicy
from ._server import ServerState as ServerState

__all__ = [
    "MAX_NAME_BYTES",
    "RESOURCE_TOOL_NAMES",
    "McpArguments",
    "McpConfigInvalid",
    "McpConnectFailed",
    "McpError",
    "McpManager",
    "McpServerStatus",
    "McpStartupFailed",
    "McpUnavailable",
    "NameBook",
    "OfferedTool",
    "ProtocolMode",
    "RestartPolicy",
    "ServerState",
    "TraceContext",
    "no_trace_context",
    "open_mcp_manager",
    "qualify",
    "resource_tools",
    "result_to_output",
    "sanitize_input_schema",
    "sanitize_part",
]
