"""Permission profiles: the single source of what an agent may touch.

The profile is data; enforcement lives in the tools (path checks here, the sandbox in `_sandbox`).
The prompt fragment that describes a profile is rendered elsewhere from the same object.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from ._domains import BadHost, DomainPolicy, intersect_allowed, normalize_pattern
from ._errors import PermissionDenied

HIDDEN_REASON = "it is inside corral's home (its journal, token and config), which agents never see"


class SandboxMode(StrEnum):
    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    FULL_ACCESS = "full-access"


class ApprovalPolicy(StrEnum):
    NEVER = "never"
    ON_REQUEST = "on-request"
    ON_FAILURE = "on-failure"
    UNTRUSTED = "untrusted"


PROTECTED_NAMES = (".git", ".corral", ".codex", ".agents")
"""Names that stay read-only at every depth inside writable roots: a repository's internals (its
hooks run on the host) and the config and skills the next run in that folder would read."""

_MODE_RANK = {SandboxMode.READ_ONLY: 0, SandboxMode.WORKSPACE_WRITE: 1, SandboxMode.FULL_ACCESS: 2}
# Strictest first: `never` denies every escalation outright, `untrusted` asks about most things.
_APPROVAL_STRICTNESS = {
    ApprovalPolicy.NEVER: 3,
    ApprovalPolicy.UNTRUSTED: 2,
    ApprovalPolicy.ON_REQUEST: 1,
    ApprovalPolicy.ON_FAILURE: 0,
}


def resolve_path(path: str | os.PathLike[str], *, cwd: Path) -> Path:
    """Resolve `path` against `cwd`, following `..` and every symlink that exists."""
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = cwd / candidate
    return Path(os.path.realpath(candidate))


def is_within(path: Path, roots: Iterable[Path]) -> bool:
    """Whether resolved `path` is one of `roots` or below one of them."""
    return any(path == root or path.is_relative_to(root) for root in roots)


class PermissionProfile(BaseModel):
    """What an agent may do: sandbox mode, writable roots, network, approval policy.

    `writable_roots` apply in `workspace-write` mode. `readable_roots` limit the file tools'
    reads (None: anywhere). Folders named in `PROTECTED_NAMES` inside writable roots stay
    read-only (`.git` becomes writable with `git_writable`). `hidden_roots` (corral's own home)
    can be neither read nor written in any mode, and the sandbox masks them.

    With `network` on, `allowed_domains` (None: no list) and `denied_domains` make the network
    restricted: commands reach only allowed, not denied, hosts, through corral's proxy.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    sandbox: SandboxMode = SandboxMode.READ_ONLY
    writable_roots: tuple[Path, ...] = ()
    readable_roots: tuple[Path, ...] | None = None
    network: bool = False
    allowed_domains: tuple[str, ...] | None = None
    denied_domains: tuple[str, ...] = ()
    approval: ApprovalPolicy = ApprovalPolicy.NEVER
    git_writable: bool = False
    hidden_roots: tuple[Path, ...] = ()

    @field_validator("writable_roots", "readable_roots", "hidden_roots")
    @classmethod
    def _resolve_roots(cls, roots: tuple[Path, ...] | None) -> tuple[Path, ...] | None:
        if roots is None:
            return None
        return tuple(sorted({Path(os.path.realpath(r)) for r in roots}))

    @field_validator("allowed_domains", "denied_domains")
    @classmethod
    def _canonical_domains(
        cls, patterns: tuple[str, ...] | None, info: ValidationInfo
    ) -> tuple[str, ...] | None:
        if patterns is None:
            return None
        allow_any = info.field_name == "allowed_domains"
        try:
            return tuple(sorted({normalize_pattern(p, allow_any=allow_any) for p in patterns}))
        except BadHost as exc:
            raise ValueError(f"{info.field_name}: {exc}") from exc

    @property
    def network_mode(self) -> Literal["off", "on", "restricted"]:
        """`restricted`: network only through the proxy, by host name."""
        if not self.network:
            return "off"
        return "restricted" if self.domain_policy is not None else "on"

    @property
    def domain_policy(self) -> DomainPolicy | None:
        """The host-name policy of a restricted network (None: no restriction by name)."""
        if self.allowed_domains is None and not self.denied_domains:
            return None
        allowed = ("*",) if self.allowed_domains is None else self.allowed_domains
        return DomainPolicy(allowed, self.denied_domains)

    @classmethod
    def for_workspace(
        cls,
        mode: SandboxMode | str,
        workspace: Path,
        *,
        network: bool = False,
        approval: ApprovalPolicy = ApprovalPolicy.NEVER,
    ) -> PermissionProfile:
        """The usual profile of an agent working in `workspace` under `mode`."""
        mode = SandboxMode(mode)
        writable = (workspace,) if mode is SandboxMode.WORKSPACE_WRITE else ()
        return cls(sandbox=mode, writable_roots=writable, network=network, approval=approval)

    # -- checks ---------------------------------------------------------------------------

    def can_write(self, resolved: Path) -> bool:
        if self.is_hidden(resolved):
            return False
        if self.sandbox is SandboxMode.FULL_ACCESS:
            return True
        if self.sandbox is SandboxMode.READ_ONLY:
            return False
        if not is_within(resolved, self.writable_roots):
            return False
        return self.protected_part(resolved) is None

    def can_read(self, resolved: Path) -> bool:
        if self.is_hidden(resolved):
            return False
        if self.sandbox is SandboxMode.FULL_ACCESS or self.readable_roots is None:
            return True
        return is_within(resolved, (*self.readable_roots, *self.writable_roots))

    def is_hidden(self, resolved: Path) -> bool:
        """Whether resolved `path` lies in corral's home (or another hidden root)."""
        return is_within(resolved, self.hidden_roots)

    def protected_part(self, resolved: Path) -> str | None:
        """The protected name that makes resolved `path` read-only inside its writable root."""
        protected = [n for n in PROTECTED_NAMES if not (n == ".git" and self.git_writable)]
        below = _parts_below_root(resolved, self.writable_roots)
        return next((part for part in below if part in protected), None)

    def check_write(self, path: str | os.PathLike[str], *, cwd: Path) -> Path:
        """Resolve `path` and return it if writable, else raise `PermissionDenied`."""
        resolved = resolve_path(path, cwd=cwd)
        if not self.can_write(resolved):
            raise PermissionDenied(
                f"writing {path} is not allowed: {self._write_refusal(resolved)}"
            )
        return resolved

    def check_read(self, path: str | os.PathLike[str], *, cwd: Path) -> Path:
        """Resolve `path` and return it if readable, else raise `PermissionDenied`."""
        resolved = resolve_path(path, cwd=cwd)
        if self.is_hidden(resolved):
            raise PermissionDenied(f"reading {path} is not allowed: {HIDDEN_REASON}")
        if not self.can_read(resolved):
            roots = ", ".join(
                sorted({str(r) for r in (*(self.readable_roots or ()), *self.writable_roots)})
            )
            raise PermissionDenied(f"reading {path} is not allowed: readable roots are {roots}")
        return resolved

    def _write_refusal(self, resolved: Path) -> str:
        if self.is_hidden(resolved):
            return HIDDEN_REASON
        if self.sandbox is SandboxMode.READ_ONLY:
            return "the sandbox is read-only"
        roots = ", ".join(str(r) for r in self.writable_roots) or "none"
        protected = (
            self.protected_part(resolved) if is_within(resolved, self.writable_roots) else None
        )
        names = protected or ", ".join(PROTECTED_NAMES)
        return f"the writable roots are {roots}; {names} folders inside them are read-only"

    # -- children -------------------------------------------------------------------------

    def intersect(self, requested: PermissionProfile) -> PermissionProfile:
        """The profile of a child that asked for `requested`: never wider than this one."""
        mode = min(self.sandbox, requested.sandbox, key=_MODE_RANK.__getitem__)
        return PermissionProfile(
            sandbox=mode,
            writable_roots=self._narrow_writable(mode, requested),
            readable_roots=_narrow_roots(self.readable_roots, requested.readable_roots),
            network=self.network and requested.network,
            allowed_domains=_narrow_domains(self.allowed_domains, requested.allowed_domains),
            denied_domains=(*self.denied_domains, *requested.denied_domains),
            approval=max(self.approval, requested.approval, key=_APPROVAL_STRICTNESS.__getitem__),
            git_writable=self.git_writable and requested.git_writable,
            hidden_roots=(*self.hidden_roots, *requested.hidden_roots),
        )

    def _narrow_writable(self, mode: SandboxMode, requested: PermissionProfile) -> tuple[Path, ...]:
        if mode is not SandboxMode.WORKSPACE_WRITE:
            return ()
        if self.sandbox is SandboxMode.FULL_ACCESS:
            return requested.writable_roots
        if requested.sandbox is SandboxMode.FULL_ACCESS:
            return self.writable_roots
        return tuple(r for r in requested.writable_roots if is_within(r, self.writable_roots))


def _narrow_roots(
    parent: tuple[Path, ...] | None, child: tuple[Path, ...] | None
) -> tuple[Path, ...] | None:
    if parent is None:
        return child
    if child is None:
        return parent
    return tuple(r for r in child if is_within(r, parent))


def _narrow_domains(
    parent: tuple[str, ...] | None, child: tuple[str, ...] | None
) -> tuple[str, ...] | None:
    if parent is None:
        return child
    if child is None:
        return parent
    return intersect_allowed(parent, child)


def _parts_below_root(path: Path, roots: Iterable[Path]) -> tuple[str, ...]:
    for root in roots:
        if path == root or path.is_relative_to(root):
            return path.relative_to(root).parts
    return path.parts
