"""The in-memory twin of the sandbox: records every call and answers scripted results.

For tests of code above the seam (the shell tool, approvals, agents) that need to see which
commands would run, under which profile, without starting a process.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._permissions import PermissionProfile
from ._types import CommandResult


@dataclass(frozen=True)
class SandboxCall:
    """One `run` the recording sandbox received."""

    argv: tuple[str, ...]
    cwd: Path
    profile: PermissionProfile
    timeout: float
    env: Mapping[str, str]
    output_budget: int


class RecordingSandbox:
    """Answers each run with the next scripted result (or raises it), then with `default`."""

    def __init__(
        self,
        results: Iterable[CommandResult | Exception] = (),
        *,
        default: CommandResult | None = None,
    ) -> None:
        self.calls: list[SandboxCall] = []
        self._script: deque[CommandResult | Exception] = deque(results)
        self._default = default if default is not None else CommandResult(exit_code=0)

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        profile: PermissionProfile,
        timeout: float,  # noqa: ASYNC109 - the Sandbox protocol's name
        env: Mapping[str, str],
        output_budget: int,
    ) -> CommandResult:
        self.calls.append(SandboxCall(tuple(argv), cwd, profile, timeout, dict(env), output_budget))
        answer = self._script.popleft() if self._script else self._default
        if isinstance(answer, Exception):
            raise answer
        return answer
