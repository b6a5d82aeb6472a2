"""The pipeline's own run of `--check`: in a worktree, under the sandbox, read-only.

Whether a worker passed is decided here, never by what the model reported. The command is run by
`bash -c` like a string command of the `shell` tool, in a read-only sandbox that can see only the
system, the worktree and the repository's git data; no check given counts as passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from corral.tools import PermissionProfile, Sandbox, SandboxMode

CHECK_TIMEOUT_S = 600.0
"""How long one run of the check may take before it is killed and counted as failed."""
CHECK_OUTPUT_BUDGET = 64 * 1024
TAIL_LINES = 20
NOT_FOUND_EXIT = 127
"""bash's exit code for a command it cannot find: here, one that is not inside the sandbox."""
CHECK_WORLD = (
    "the check runs read-only in the sandbox, which sees the system folders (/usr, /etc, /lib*, "
    "/opt, ...), the toolchains on PATH, the worktree (a copy of the repository at HEAD) and its "
    "git data, and nothing else: not /tmp, not your home folder, not a virtual environment "
    "outside the repository"
)


@dataclass(frozen=True)
class CheckResult:
    """One run of the check (or none, when no check was given)."""

    command: str | None
    exit_code: int | None = None
    output: str = ""
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.command is None or (self.exit_code == 0 and not self.timed_out)

    @property
    def not_found(self) -> bool:
        """Whether the check could not start: a program it names is not in the sandbox."""
        return self.exit_code == NOT_FOUND_EXIT and not self.timed_out

    def describe(self) -> str:
        """`passed (exit 0)`, `failed (exit 1)`, `timed out` or `none given`."""
        if self.command is None:
            return "none given"
        if self.timed_out:
            return "timed out"
        if self.not_found:
            return f"a command it runs was not found in the sandbox (exit {NOT_FOUND_EXIT})"
        return f"{'passed' if self.passed else 'failed'} (exit {self.exit_code})"

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last lines of the check's output, where failures are usually reported."""
        return "\n".join(self.output.rstrip().splitlines()[-lines:])

    def to_json(self) -> dict[str, object]:
        return {
            "command": self.command,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "output_tail": self.tail(),
        }


class CheckRunner:
    """Runs one check command in worktrees; `repo_git_dir` stays readable so git commands work."""

    def __init__(
        self,
        command: str | None,
        sandbox: Sandbox,
        *,
        repo_git_dir: Path,
        network: bool = False,
        allowed_domains: tuple[str, ...] | None = None,
        denied_domains: tuple[str, ...] = (),
        timeout: float = CHECK_TIMEOUT_S,
    ) -> None:
        self.command = command
        self._sandbox = sandbox
        self._git_dir = repo_git_dir
        self._network = network
        self._domains = (allowed_domains, denied_domains)
        self._timeout = timeout

    async def run(self, worktree: Path) -> CheckResult:
        if self.command is None:
            return CheckResult(None)
        profile = PermissionProfile(
            sandbox=SandboxMode.READ_ONLY,
            readable_roots=(worktree, self._git_dir),
            network=self._network,
            allowed_domains=self._domains[0],
            denied_domains=self._domains[1],
        )
        done = await self._sandbox.run(
            ["bash", "-c", self.command],
            cwd=worktree,
            profile=profile,
            timeout=self._timeout,
            env={},
            output_budget=CHECK_OUTPUT_BUDGET,
        )
        return CheckResult(self.command, done.exit_code, done.output, done.timed_out)
