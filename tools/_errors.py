"""The root of corral's error hierarchy, shared by every package.

`tools` is the lowest layer, so the roots live here and `agents` and `orchestrator` extend them::

    CorralError
    ├── InvalidInput            the caller's mistake (bad flags, config, files): says what to do
    │   └── PermissionDenied    a path or action outside the permission profile
    └── OperationFailed         a runtime failure: says what happened and what was kept
        └── SandboxUnavailable  a restricted profile needs bubblewrap and it is missing

Tool errors that the model should see are not exceptions: handlers return a failed `ToolOutput`.
"""

from __future__ import annotations


class CorralError(Exception):
    """Base of every error corral raises on purpose."""

    exit_code: int = 1


class InvalidInput(CorralError):
    """The caller asked for something invalid; the message says what and how to fix it."""

    exit_code = 2


class PermissionDenied(InvalidInput):
    """A path or action falls outside the active permission profile."""


class OperationFailed(CorralError):
    """Something failed while running; the message says what happened."""


class SandboxUnavailable(OperationFailed):
    """The sandbox a restricted profile requires cannot be set up on this machine."""
