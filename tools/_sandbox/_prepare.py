"""Everything one confined run sets up on the host before bwrap starts, and undoes after.

The protected folders are found and the missing ones claimed as placeholders, the host's unix
sockets and toolchains are listed, the seccomp filter is handed over in a pipe, and the process
limit is made ready. It is blocking work (a bounded tree walk, `flock`), run in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import PermissionDenied, SandboxUnavailable
from .._permissions import HIDDEN_REASON, PermissionProfile, is_within
from ._bwrap_args import HostFacts, direct_network
from ._host import listening_sockets, toolchain_roots
from ._limits import ProcessLimit, process_limit
from ._placeholders import Placeholders
from ._protected import survey_protected
from ._seccomp import seccomp_supported, setid_filter


@dataclass
class Preparation:
    """The host side of one run; `release` undoes it (placeholders, cgroup, pipe)."""

    facts: HostFacts
    limit: ProcessLimit = field(default_factory=ProcessLimit)
    placeholders: Placeholders = field(default_factory=lambda: Placeholders(()))

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return () if self.facts.seccomp_fd is None else (self.facts.seccomp_fd,)

    def release(self) -> None:
        try:
            self.placeholders.release()
            self.limit.close()
        finally:
            if self.facts.seccomp_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self.facts.seccomp_fd)


def check_workdir(profile: PermissionProfile, cwd: Path) -> None:
    """Refuse a working folder the sandbox would hide from the command."""
    real = Path(os.path.realpath(cwd))
    if profile.is_hidden(real):
        raise PermissionDenied(f"the working directory {cwd} cannot be used: {HIDDEN_REASON}")
    readable = profile.readable_roots
    if readable is not None and not is_within(real, (*readable, *profile.writable_roots)):
        roots = ", ".join(str(r) for r in (*readable, *profile.writable_roots))
        raise PermissionDenied(
            f"the working directory {cwd} is outside the readable roots ({roots})"
        )


def prepare(
    profile: PermissionProfile, environment: Mapping[str, str], max_processes: int | None
) -> Preparation:
    """Set up the host side of one run; the caller must `release` it."""
    survey = survey_protected(profile)
    placeholders = Placeholders(survey.placeholders)
    placeholders.claim()
    try:
        facts = HostFacts(
            protected=list(dict.fromkeys([*survey.read_only, *survey.placeholders])),
            sockets=[] if direct_network(profile) else listening_sockets(),
            toolchains=toolchain_roots(environment) if profile.readable_roots is not None else [],
            seccomp_fd=_seccomp_pipe(),
        )
    except BaseException:
        placeholders.release()
        raise
    preparation = Preparation(facts, placeholders=placeholders)
    try:
        preparation.limit = process_limit(max_processes)
    except BaseException:
        preparation.release()
        raise
    return preparation


def _seccomp_pipe() -> int | None:
    """A pipe holding the setuid filter, for bwrap's `--seccomp`; None where not supported."""
    if not seccomp_supported():
        if os.geteuid() == 0:
            raise SandboxUnavailable(
                "running as root, the sandbox needs its seccomp filter against setuid files,"
                " which supports x86-64 and aarch64 only; run as an ordinary user"
            )
        return None
    program = setid_filter()
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: well within the pipe's buffer
    finally:
        os.close(write_fd)
    return read_fd
