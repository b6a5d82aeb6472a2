"""Tools an agent acts with, and the permission profiles that bound them.

Knows nothing of agents: a tool is an argument model, a handler and two flags; the registry
renders specs for both model APIs and turns every bad call into an error the model can read.
"""

from ._errors import CorralError as CorralError
from ._errors import InvalidInput as InvalidInput
from ._errors import OperationFailed as OperationFailed
from ._errors import PermissionDenied as PermissionDenied
from ._errors import SandboxUnavailable as SandboxUnavailable
from ._parallel import run_tool_calls as run_tool_calls
from ._permissions import ApprovalPolicy as ApprovalPolicy
from ._permissions import PermissionProfile as PermissionProfile
from ._permissions import SandboxMode as SandboxMode
from ._permissions import is_within as is_within
from ._permissions import resolve_path as resolve_path
from ._registry import Tool as Tool
from ._registry import ToolCall as ToolCall
from ._registry import ToolContext as ToolContext
from ._registry import ToolEvents as ToolEvents
from ._registry import ToolOutput as ToolOutput
from ._registry import ToolRegistry as ToolRegistry
from ._schema import strict_json_schema as strict_json_schema

__all__ = [
    "ApprovalPolicy",
    "CorralError",
    "InvalidInput",
    "OperationFailed",
    "PermissionDenied",
    "PermissionProfile",
    "SandboxMode",
    "SandboxUnavailable",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolEvents",
    "ToolOutput",
    "ToolRegistry",
    "is_within",
    "resolve_path",
    "run_tool_calls",
    "strict_json_schema",
]
