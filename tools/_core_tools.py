"""The core tool set every agent starts from, in its one fixed order.

Order matters: it is part of every request's prefix, so it never depends on dict or set
iteration. Callers pick a subset by name; the order stays this one. The session tools
(`exec_command`, `write_stdin`) are known here but not in the default set: they are offered
only where the run turns them on (`[shell] unified_exec`) and can own sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._apply_patch_tool import apply_patch_tool
from ._approval import APPROVAL_TIMEOUT
from ._errors import InvalidInput
from ._exec_tools import EXEC_COMMAND, WRITE_STDIN, exec_command_tool, write_stdin_tool
from ._file_tools import list_dir_tool, read_file_tool
from ._grep import grep_tool
from ._plan import update_plan_tool
from ._registry import Tool, ToolRegistry
from ._shell import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    SHELL_TOOL_NAME,
    shell_tool,
)
from ._view_image import VIEW_IMAGE, view_image_tool

SESSION_TOOL_NAMES = (EXEC_COMMAND, WRITE_STDIN)


def core_tool_names() -> tuple[str, ...]:
    """The default tools, in the core order."""
    return tuple(n for n in known_tool_names() if n not in SESSION_TOOL_NAMES)


def known_tool_names() -> tuple[str, ...]:
    """Every tool `build_core_registry` can build, the session tools included."""
    return tuple(_factories(MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_TOKENS))


def with_session_tools(names: Sequence[str]) -> tuple[str, ...]:
    """`names` with the session tools right after `shell` (where Codex puts them), if it is
    there: they run commands exactly as it does, so they never come without it."""
    if SHELL_TOOL_NAME not in names:
        return tuple(names)
    rest = [n for n in names if n not in SESSION_TOOL_NAMES]
    at = rest.index(SHELL_TOOL_NAME) + 1
    return (*rest[:at], *SESSION_TOOL_NAMES, *rest[at:])


def build_core_registry(
    names: Sequence[str],
    *,
    max_timeout_ms: int = MAX_TIMEOUT_MS,
    default_timeout_ms: int = DEFAULT_TIMEOUT_MS,
    output_max_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    approval_timeout: float = APPROVAL_TIMEOUT,
    shell_env: Mapping[str, str] | None = None,
) -> ToolRegistry:
    """A registry of the named core tools, in the core order; unknown names are an error."""
    factories = _factories(
        max_timeout_ms, default_timeout_ms, output_max_tokens, approval_timeout, shell_env
    )
    unknown = sorted(set(names) - set(factories))
    if unknown:
        known = ", ".join(factories)
        raise InvalidInput(f"unknown tool(s) {', '.join(unknown)}; core tools are {known}")
    wanted = set(names)
    return ToolRegistry(make() for name, make in factories.items() if name in wanted)


def _factories(
    max_timeout_ms: int,
    default_timeout_ms: int,
    output_max_tokens: int,
    approval_timeout: float = APPROVAL_TIMEOUT,
    shell_env: Mapping[str, str] | None = None,
) -> dict[str, Callable[[], Tool[Any]]]:
    return {
        "shell": lambda: shell_tool(
            max_timeout_ms=max_timeout_ms,
            default_timeout_ms=default_timeout_ms,
            max_output_tokens=output_max_tokens,
            approval_timeout=approval_timeout,
            env=shell_env,
        ),
        EXEC_COMMAND: lambda: exec_command_tool(
            max_output_tokens=output_max_tokens, approval_timeout=approval_timeout
        ),
        WRITE_STDIN: lambda: write_stdin_tool(max_output_tokens=output_max_tokens),
        "read_file": read_file_tool,
        "list_dir": list_dir_tool,
        "grep": grep_tool,
        "apply_patch": apply_patch_tool,
        "update_plan": update_plan_tool,
        VIEW_IMAGE: view_image_tool,
    }
