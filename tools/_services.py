"""`ToolServices`: the optional shared components a tool may use, typed.

`tools` stays independent of who provides them: a field left None means the tool's own default
(bubblewrap for the sandbox, deny-all for the approver, no observer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._approval import ApprovalObserver, Approver
from ._exec_sessions import ExecSessions
from ._sandbox import Sandbox

if TYPE_CHECKING:
    from ._user_hooks._run import HookRunner


@dataclass(frozen=True)
class ToolServices:
    """What a run hands every tool call of its agents, beside the working directory."""

    sandbox: Sandbox | None = None
    """Where shell commands run; None: bubblewrap."""
    approver: Approver | None = None
    """Who answers escalations and untrusted commands; None: nobody (every ask is denied)."""
    approval_observer: ApprovalObserver | None = None
    """Told of each approval asked and how long its answer took (tracing)."""
    hooks: HookRunner | None = None
    """The user's hooks (`[hooks]`); None: none run."""
    exec_sessions: ExecSessions | None = None
    """The run's interactive command sessions (`exec_command`); None: not offered here."""
