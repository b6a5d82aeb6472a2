"""Renders a `PermissionProfile` as the `<permissions instructions>` developer fragment.

The profile is the single source: enforcement lives in `tools`, and this text only tells the
model what that enforcement will do. The prose is package data under
`agents/prompts/permissions/`; this module picks the templates and fills their slots.
"""

from __future__ import annotations

from pathlib import Path

from corral.tools._permissions import ApprovalPolicy, PermissionProfile, SandboxMode

from ._fragments import PERMISSIONS
from ._prompt_files import read_prompt

_SANDBOX_FILES = {
    SandboxMode.READ_ONLY: "read_only.md",
    SandboxMode.WORKSPACE_WRITE: "workspace_write.md",
    SandboxMode.FULL_ACCESS: "full_access.md",
}
_APPROVAL_FILES = {
    ApprovalPolicy.NEVER: "never.md",
    ApprovalPolicy.ON_REQUEST: "on_request.md",
    ApprovalPolicy.ON_FAILURE: "on_failure.md",
    ApprovalPolicy.UNTRUSTED: "untrusted.md",
}


def render_permissions(profile: PermissionProfile) -> str:
    """The full fragment: sandbox section, approval section, then the roots the profile names."""
    sections = [
        _sandbox_section(profile),
        read_prompt("permissions", "approval", _APPROVAL_FILES[profile.approval]),
        *_roots_sections(profile),
        *_network_sections(profile),
    ]
    return PERMISSIONS.render("\n" + "\n\n".join(sections) + "\n")


def _sandbox_section(profile: PermissionProfile) -> str:
    template = read_prompt("permissions", "sandbox", _SANDBOX_FILES[profile.sandbox])
    return template.replace("{{network_access}}", "enabled" if profile.network else "restricted")


def _roots_sections(profile: PermissionProfile) -> list[str]:
    if profile.sandbox is SandboxMode.FULL_ACCESS:
        return []
    sections = []
    if profile.sandbox is SandboxMode.WORKSPACE_WRITE:
        sections.append(writable_roots_sentence(profile.writable_roots, profile.git_writable))
    if profile.readable_roots is not None:
        readable = (*profile.readable_roots, *profile.writable_roots)
        sections.append(f"The file tools read only inside {_join(readable)}.")
    return sections


def _network_sections(profile: PermissionProfile) -> list[str]:
    """How a network restricted by domain works, so the model neither fights nor bypasses it."""
    if profile.network_mode != "restricted" or profile.sandbox is SandboxMode.FULL_ACCESS:
        return []
    allowed = profile.allowed_domains
    reach = "any host" if allowed is None else ", ".join(f"`{d}`" for d in allowed) or "no host"
    text = (
        "Network access goes only through corral's HTTP(S) proxy, which decides by host name:"
        f" commands may reach {reach}"
    )
    if profile.denied_domains:
        text += ", except " + ", ".join(f"`{d}`" for d in profile.denied_domains)
    return [
        text + ". The proxy is set in HTTP_PROXY, HTTPS_PROXY and ALL_PROXY; there is no direct"
        " route out, and a refused host answers 403. Other hosts need the user's configuration"
        " (`[network] allowed_domains`)."
    ]


def writable_roots_sentence(roots: tuple[Path, ...], git_writable: bool = True) -> str:
    """One sentence naming the writable roots (singular or plural), plus the `.git` rule."""
    if not roots:
        return "There are no writable roots, so every write will fail."
    if len(roots) == 1:
        sentence, inside = f"The writable root is `{roots[0]}`.", "it"
    else:
        sentence, inside = f"The writable roots are {_join(roots)}.", "them"
    if not git_writable:
        sentence += f" `.git` folders inside {inside} stay read-only."
    return sentence


def _join(paths: tuple[Path, ...]) -> str:
    return ", ".join(f"`{path}`" for path in paths) or "no folder"
