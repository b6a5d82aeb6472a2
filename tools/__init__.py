"""Tools an agent acts with, and the permission profiles that bound them.

Knows nothing of agents: a tool is an argument model, a handler and two flags; the registry
renders specs for both model APIs and turns every bad call into an error the model can read.
Shell commands run under the sandbox; file tools resolve every path before checking it."""

from ._apply_patch_tool import apply_patch_tool as apply_patch_tool
from ._approval import APPROVAL_TIMEOUT as APPROVAL_TIMEOUT
from ._approval import ApprovalDecision as ApprovalDecision
from ._approval import ApprovalKind as ApprovalKind
from ._approval import ApprovalRequest as ApprovalRequest
from ._approval import Approver as Approver
from ._approval import CallbackApprover as CallbackApprover
from ._approval import DenyAllApprover as DenyAllApprover
from ._approval import request_approval as request_approval
from ._core_tools import SESSION_TOOL_NAMES as SESSION_TOOL_NAMES
from ._core_tools import build_core_registry as build_core_registry
from ._core_tools import core_tool_names as core_tool_names
from ._core_tools import known_tool_names as known_tool_names
from ._core_tools import with_session_tools as with_session_tools
from ._domains import DomainPolicy as DomainPolicy
from ._domains import check_domain_patterns as check_domain_patterns
from ._errors import CorralError as CorralError
from ._errors import InvalidInput as InvalidInput
from ._errors import OperationFailed as OperationFailed
from ._errors import PermissionDenied as PermissionDenied
from ._errors import SandboxUnavailable as SandboxUnavailable
from ._exec_sessions import MAX_SESSIONS as MAX_SESSIONS
from ._exec_sessions import MAX_SESSIONS_PER_AGENT as MAX_SESSIONS_PER_AGENT
from ._exec_sessions import ExecSession as ExecSession
from ._exec_sessions import ExecSessions as ExecSessions
from ._exec_sessions import SessionQuota as SessionQuota
from ._exec_sessions import open_exec_sessions as open_exec_sessions
from ._exec_tools import ExecCommandArgs as ExecCommandArgs
from ._exec_tools import WriteStdinArgs as WriteStdinArgs
from ._exec_tools import exec_command_tool as exec_command_tool
from ._exec_tools import write_stdin_tool as write_stdin_tool
from ._file_tools import file_tools as file_tools
from ._file_tools import list_dir_tool as list_dir_tool
from ._file_tools import read_file_tool as read_file_tool
from ._fs_common import FileToolError as FileToolError
from ._fs_common import SearchTimedOut as SearchTimedOut
from ._function_tool import function_tool as function_tool
from ._grep import grep_tool as grep_tool
from ._hook_model import HookEvent as HookEvent
from ._hook_model import HookRun as HookRun
from ._hook_model import HooksConfig as HooksConfig
from ._offered import HostAbilities as HostAbilities
from ._offered import offered_tool_names as offered_tool_names
from ._offered import withheld_tools as withheld_tools
from ._parallel import first_batch as first_batch
from ._parallel import run_tool_calls as run_tool_calls
from ._patch import PatchConflict as PatchConflict
from ._patch import PatchError as PatchError
from ._patch import PatchParseError as PatchParseError
from ._patch import PatchResult as PatchResult
from ._patch import PatchWriteFailed as PatchWriteFailed
from ._patch import apply_patch as apply_patch
from ._patch import apply_patch_text as apply_patch_text
from ._permissions import PROTECTED_NAMES as PROTECTED_NAMES
from ._permissions import ApprovalPolicy as ApprovalPolicy
from ._permissions import PermissionProfile as PermissionProfile
from ._permissions import SandboxMode as SandboxMode
from ._permissions import is_within as is_within
from ._permissions import resolve_path as resolve_path
from ._plan import update_plan_tool as update_plan_tool
from ._redact import REDACTED as REDACTED
from ._redact import Redactor as Redactor
from ._redact import is_secret_name as is_secret_name
from ._registry import Tool as Tool
from ._registry import ToolCall as ToolCall
from ._registry import ToolContext as ToolContext
from ._registry import ToolEvents as ToolEvents
from ._registry import ToolOutput as ToolOutput
from ._registry import ToolRegistry as ToolRegistry
from ._safe_commands import is_known_safe_command as is_known_safe_command
from ._safe_commands import looks_like_sandbox_denial as looks_like_sandbox_denial
from ._sandbox import TIMEOUT_EXIT_CODE as TIMEOUT_EXIT_CODE
from ._sandbox import BubblewrapSandbox as BubblewrapSandbox
from ._sandbox import CommandResult as CommandResult
from ._sandbox import InteractiveProcess as InteractiveProcess
from ._sandbox import RecordingSandbox as RecordingSandbox
from ._sandbox import Sandbox as Sandbox
from ._sandbox import SandboxCall as SandboxCall
from ._schema import strict_json_schema as strict_json_schema
from ._services import ToolServices as ToolServices
from ._shell import ShellArgs as ShellArgs
from ._shell import format_command_output as format_command_output
from ._shell import shell_tool as shell_tool
from ._truncate import HeadTailBuffer as HeadTailBuffer
from ._truncate import format_truncated_output as format_truncated_output
from ._truncate import truncate_middle as truncate_middle
from ._user_hooks import HookRunner as HookRunner
from ._user_hooks import approve_with_hooks as approve_with_hooks
from ._view_image import MAX_IMAGE_BYTES as MAX_IMAGE_BYTES
from ._view_image import view_image_tool as view_image_tool

__all__ = [
    "APPROVAL_TIMEOUT",
    "MAX_IMAGE_BYTES",
    "MAX_SESSIONS",
    "MAX_SESSIONS_PER_AGENT",
    "PROTECTED_NAMES",
    "REDACTED",
    "SESSION_TOOL_NAMES",
    "TIMEOUT_EXIT_CODE",
    "ApprovalDecision",
    "ApprovalKind",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "BubblewrapSandbox",
    "CallbackApprover",
    "CommandResult",
    "CorralError",
    "DenyAllApprover",
    "DomainPolicy",
    "ExecCommandArgs",
    "ExecSession",
    "ExecSessions",
    "FileToolError",
    "HeadTailBuffer",
    "HookEvent",
    "HookRun",
    "HookRunner",
    "HooksConfig",
    "HostAbilities",
    "InteractiveProcess",
    "InvalidInput",
    "OperationFailed",
    "PatchConflict",
    "PatchError",
    "PatchParseError",
    "PatchResult",
    "PatchWriteFailed",
    "PermissionDenied",
    "PermissionProfile",
    "RecordingSandbox",
    "Redactor",
    "Sandbox",
    "SandboxCall",
    "SandboxMode",
    "SandboxUnavailable",
    "SearchTimedOut",
    "SessionQuota",
    "ShellArgs",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolEvents",
    "ToolOutput",
    "ToolRegistry",
    "ToolServices",
    "WriteStdinArgs",
    "apply_patch",
    "apply_patch_text",
    "apply_patch_tool",
    "approve_with_hooks",
    "build_core_registry",
    "check_domain_patterns",
    "core_tool_names",
    "exec_command_tool",
    "file_tools",
    "first_batch",
    "format_command_output",
    "format_truncated_output",
    "function_tool",
    "grep_tool",
    "is_known_safe_command",
    "is_secret_name",
    "is_within",
    "known_tool_names",
    "list_dir_tool",
    "looks_like_sandbox_denial",
    "offered_tool_names",
    "open_exec_sessions",
    "read_file_tool",
    "request_approval",
    "resolve_path",
    "run_tool_calls",
    "shell_tool",
    "strict_json_schema",
    "truncate_middle",
    "update_plan_tool",
    "view_image_tool",
    "with_session_tools",
    "withheld_tools",
    "write_stdin_tool",
]
