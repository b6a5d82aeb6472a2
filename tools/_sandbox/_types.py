"""The sandbox seam: what running a command answers, and the protocol every sandbox follows.

Production runs commands under bubblewrap (`_bwrap`); tests of code above the seam use the
recording twin (`_recording`). Neither knows about tools or approvals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .._permissions import PermissionProfile
from .._truncate import count_lines

TIMEOUT_EXIT_CODE = 124


@dataclass(frozen=True)
class CommandResult:
    """What a finished command left: exit code, merged stdout+stderr, duration, truncation.

    `output` holds the head and tail of the output within the run's budget, with Codex's marker
    where the middle was dropped; `truncated_bytes` counts the dropped bytes. A command killed at
    its timeout has `timed_out` set and exit code 124.
    """

    exit_code: int
    output: str = ""
    duration: float = 0.0
    timed_out: bool = False
    truncated_bytes: int = 0
    total_lines: int | None = None
    network_denials: tuple[str, ...] = ()
    """Hosts corral's proxy refused during the command (`host: reason`), when the network is
    restricted by domain."""

    @property
    def line_count(self) -> int:
        """Lines of the whole output, dropped ones included."""
        return self.total_lines if self.total_lines is not None else count_lines(self.output)


class Sandbox(Protocol):
    """Runs one command under a permission profile, bounded in time and in output."""

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        profile: PermissionProfile,
        timeout: float,  # noqa: ASYNC109 - the command's lifetime, enforced by killing it
        env: Mapping[str, str],
        output_budget: int,
    ) -> CommandResult:
        """Run `argv` in `cwd`. `env` adds variables to the sandbox's clean environment.

        Raises `SandboxUnavailable` when the profile needs a sandbox this machine cannot give.
        """
        ...
