"""The production sandbox: commands run under bubblewrap, confined to the permission profile.

What the sandbox looks like (read-only root, writable roots, private /tmp, no network, new pid
namespace, no capabilities, clean environment) is `_bwrap_args`; what the host must set up first
(protected placeholders, seccomp filter, process limit) is `_prepare`; this module runs it, tells a
sandbox that could not be built from a command that failed, and stops it cleanly. `full-access`
runs the command directly. Where bubblewrap is missing or cannot set up namespaces, a restricted
profile raises `SandboxUnavailable`: a command never runs unconfined by accident.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from .._domains import DomainPolicy
from .._errors import InvalidInput, SandboxUnavailable
from .._netproxy import PROXY_ENV, Resolver, open_proxy_gate, system_resolver
from .._permissions import PermissionProfile, SandboxMode
from ._bwrap_args import bwrap_options
from ._env import command_environment
from ._interactive import InteractiveProcess, start_interactive
from ._limits import DEFAULT_MAX_PROCESSES
from ._prepare import Preparation, check_workdir, prepare
from ._process import ProcessOutcome, run_process
from ._status_pipe import StatusPipe
from ._types import TIMEOUT_EXIT_CODE, CommandResult

# How long undoing a run's host setup (placeholders, cgroup) may take after it ended.
_RELEASE_TIMEOUT = 5.0
_INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap) or run with full access"


class BubblewrapSandbox:
    """Runs commands under `bwrap`; `bwrap` names the binary (looked up on PATH if bare).

    `host_env` is where allow-listed variables such as PATH and HOME come from (default: this
    process's environment, read at each run). `max_processes` caps the processes and threads of
    one command (None: no cap). `resolver` is what corral's proxy looks host names up with, for a
    profile whose network is restricted by domain (tests map names to loopback with it).
    """

    def __init__(
        self,
        bwrap: str | os.PathLike[str] = "bwrap",
        *,
        host_env: Mapping[str, str] | None = None,
        max_processes: int | None = DEFAULT_MAX_PROCESSES,
        resolver: Resolver = system_resolver,
    ) -> None:
        self._requested = os.fspath(bwrap)
        self._bwrap = shutil.which(self._requested)
        self._host_env = host_env
        self._max_processes = max_processes
        self._resolver = resolver

    @property
    def available(self) -> bool:
        """Whether the bubblewrap binary was found."""
        return self._bwrap is not None

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
        if not argv or not argv[0]:
            raise InvalidInput("the command is empty: give a program and its arguments")
        if not await anyio.Path(cwd).is_dir():
            raise InvalidInput(f"the working directory {cwd} does not exist")
        confined = profile.sandbox is not SandboxMode.FULL_ACCESS
        host = os.environ if self._host_env is None else self._host_env
        environment = command_environment(host, env, sandboxed=confined, network=profile.network)
        if not confined:
            outcome = await run_process(
                argv, cwd=cwd, env=environment, time_limit=timeout, output_budget=output_budget
            )
            return _command_result(outcome)
        return await self._run_confined(argv, cwd, profile, environment, timeout, output_budget)

    async def _run_confined(
        self,
        argv: Sequence[str],
        cwd: Path,
        profile: PermissionProfile,
        environment: Mapping[str, str],
        time_limit: float,
        output_budget: int,
    ) -> CommandResult:
        bwrap = self._require_bwrap(profile)
        check_workdir(profile, cwd)
        policy = profile.domain_policy if profile.network else None
        run = _Confined(bwrap, cwd, profile, time_limit, output_budget, proxy_dir=None)
        if policy is None:
            return await self._prepared(run, argv, environment)
        return await self._behind_proxy(policy, run, argv, environment)

    async def _behind_proxy(
        self,
        policy: DomainPolicy,
        run: _Confined,
        argv: Sequence[str],
        environment: Mapping[str, str],
    ) -> CommandResult:
        """Run with no route out but corral's proxy, which decides by host name."""
        async with open_proxy_gate(policy, self._resolver) as gate:
            run = dataclasses.replace(run, proxy_dir=gate.folder)
            result = await self._prepared(run, gate.wrap(argv), {**environment, **PROXY_ENV})
        return dataclasses.replace(result, network_denials=gate.denials)

    async def _prepared(
        self, run: _Confined, argv: Sequence[str], environment: Mapping[str, str]
    ) -> CommandResult:
        setup = functools.partial(prepare, run.profile, environment, self._max_processes)
        prepared = await anyio.to_thread.run_sync(setup)
        try:
            return await _run_bwrap(run, argv, environment, prepared)
        finally:
            with anyio.move_on_after(_RELEASE_TIMEOUT, shield=True):
                await anyio.to_thread.run_sync(prepared.release)

    async def start_interactive(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        profile: PermissionProfile,
        env: Mapping[str, str],
    ) -> InteractiveProcess:
        """Start a long-lived command on a pty, confined as `run` confines it (`_interactive`)."""
        confined = profile.sandbox is not SandboxMode.FULL_ACCESS
        host = os.environ if self._host_env is None else self._host_env
        environment = command_environment(host, env, sandboxed=confined, network=profile.network)
        bwrap = self._require_bwrap(profile) if confined else ""
        return await start_interactive(
            argv,
            cwd=cwd,
            profile=profile,
            environment=environment,
            bwrap=bwrap,
            max_processes=self._max_processes,
        )

    def _require_bwrap(self, profile: PermissionProfile) -> str:
        if self._bwrap is None:
            raise SandboxUnavailable(
                f"the {profile.sandbox} sandbox needs bubblewrap, and {self._requested!r} was not"
                f" found; {_INSTALL_HINT}. The command was not run."
            )
        return self._bwrap


@dataclass(frozen=True)
class _Confined:
    """What one confined run is, besides its command and environment."""

    bwrap: str
    cwd: Path
    profile: PermissionProfile
    time_limit: float
    output_budget: int
    proxy_dir: Path | None


async def _run_bwrap(
    run: _Confined, argv: Sequence[str], environment: Mapping[str, str], prepared: Preparation
) -> CommandResult:
    status = StatusPipe()
    try:
        options = bwrap_options(
            run.profile,
            run.cwd,
            environment,
            status_fd=status.write_fd,
            facts=prepared.facts,
            proxy_dir=run.proxy_dir,
        )
        limit = prepared.limit
        outcome = await run_process(
            [*limit.outer, run.bwrap, *options, "--", *limit.inner, *argv],
            cwd=run.cwd,
            env=environment,
            time_limit=run.time_limit,
            output_budget=run.output_budget,
            pass_fds=(status.write_fd, *prepared.pass_fds),
            stop=status.stop_sandbox,
        )
        started = status.command_started()
    finally:
        status.close()
    if not started and not outcome.timed_out:
        return _setup_failure(outcome)
    return _command_result(outcome)


def _setup_failure(outcome: ProcessOutcome) -> CommandResult:
    """bwrap exited before the command ran: a missing program, or a sandbox it cannot build."""
    message = outcome.output.text().strip()
    if message.startswith("bwrap: execvp "):
        reason = message.removeprefix("bwrap: execvp ")
        code = 127 if "No such file" in reason else 126
        return CommandResult(exit_code=code, output=reason + "\n", duration=outcome.duration)
    detail = message or f"bwrap exited with code {outcome.returncode} before the command started"
    raise SandboxUnavailable(
        f"bubblewrap could not set up the sandbox: {detail}. The command was not run; on hosts"
        " that forbid unprivileged namespaces, allow them or run with full access."
    )


def _command_result(outcome: ProcessOutcome) -> CommandResult:
    code = outcome.returncode
    if code is None:
        code = TIMEOUT_EXIT_CODE
    elif code < 0:
        code = 128 - code  # killed by a signal: report it the way shells do
    buffer = outcome.output
    return CommandResult(
        exit_code=code,
        output=buffer.text(),
        duration=outcome.duration,
        timed_out=outcome.timed_out,
        truncated_bytes=buffer.dropped_bytes,
        total_lines=buffer.total_lines,
    )
