"""Which of an agent's tools are offered to the model, derived from its profile and the host.

A tool the agent could only be refused costs a model call and invites attempts around it, so it
is not offered at all: no write tools for a read-only agent, no command tools where no sandbox can
confine them, no session tools where the run cannot own sessions. (Web search, a provider-run
tool, is offered only with network where the agent is assembled.) The answer depends only on the
profile's sandbox mode and on the host, never on write sets or ids, so siblings with the same
profile get the same tool list, in the same order (the prompt-cache rule).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from ._permissions import PermissionProfile, SandboxMode

WRITE_TOOLS = frozenset({"apply_patch"})
"""Tools whose only purpose is to change files: pointless under a read-only profile."""
SESSION_TOOLS = frozenset({"exec_command", "write_stdin"})
"""Tools whose commands outlive the call: they need a run that owns and stops sessions."""
COMMAND_TOOLS = frozenset({"shell", *SESSION_TOOLS})
"""Tools that run commands: they need a sandbox unless the profile is full access."""


@dataclass(frozen=True)
class HostAbilities:
    """What this host can do for tools: whether a sandbox can confine a command, and whether
    the run can own interactive command sessions (the local runtime can)."""

    sandbox: bool
    sessions: bool = False

    @classmethod
    def probe(cls, *, sessions: bool = False) -> HostAbilities:
        """This machine's abilities: bubblewrap on PATH means restricted commands can run."""
        return cls(sandbox=shutil.which("bwrap") is not None, sessions=sessions)


def offered_tool_names(
    names: Sequence[str], profile: PermissionProfile, host: HostAbilities
) -> tuple[str, ...]:
    """`names` without the tools `profile` or `host` rule out, in their given order."""
    withheld = withheld_tools(profile, host)
    return tuple(name for name in names if name not in withheld)


def withheld_tools(profile: PermissionProfile, host: HostAbilities) -> frozenset[str]:
    """The tool names an agent with `profile` on `host` is not offered."""
    withheld: set[str] = set()
    if profile.sandbox is SandboxMode.READ_ONLY:
        withheld |= WRITE_TOOLS
    if profile.sandbox is not SandboxMode.FULL_ACCESS and not host.sandbox:
        withheld |= COMMAND_TOOLS
    if not host.sessions:
        withheld |= SESSION_TOOLS
    return frozenset(withheld)
