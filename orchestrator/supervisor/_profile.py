"""A worker's permission profile, derived from its parent's and what the spawn asked for.

The result is never wider than the parent's: a wider sandbox mode is narrowed silently, while a
write set the parent could not write itself is refused, so a supervisor never believes a worker
may write where it cannot. Enforcement stays in `tools`; this only computes the profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from corral.tools import PermissionProfile, SandboxMode, check_domain_patterns, resolve_path

from .._run import SpawnRefused

_WIDTH = (SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS)
EVERYWHERE = Path("/")


def child_profile(
    parent: PermissionProfile,
    *,
    cwd: Path,
    sandbox: SandboxMode | None = None,
    write_set: Sequence[str] = (),
    allowed_domains: Sequence[str] | None = None,
) -> PermissionProfile:
    """The profile of a worker that asked for `sandbox` (default: the parent's) and `write_set`.

    A write set (paths resolved against `cwd`) confines the worker to those paths in
    workspace-write mode; without one, a workspace-write worker gets the parent's writable roots
    (or `cwd` under a full-access parent).
    """
    mode = _narrower(sandbox or parent.sandbox, parent.sandbox)
    paths = tuple(resolve_path(p, cwd=cwd) for p in write_set)
    if paths:
        _check_write_set(parent, mode, paths)
        mode = SandboxMode.WORKSPACE_WRITE
    requested = PermissionProfile(
        sandbox=mode,
        writable_roots=paths or _default_roots(parent, mode, cwd),
        readable_roots=parent.readable_roots,
        network=parent.network,
        allowed_domains=_domains(allowed_domains),
        approval=parent.approval,
        git_writable=parent.git_writable,
    )
    return parent.intersect(requested)


def _domains(patterns: Sequence[str] | None) -> tuple[str, ...] | None:
    if patterns is None:
        return None
    try:
        check_domain_patterns(tuple(patterns), allow_any=True)
    except ValueError as exc:
        raise SpawnRefused(f"allowed_domains: {exc}") from exc
    return tuple(patterns)


def write_set_of(profile: PermissionProfile) -> tuple[Path, ...]:
    """Where an agent with `profile` may write, as shown to it and to its siblings."""
    if profile.sandbox is SandboxMode.FULL_ACCESS:
        return (EVERYWHERE,)
    if profile.sandbox is SandboxMode.WORKSPACE_WRITE:
        return profile.writable_roots
    return ()


def _narrower(a: SandboxMode, b: SandboxMode) -> SandboxMode:
    return min(a, b, key=_WIDTH.index)


def _default_roots(parent: PermissionProfile, mode: SandboxMode, cwd: Path) -> tuple[Path, ...]:
    if mode is not SandboxMode.WORKSPACE_WRITE:
        return ()
    if parent.sandbox is SandboxMode.WORKSPACE_WRITE:
        return parent.writable_roots
    return (cwd,)


def _check_write_set(parent: PermissionProfile, mode: SandboxMode, paths: tuple[Path, ...]) -> None:
    if parent.sandbox is SandboxMode.READ_ONLY:
        raise SpawnRefused(
            "cannot give this worker a write set: your own sandbox is read-only, so no worker "
            "of yours can write; spawn it without write_set"
        )
    if mode is SandboxMode.READ_ONLY:
        raise SpawnRefused(
            "a write set needs sandbox workspace-write, but read-only was asked for; "
            "drop write_set or ask for workspace-write"
        )
    outside = [str(p) for p in paths if not parent.can_write(p)]
    if outside:
        roots = ", ".join(str(r) for r in parent.writable_roots) or "none"
        git = "" if parent.git_writable else " (.git folders inside them stay read-only)"
        raise SpawnRefused(
            f"write set outside your writable roots: {', '.join(outside)}; a worker may write "
            f"only where you may, and your writable roots are {roots}{git}"
        )
