"""`corral mcp-server`: corral's runs offered to any MCP client (Claude Code, Codex, corral).

Tools start fan-outs, reviews, triages and single agents, and follow, page through and cancel
them; a run's state, results and report are resources. Runs go through the HTTP service's run
manager, so the same `[service]` allow-lists bound them and they land in the same journal.
"""

from ._errors import ItemsFileRefused as ItemsFileRefused
from ._errors import McpServerOptionsError as McpServerOptionsError
from ._errors import ToolInputRefused as ToolInputRefused
from ._server import McpServerOptions as McpServerOptions
from ._server import build_server as build_server
from ._server import open_mcp_server as open_mcp_server
from ._server import server_policy as server_policy
from ._tools import TOOLS as TOOLS
from ._transports import MCP_PATH as MCP_PATH
from ._transports import serve_http as serve_http
from ._transports import serve_stdio as serve_stdio

__all__ = [
    "MCP_PATH",
    "TOOLS",
    "ItemsFileRefused",
    "McpServerOptions",
    "McpServerOptionsError",
    "ToolInputRefused",
    "build_server",
    "open_mcp_server",
    "serve_http",
    "serve_stdio",
    "server_policy",
]
